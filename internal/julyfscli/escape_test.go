package julyfscli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNamesEscaped: julyfs ls, glob, grep, stat and errors print a name
// with a newline, a control character or invalid UTF-8 Go-quoted, so it
// cannot forge a line, and the printed form names the file again.
func TestNamesEscaped(t *testing.T) {
	dir := t.TempDir()
	forged := "x.txt\nsecret.txt:1:root:FAKE"
	for _, n := range []string{forged, "bad\xff.txt", "ok.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("root\n"), 0o644))
	}
	mount := "--mount=/=local:" + dir
	julyfs := func(args ...string) (string, string, int) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"julyfs"}, append(args, mount)...), strings.NewReader(""), &stdout, &stderr)
		return stdout.String(), stderr.String(), code
	}
	want := `"/bad\xff.txt"` + "\n/ok.txt\n" + `"/x.txt\nsecret.txt:1:root:FAKE"` + "\n"
	out, _, code := julyfs("ls", "/")
	assert.Equal(t, 0, code)
	assert.Equal(t, want, out)
	out, _, _ = julyfs("glob", "*")
	assert.Equal(t, want, out)
	out, _, _ = julyfs("grep", "root")
	assert.Equal(t, `"/bad\xff.txt":1:root`+"\n/ok.txt:1:root\n"+`"/x.txt\nsecret.txt:1:root:FAKE":1:root`+"\n", out)
	out, _, _ = julyfs("stat", `"/bad\xff.txt"`)
	assert.Contains(t, out, `path:  "/bad\xff.txt"`+"\n")
	out, _, code = julyfs("cat", `"/x.txt\nsecret.txt:1:root:FAKE"`)
	assert.Equal(t, 0, code)
	assert.Equal(t, "root\n", out)
	_, stderr, code := julyfs("cat", `"/missing\x01"`)
	assert.Equal(t, 1, code)
	assert.Equal(t, `not found: "/missing\x01"`+"\n", stderr)
	_, _, code = julyfs("rm", `"/bad\xff.txt"`)
	assert.Equal(t, 0, code)
	_, err := os.Stat(filepath.Join(dir, "bad\xff.txt"))
	assert.True(t, os.IsNotExist(err))
}
