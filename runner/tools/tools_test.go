package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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
		if got := ImageType([]byte(tt.data)); got != tt.want {
			t.Errorf("ImageType(%q) = %q, want %q", tt.data, got, tt.want)
		}
	}
}

func TestCutLineKeepsUTF8(t *testing.T) {
	line := strings.Repeat("é", 10) // 20 bytes
	got := cutLine(line, 5)
	if want := "éé... [line cut: 20 bytes]"; got != want {
		t.Errorf("cutLine = %q, want %q", got, want)
	}
}

// TestHostPaths checks that a host-default tool accepts absolute host
// paths under its directory and maps them onto the tree.
func TestHostPaths(t *testing.T) {
	fs := temp.MustNew(map[string]string{"/a.txt": "hi\n"})
	opts := Options{HostDir: "/home/me/proj"}
	read := NewRead(fs, opts)
	for _, p := range []string{"/home/me/proj/a.txt", "a.txt", "/a.txt", "./a.txt"} {
		if r := call(t, read, `{"path":"`+p+`"}`); r.IsError || r.String() != "     1\thi" {
			t.Errorf("Read(%q) = %v", p, r)
		}
	}
	// A sibling directory sharing the prefix is not under HostDir.
	if r := call(t, read, `{"path":"/home/me/project2/a.txt"}`); !r.IsError || r.String() != "not found: /home/me/project2/a.txt" {
		t.Errorf("Read outside HostDir = %v", r)
	}
	w := NewWrite(fs, opts)
	if r := call(t, w, `{"path":"/home/me/proj","contents":"x"}`); !r.IsError {
		t.Errorf("Write to HostDir itself (the root) = %v, want an error", r)
	}
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
	if _, err := StrReplace(ctx, conflictFS{base}, "/a.txt", "hi", "yo", false); err == nil || err.Error() != "conflict: /a.txt" {
		t.Errorf("StrReplace on a conflicting CAS tree = %v, want conflict: /a.txt", err)
	}
	_, err := StrReplace(ctx, failingWriteFS{base}, "/a.txt", "hi", "yo", false)
	if err == nil || err.Error() != "write failed: /a.txt: no space left on device" || !errors.Is(err, vfs.ErrWriteFailed) || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("StrReplace with a failing write = %v, want write failed: /a.txt: no space left on device", err)
	}
	// A CAS tree that does not conflict: the edit lands.
	if n, err := StrReplace(ctx, base, "/a.txt", "hi", "yo", false); err != nil || n != 1 {
		t.Errorf("StrReplace on temp = %d, %v", n, err)
	}
	if data, _ := base.Read(ctx, "/a.txt"); string(data) != "yo\n" {
		t.Errorf("after edit /a.txt = %q", data)
	}
}

func TestShell(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh := NewShell(dir, Options{MaxShellOutput: 64})
	if sh.Effect != EffectWrite || !sh.OpenWorld {
		t.Errorf("Shell effect %v open-world %v", sh.Effect, sh.OpenWorld)
	}
	if r := call(t, sh, `{"command":"cat f.txt; pwd"}`); r.IsError || r.String() != "content\n"+dir {
		t.Errorf("cat = %+v", r)
	}
	if r := call(t, sh, `{"command":"echo oops >&2; exit 3"}`); !r.IsError || r.String() != "oops\n\n[Exit status 3.]" {
		t.Errorf("exit 3 = %q", r.String())
	}
	if r := call(t, sh, `{"command":"true"}`); r.IsError || r.String() != "(no output)" {
		t.Errorf("true = %+v", r)
	}
	r := call(t, sh, `{"command":"head -c 1000 /dev/zero | tr '\\0' x"}`)
	if r.IsError || !strings.HasSuffix(r.String(), "[Output cut: showing the first 64 of 1000 bytes.]") ||
		!strings.HasPrefix(r.String(), strings.Repeat("x", 64)+"\n\n") {
		t.Errorf("long output = %q", r.String())
	}
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
	if !r.IsError || !strings.Contains(r.String(), "[Command timed out after 300ms and was killed.]") {
		t.Fatalf("timeout = %q", r.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
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
			t.Fatalf("background child %d still alive after the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
