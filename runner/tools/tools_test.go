package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

func call(t *testing.T, tool *Tool, args string) *Result {
	t.Helper()
	r, err := tool.Run(context.Background(), json.RawMessage(args))
	if err != nil {
		return Error(err)
	}
	return r
}

func TestImageType(t *testing.T) {
	tests := []struct {
		data, want string
	}{
		{"\xff\xd8\xff\xdb", "image/jpeg"},
		{"\x89PNG\r\n\x1a\n....", "image/png"},
		{"GIF87a..", "image/gif"},
		{"GIF89a..", "image/gif"},
		{"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"},
		{"RIFF\x00\x00\x00\x00WAVEfmt ", ""},
		{"\x89PNG", ""},
		{"hello", ""},
		{"", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ImageType([]byte(tt.data)), "ImageType(%q)", tt.data)
	}
}

func TestCutLineKeepsUTF8(t *testing.T) {
	line := strings.Repeat("é", 10) // 20 bytes
	got := cutLine(line, 5)
	assert.Equal(t, "éé... [line cut: 20 bytes]", got, "cutLine")
}

// TestHostPaths checks that a host-default tool accepts absolute host
// paths under its directory and maps them onto the tree.
func TestHostPaths(t *testing.T) {
	fs := temp.MustNew(map[string]string{"/a.txt": "hi\n"})
	opts := Options{HostDir: "/home/me/proj"}
	read := NewRead(fs, opts)
	for _, p := range []string{"/home/me/proj/a.txt", "a.txt", "/a.txt", "./a.txt"} {
		r := call(t, read, `{"path":"`+p+`"}`)
		assert.False(t, r.IsError, "Read(%q) = %v", p, r)
		assert.Equal(t, "     1\thi", r.String(), "Read(%q)", p)
	}
	// A sibling directory sharing the prefix is not under HostDir.
	r := call(t, read, `{"path":"/home/me/project2/a.txt"}`)
	assert.True(t, r.IsError, "Read outside HostDir = %v", r)
	assert.Equal(t, "not found: /home/me/project2/a.txt", r.String(), "Read outside HostDir")
	w := NewWrite(fs, opts)
	r = call(t, w, `{"path":"/home/me/proj","contents":"x"}`)
	assert.True(t, r.IsError, "Write to HostDir itself (the root) = %v, want an error", r)
}

// conflictFS is a tree whose conditional writes always conflict and whose
// plain writes fail with an OS error.
type conflictFS struct{ *temp.FS }

func (conflictFS) WriteIf(_ context.Context, p string, _ []byte, _ vfs.Precondition) (string, error) {
	return "", vfs.NewError(vfs.KindConflict, p, nil)
}

type failingWriteFS struct{ vfs.FileSystem }

func (failingWriteFS) Write(context.Context, string, []byte) error { return syscall.ENOSPC }

func TestStrReplaceWriteBack(t *testing.T) {
	ctx := context.Background()
	base := temp.MustNew(map[string]string{"/a.txt": "hi\n"})
	_, err := StrReplace(ctx, conflictFS{base}, "/a.txt", "hi", "yo", false)
	assert.EqualError(t, err, "conflict: /a.txt", "StrReplace on a conflicting CAS tree")
	_, err = StrReplace(ctx, failingWriteFS{base}, "/a.txt", "hi", "yo", false)
	assert.EqualError(t, err, "write failed: /a.txt: no space left on device", "StrReplace with a failing write")
	assert.ErrorIs(t, err, vfs.ErrWriteFailed, "StrReplace with a failing write")
	assert.ErrorIs(t, err, syscall.ENOSPC, "StrReplace with a failing write")
	// A CAS tree that does not conflict: the edit lands.
	n, err := StrReplace(ctx, base, "/a.txt", "hi", "yo", false)
	assert.NoError(t, err, "StrReplace on temp")
	assert.Equal(t, 1, n, "StrReplace on temp")
	data, _ := base.Read(ctx, "/a.txt")
	assert.Equal(t, "yo\n", string(data), "after edit /a.txt")
}

func TestShell(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("content\n"), 0o644))
	sh := NewShell(dir, Options{MaxShellOutput: 64})
	assert.Equal(t, EffectWrite, sh.Effect, "Shell effect")
	assert.True(t, sh.OpenWorld, "Shell open-world")
	r := call(t, sh, `{"command":"cat f.txt; pwd"}`)
	assert.False(t, r.IsError, "cat = %+v", r)
	assert.Equal(t, "content\n"+dir, r.String(), "cat")
	r = call(t, sh, `{"command":"echo oops >&2; exit 3"}`)
	assert.True(t, r.IsError, "exit 3 = %q", r.String())
	assert.Equal(t, "oops\n\n[Exit status 3.]", r.String(), "exit 3")
	r = call(t, sh, `{"command":"true"}`)
	assert.False(t, r.IsError, "true = %+v", r)
	assert.Equal(t, "(no output)", r.String(), "true")
	r = call(t, sh, `{"command":"head -c 1000 /dev/zero | tr '\\0' x"}`)
	assert.False(t, r.IsError, "long output = %q", r.String())
	assert.True(t, strings.HasSuffix(r.String(), "[Output cut: showing the first 64 of 1000 bytes.]"), "long output = %q", r.String())
	assert.True(t, strings.HasPrefix(r.String(), strings.Repeat("x", 64)+"\n\n"), "long output = %q", r.String())
}

// TestShellTimeoutKillsGroup checks that a timed-out command's whole
// process group dies, a background grandchild included.
func TestShellTimeoutKillsGroup(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	sh := NewShell(dir, Options{})
	r := call(t, sh, `{"command":"sleep 60 & echo $! > child.pid; wait","timeout":300}`)
	require.True(t, r.IsError, "timeout = %q", r.String())
	require.Contains(t, r.String(), "[Command timed out after 300ms and was killed.]", "timeout")
	data, err := os.ReadFile(filepath.Join(dir, "child.pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	// The grandchild was SIGKILLed with the group. Wait, bounded, until it
	// is gone or a zombie (an init that does not reap leaves it so).
	alive := func() bool {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return syscall.Kill(pid, 0) == nil
		}
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		return len(fields) > 0 && fields[0] != "Z"
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive() {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			require.FailNow(t, "background child still alive after the timeout", "pid %d", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
