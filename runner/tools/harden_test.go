package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
)

// runNoPanic calls tool.Run directly (not through the runner's
// dispatcher, which would turn a panic into an error result), so a panic
// anywhere in the tool fails the test.
func runNoPanic(t *testing.T, tool *Tool, args string) (r *Result) {
	t.Helper()
	defer func() {
		if v := recover(); v != nil {
			require.FailNowf(t, "tool panicked", "%s %s panicked: %v", tool.Name, args, v)
		}
	}()
	r, err := tool.Run(context.Background(), json.RawMessage(args))
	if err != nil {
		return Error(err)
	}
	require.NotNil(t, r)
	return r
}

// TestGrepOverflowingPagination: offset and head_limit near math.MaxInt
// used to overflow offset+head_limit+1 and panic on a slice bound.
func TestGrepOverflowingPagination(t *testing.T) {
	fs := temp.MustNew(map[string]string{"/a.txt": "x\nx\nx\n", "/b.txt": "x\n"})
	g := NewGrep(fs, Options{})
	huge := math.MaxInt
	for _, mode := range []string{GrepContent, GrepFiles, GrepCount} {
		for _, args := range []string{
			fmt.Sprintf(`{"pattern":"x","output_mode":%q,"offset":%d}`, mode, huge),
			fmt.Sprintf(`{"pattern":"x","output_mode":%q,"head_limit":%d}`, mode, huge),
			fmt.Sprintf(`{"pattern":"x","output_mode":%q,"offset":%d,"head_limit":%d}`, mode, huge, huge),
			fmt.Sprintf(`{"pattern":"x","output_mode":%q,"offset":1,"head_limit":%d}`, mode, huge),
			fmt.Sprintf(`{"pattern":"x","output_mode":%q,"-C":%d,"head_limit":%d}`, mode, huge, huge),
			fmt.Sprintf(`{"pattern":"x","output_mode":%q,"-A":%d,"-B":%d}`, mode, huge, huge),
		} {
			r := runNoPanic(t, g, args)
			assert.False(t, r.IsError, "%s: %s", args, r)
		}
	}
	r := runNoPanic(t, g, fmt.Sprintf(`{"pattern":"x","output_mode":"content","offset":%d}`, huge))
	assert.Equal(t, fmt.Sprintf("No matches at offset %d.", huge), r.String())
	r = runNoPanic(t, g, fmt.Sprintf(`{"pattern":"x","output_mode":"content","offset":1,"head_limit":%d}`, huge))
	assert.Equal(t, "/a.txt:2:x\n/a.txt:3:x\n/b.txt:1:x", r.String())
	r = runNoPanic(t, g, fmt.Sprintf(`{"pattern":"x","output_mode":"content","-A":%d,"path":"/b.txt"}`, huge))
	assert.Equal(t, "/b.txt:1:x", r.String())
}

// TestGrepOutputModes: the spec's native kinds are content, files and
// count; files_with_matches is an alias of files.
func TestGrepOutputModes(t *testing.T) {
	fs := temp.MustNew(map[string]string{"/a.txt": "x\nx\n", "/b.txt": "x\n"})
	g := NewGrep(fs, Options{})
	files := runNoPanic(t, g, `{"pattern":"x","output_mode":"files"}`)
	assert.Equal(t, "/a.txt\n/b.txt", files.String())
	assert.Equal(t, files.String(), runNoPanic(t, g, `{"pattern":"x","output_mode":"files_with_matches"}`).String())
	assert.Equal(t, files.String(), runNoPanic(t, g, `{"pattern":"x"}`).String())
	assert.Equal(t, "/a.txt:2\n/b.txt:1", runNoPanic(t, g, `{"pattern":"x","output_mode":"count"}`).String())
	var enum []string
	for _, v := range g.Schema.Properties["output_mode"].Enum {
		enum = append(enum, v.(string))
	}
	assert.Equal(t, []string{GrepContent, GrepFiles, GrepCount, GrepFilesWithMatches}, enum)
}

// TestToolsHostileArguments calls every synthesized tool with extreme
// integers, empty and odd strings: none may panic.
func TestToolsHostileArguments(t *testing.T) {
	fs := temp.MustNew(map[string]string{"/a.txt": "one\ntwo\n", "/d/b.txt": "x"})
	huge, neg := math.MaxInt, math.MinInt
	ints := []int{0, 1, -1, huge, neg, huge - 1}
	strs := []string{"", "/", "..", "../..", "/a.txt", "/d", "\x00", "\n", "[", "{", "**/**/**", strings.Repeat("a/", 300), "\xff"}
	for _, tool := range Synthesize(fs, FileToolNames(), Options{}) {
		for _, s := range strs {
			for _, n := range ints {
				var args string
				switch tool.Name {
				case NameRead:
					args = fmt.Sprintf(`{"path":%q,"offset":%d,"limit":%d}`, s, n, n)
				case NameLS:
					args = fmt.Sprintf(`{"path":%q,"ignore":[%q]}`, s, s)
				case NameGrep:
					args = fmt.Sprintf(`{"pattern":%q,"glob":%q,"offset":%d,"head_limit":%d,"-C":%d,"output_mode":"content"}`, s, s, n, n, n)
				case NameGlob:
					args = fmt.Sprintf(`{"pattern":%q,"path":%q}`, s, s)
				case NameWrite:
					args = fmt.Sprintf(`{"path":%q,"contents":%q}`, s, s)
				case NameStrReplace:
					args = fmt.Sprintf(`{"path":%q,"oldText":%q,"newText":"y"}`, s, s)
				case NameDelete:
					args = fmt.Sprintf(`{"path":%q}`, s)
				case NameSemanticSearch:
					args = fmt.Sprintf(`{"query":%q,"path":%q,"numResults":%d}`, s, s, n)
				}
				r := runNoPanic(t, tool, args)
				assert.False(t, strings.HasPrefix(r.String(), "internal error"), "%s %s: %s", tool.Name, args, r)
			}
		}
	}
}

// TestNamesCannotForgeOutput: a file name with a newline, a control
// character or invalid UTF-8 is printed Go-quoted by every tool, so it
// cannot forge a line, and the printed form reads the same file back.
func TestNamesCannotForgeOutput(t *testing.T) {
	dir := t.TempDir()
	forged := "x.txt\nsecret.txt:1:root:FAKE"
	names := []string{forged, "bad\xff.txt", "tab\tname.txt", "ok.txt"}
	for _, n := range names {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("root\n"), 0o644))
	}
	fsys, err := local.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	tools := map[string]*Tool{}
	for _, tl := range Synthesize(fsys, FileToolNames(), Options{}) {
		tools[tl.Name] = tl
	}
	quoted := map[string]string{
		forged:          `"/x.txt\nsecret.txt:1:root:FAKE"`,
		"bad\xff.txt":   `"/bad\xff.txt"`,
		"tab\tname.txt": `"/tab\tname.txt"`,
		"ok.txt":        "/ok.txt",
	}

	content := runNoPanic(t, tools[NameGrep], `{"pattern":"root","output_mode":"content"}`).String()
	for _, line := range strings.Split(content, "\n") {
		assert.False(t, strings.HasPrefix(line, "secret.txt"), "forged line %q in\n%s", line, content)
	}
	assert.Contains(t, content, quoted[forged]+":1:root")
	assert.Equal(t, `"/bad\xff.txt"`+"\n/ok.txt\n"+`"/tab\tname.txt"`+"\n"+quoted[forged],
		runNoPanic(t, tools[NameGrep], `{"pattern":"root"}`).String())
	assert.Contains(t, runNoPanic(t, tools[NameGrep], `{"pattern":"root","output_mode":"count"}`).String(), `"/bad\xff.txt":1`)

	glob := runNoPanic(t, tools[NameGlob], `{"pattern":"*"}`).String()
	ls := runNoPanic(t, tools[NameLS], `{}`).String()
	assert.Contains(t, ls, "\n  "+`"bad\xff.txt"`+" (5 bytes)")
	assert.Contains(t, ls, "\n  "+`"x.txt\nsecret.txt:1:root:FAKE"`+" (5 bytes)")
	assert.Equal(t, 5, len(strings.Split(ls, "\n")), ls) // "/" and one line per file: none forged
	for n, q := range quoted {
		assert.Contains(t, strings.Split(glob, "\n"), q)
		// The printed form names the same file.
		r := runNoPanic(t, tools[NameRead], fmt.Sprintf(`{"path":%q}`, q))
		assert.False(t, r.IsError, "%s: %s", q, r)
		assert.Equal(t, "     1\troot", r.String(), n)
	}
	r := runNoPanic(t, tools[NameRead], `{"path":"\"/missing\\nline\""}`)
	assert.Equal(t, `not found: "/missing\nline"`, r.String())
	assert.Equal(t, `Deleted "/bad\xff.txt"`, runNoPanic(t, tools[NameDelete], `{"path":"\"/bad\\xff.txt\""}`).String())
	_, err = os.Stat(filepath.Join(dir, "bad\xff.txt"))
	assert.True(t, os.IsNotExist(err))
}

// allocated returns the bytes allocated while f runs.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReadStreamsLargeFile: Read with a limit reads through ranged reads
// and holds one buffer and one cut line, not the file: a 32 MiB one-line
// file used to be read whole (and its line copied) for one line.
func TestReadStreamsLargeFile(t *testing.T) {
	dir := t.TempDir()
	const size = 32 << 20
	line := "needle " + strings.Repeat("x", size)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.txt"), []byte(line+"\nsecond\nthird"), 0o644))
	fsys, err := local.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	read := NewRead(fsys, Options{})
	var r *Result
	n := allocated(func() { r = runNoPanic(t, read, `{"path":"/big.txt","limit":1}`) })
	assert.Less(t, n, uint64(2<<20), "Read of one line allocated %d bytes", n)
	want := fmt.Sprintf("     1\tneedle %s... [line cut: %d bytes]\n\n[Showing lines 1-1 of 3 (limit). Use offset=2 to read more.]", strings.Repeat("x", 1993), len(line))
	assert.Equal(t, want, r.String())
	assert.Equal(t, "     3\tthird", runNoPanic(t, read, `{"path":"/big.txt","offset":3}`).String())
	assert.Equal(t, "[offset 4 is past the end of /big.txt (3 lines)]", runNoPanic(t, read, `{"path":"/big.txt","offset":4}`).String())

	// The same through a tree with only a RangeReader (temp).
	tfs := temp.MustNew(map[string]string{"/big.txt": line + "\n"})
	r = runNoPanic(t, NewRead(tfs, Options{}), `{"path":"/big.txt","limit":1}`)
	assert.Equal(t, fmt.Sprintf("     1\tneedle %s... [line cut: %d bytes]", strings.Repeat("x", 1993), len(line)), r.String())
}

// TestGrepContextStreams: Grep with context reads each file sequentially
// and cuts long context lines with a notice.
func TestGrepContextStreams(t *testing.T) {
	long := strings.Repeat("y", 5000)
	fs := temp.MustNew(map[string]string{"/a.txt": "one\n" + long + "\nneedle\n" + long + "\nfive\nsix\nneedle again\r\n"})
	g := NewGrep(fs, Options{MaxLineLength: 10})
	cut := "yyyyyyyyyy... [line cut: 5000 bytes]"
	got := runNoPanic(t, g, `{"pattern":"needle","output_mode":"content","-C":1}`).String()
	assert.Equal(t, "/a.txt-2-"+cut+"\n/a.txt:3:needle\n/a.txt-4-"+cut+"\n--\n/a.txt-6-six\n/a.txt:7:needle aga... [line cut: 12 bytes]", got)
	got = runNoPanic(t, g, `{"pattern":"needle","output_mode":"content","-B":5}`).String()
	assert.Equal(t, "/a.txt-1-one\n/a.txt-2-"+cut+"\n/a.txt:3:needle\n/a.txt-4-"+cut+"\n/a.txt-5-five\n/a.txt-6-six\n/a.txt:7:needle aga... [line cut: 12 bytes]", got)
}
