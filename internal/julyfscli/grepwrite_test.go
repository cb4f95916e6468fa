package julyfscli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore/pgtest"
)

// julyfsIn runs julyfs in-process with stdin.
func julyfsIn(stdin string, args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), append([]string{"julyfs"}, args...), strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

// statETag returns the etag julyfs stat prints for p.
func statETag(t *testing.T, mount, p string) string {
	t.Helper()
	out, errOut, code := julyfsIn("", "stat", mount, p)
	require.Equal(t, 0, code, errOut)
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "etag:"); ok {
			return strings.TrimSpace(v)
		}
	}
	require.FailNowf(t, "no etag in julyfs stat output", "%s", out)
	return ""
}

// TestWriteIfMatch: julyfs write --if-match replaces a file whose etag is
// the one given and prints the new etag (which stat then shows); with a
// stale etag it fails with the contract's "conflict: PATH", exit 1, and
// changes nothing. On a local tree, a hostfiles store and a hostfiles tree
// mounted below /host of a union.
func TestWriteIfMatch(t *testing.T) {
	for name, c := range map[string]struct{ mount, path string }{
		"local":      {"--mount=/=local:" + t.TempDir(), "/n.md"},
		"hostfiles":  {"--mount=/=hostfiles:" + t.TempDir(), "/n.md"},
		"union/host": {"--mount=/host=hostfiles:" + t.TempDir() + "?scope=deployment", "/host/notes/n.md"},
	} {
		t.Run(name, func(t *testing.T) { checkWriteIfMatch(t, c.mount, c.path) })
	}
}

// TestWriteIfMatchPostgres: the same on a PostgreSQL store, each julyfs
// run a separate tree on one database, as separate hosts would be.
func TestWriteIfMatchPostgres(t *testing.T) {
	url := pgtest.URL(t)
	var rnd [6]byte
	rand.Read(rnd[:])
	checkWriteIfMatch(t, "--mount=/host=hostfiles:"+url+"?scope=session:cli-"+hex.EncodeToString(rnd[:]), "/host/n.md")
}

func checkWriteIfMatch(t *testing.T, mount, path string) {
	t.Helper()
	_, errOut, code := julyfsIn("v1\n", "write", mount, path)
	require.Equal(t, 0, code, errOut)
	e1 := statETag(t, mount, path)
	require.NotEqual(t, "-", e1)

	out, errOut, code := julyfsIn("v2\n", "write", "--if-match", e1, mount, path)
	require.Equal(t, 0, code, errOut)
	e2 := strings.TrimSpace(out)
	assert.NotEqual(t, e1, e2, "the new etag")
	assert.Equal(t, statETag(t, mount, path), e2, "the printed etag is the one stat shows")

	// e1 is stale now: someone else's write (v2) is kept.
	out, errOut, code = julyfsIn("v3\n", "write", "--if-match", e1, mount, path)
	assert.Equal(t, 1, code)
	assert.Equal(t, "conflict: "+path+"\n", errOut)
	assert.Empty(t, out)
	got, _, _ := julyfsIn("", "cat", mount, path)
	assert.Equal(t, "v2\n", got, "the refused write changed nothing")

	// A missing file has no etag to match.
	_, errOut, code = julyfsIn("x", "write", "--if-match", e2, mount, path+".new")
	assert.Equal(t, 1, code)
	assert.Equal(t, "conflict: "+path+".new\n", errOut)

	_, errOut, code = julyfsIn("x", "write", "--if-match", "", mount, path)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--if-match needs the file's etag")
}

// TestGrepLineCap greps a 16 MiB file of one line: the hit prints the
// line's first 2000 bytes and its length, the way the Grep tool does, and
// the command allocates a small fraction of the line (the local and
// hostfiles trees stream it a window at a time, also under a union).
func TestGrepLineCap(t *testing.T) {
	const size = 16 << 20
	line := bytes.Repeat([]byte("abcdefgh"), size/8)
	copy(line[size/2:], "NEEDLE")
	copy(line[size-6:], "NEEDLE")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.txt"), append(line, '\n'), 0o644))
	want := "/big.txt:1:" + string(line[:2000]) + "... [line cut: 16777216 bytes]\n"
	line = nil
	store := t.TempDir()
	big, err := os.Open(filepath.Join(dir, "big.txt"))
	require.NoError(t, err)
	_, errOut, code := julyfsInReader(big, "write", "--mount=/=hostfiles:"+store, "/big.txt")
	big.Close()
	require.Equal(t, 0, code, errOut)

	for name, c := range map[string]struct {
		mounts []string
		prefix string
	}{
		"local":     {[]string{"--mount=/=local:" + dir}, ""},
		"hostfiles": {[]string{"--mount=/=hostfiles:" + store}, ""},
		"union":     {[]string{"--mount=/=temp:", "--mount=/l=local:" + dir, "--mount=/h=hostfiles:" + store + "?scope=deployment"}, "/h"},
	} {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"grep"}, c.mounts...)
			args = append(args, "NEEDLE$", "/")
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			out, errOut, code := julyfsIn("", args...)
			runtime.ReadMemStats(&after)
			require.Equal(t, 0, code, errOut)
			if c.prefix != "" { // both mounts hold the file
				assert.Equal(t, c.prefix+want+"/l"+want, out)
			} else {
				assert.Equal(t, want, out)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("grep of a %d MiB line allocated %d KiB", size>>20, alloc>>10)
			assert.Less(t, alloc, uint64(size/4), "grep held the line: %d bytes allocated", alloc)
		})
	}
}

func julyfsInReader(stdin *os.File, args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), append([]string{"julyfs"}, args...), stdin, &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestGrepLineCapFlag: --max-line-bytes sets the cap (cut at a UTF-8
// boundary), 0 prints whole lines, a negative one is a usage error.
func TestGrepLineCapFlag(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("0123456789\néééé\nshort\n"), 0o644))
	mount := "--mount=/=local:" + dir
	out, errOut, code := julyfsIn("", "grep", mount, "--max-line-bytes", "5", ".", "/")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "/a.txt:1:01234... [line cut: 10 bytes]\n/a.txt:2:éé... [line cut: 8 bytes]\n/a.txt:3:short\n", out)
	out, _, code = julyfsIn("", "grep", mount, "--max-line-bytes", "0", "0", "/")
	require.Equal(t, 0, code)
	assert.Equal(t, "/a.txt:1:0123456789\n", out)
	_, errOut, code = julyfsIn("", "grep", mount, "--max-line-bytes", "-1", "0", "/")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--max-line-bytes must not be negative")
}

// TestAppendLine: a tree that ignores the cap (returns whole lines) is
// cut by the command; one that cut the line reports its length.
func TestAppendLine(t *testing.T) {
	assert.Equal(t, "abc... [line cut: 6 bytes]", string(appendLine(nil, vfs.GrepResult{Line: "abcdef"}, 3)))
	assert.Equal(t, "abc... [line cut: 99 bytes]", string(appendLine(nil, vfs.GrepResult{Line: "abcd", LineBytes: 99}, 3)))
	assert.Equal(t, "abc", string(appendLine(nil, vfs.GrepResult{Line: "abc"}, 3)))
	assert.Equal(t, "abcdef", string(appendLine(nil, vfs.GrepResult{Line: "abcdef"}, 0)))
}
