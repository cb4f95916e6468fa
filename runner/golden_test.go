package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"golang.org/x/tools/txtar"

	"github.com/julyfs/julyfs/runner/tools"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

var update = flag.Bool("update", false, "rewrite the .out sections of testdata/golden/*.txtar")

// goldenOptions are small limits so the fixture exercises every cut.
var goldenOptions = tools.Options{MaxReadLines: 10, MaxLineLength: 40, MaxOutputBytes: 4096, MaxEntries: 5}

// Binary fixture files, added to the txtar tree.
var (
	pngBytes  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	jpegBytes = []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01")
	gifBytes  = []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")
	webpBytes = []byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00")
)

// fixtureTree builds a fresh tree from testdata/tree.txtar plus the binary
// files, wrapped so Search answers from a small test index.
func fixtureTree(t testing.TB) vfs.FileSystem {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("testdata", "tree.txtar"))
	require.NoError(t, err)
	files := map[string][]byte{
		"/img/dot.png":          pngBytes,
		"/img/photo.jpg":        jpegBytes,
		"/img/anim.gif":         gifBytes,
		"/img/pic.webp":         webpBytes,
		"/img/really-a-png.txt": pngBytes,
		"/bin/blob.bin":         []byte("ab\x00cd\n"),
		"/crlf.txt":             []byte("one\r\ntwo\r\n"),
	}
	for _, f := range ar.Files {
		files[f.Name] = f.Data
	}
	fs, err := temp.New(files)
	require.NoError(t, err)
	return countSearch{fs}
}

// countSearch is a tree whose Search ranks the files under the query path
// by how many times they contain the query, case-insensitively (score =
// count), with the first matching line as the snippet.
type countSearch struct{ vfs.FileSystem }

func (c countSearch) Search(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return func(yield func(vfs.SearchResult, error) bool) {
		var out []vfs.SearchResult
		needle := strings.ToLower(q.Query)
		for p, err := range vfs.WalkFiles(ctx, c.FileSystem, q.Path) {
			if err != nil {
				yield(vfs.SearchResult{}, err)
				return
			}
			data, err := c.Read(ctx, p)
			if err != nil {
				yield(vfs.SearchResult{}, err)
				return
			}
			text := strings.ToLower(string(data))
			n := strings.Count(text, needle)
			if n == 0 || vfs.IsBinary(data) {
				continue
			}
			r := vfs.SearchResult{Path: p, Score: float64(n)}
			for i, line := range strings.Split(string(data), "\n") {
				if strings.Contains(strings.ToLower(line), needle) {
					r.LineNumber, r.Snippet = i+1, line
					break
				}
			}
			out = append(out, r)
		}
		slices.SortFunc(out, vfs.CompareSearchResults)
		if q.MaxResults > 0 && len(out) > q.MaxResults {
			out = out[:q.MaxResults]
		}
		for _, r := range out {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// TestGolden runs every case of testdata/golden/TOOL.txtar through a
// dispatcher over a fresh fixture tree and compares the rendered result
// with the case's .out section.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, file := range files {
		tool := strings.TrimSuffix(filepath.Base(file), ".txtar")
		seen[tool] = true
		t.Run(tool, func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			require.NoError(t, err)
			var out []txtar.File
			changed := false
			for _, f := range ar.Files {
				name, ok := strings.CutSuffix(f.Name, ".args")
				if !ok {
					continue
				}
				got := runGolden(t, tool, f.Data)
				out = append(out, f, txtar.File{Name: name + ".out", Data: []byte(got)})
				want, found := section(ar, name+".out")
				switch {
				case *update:
					changed = changed || !found || want != got
				case !found:
					assert.Fail(t, "no .out section (run with -update)", "%s %s", tool, name)
				default:
					assert.Equal(t, want, got, "%s %s(%s)", tool, name, bytes.TrimSpace(f.Data))
				}
			}
			if *update && changed {
				ar.Files = out
				require.NoError(t, os.WriteFile(file, txtar.Format(ar), 0o644))
			}
		})
	}
	for _, name := range tools.FileToolNames() {
		assert.True(t, seen[name], "no golden file for %s", name)
	}
}

func section(ar *txtar.Archive, name string) (string, bool) {
	for _, f := range ar.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

// runGolden calls tool with args on a fresh tree and renders the result,
// and for a write tool the state of the path it wrote afterwards.
func runGolden(t *testing.T, tool string, args []byte) string {
	fsys := fixtureTree(t)
	var rec CallRecord
	d, err := NewDispatcher(tools.Synthesize(fsys, tools.FileToolNames(), goldenOptions), DispatchOptions{
		Observe: func(r CallRecord) { rec = r },
	})
	require.NoError(t, err)
	res := d.Call(context.Background(), tool, bytes.TrimSpace(args))
	assert.Equal(t, tool, res.Tool, "%s: result names tool", tool)
	assert.Equal(t, tool, rec.Tool, "%s: record names tool", tool)
	out := render(res)
	if d.Tool(tool).Effect == tools.EffectWrite && rec.Args != nil {
		var a struct{ Path string }
		require.NoError(t, json.Unmarshal(rec.Args, &a))
		p := vfs.Clean(a.Path)
		info, err := fsys.Stat(context.Background(), p)
		require.NoError(t, err)
		out += fmt.Sprintf("--- %s afterwards (%s) ---\n", p, info.Kind)
		if info.Kind == vfs.KindFile {
			data, err := fsys.Read(context.Background(), p)
			require.NoError(t, err)
			out += string(data)
			if len(data) > 0 && data[len(data)-1] != '\n' {
				out += "\n[no final newline]\n"
			}
		}
	}
	return out
}

// render prints a result for a golden file: "[error]" first for an error
// result, the parts, and the structured result.
func render(r *tools.Result) string {
	var b strings.Builder
	if r.IsError {
		b.WriteString("[error]\n")
	}
	if r.Stubbed {
		b.WriteString("[stubbed]\n")
	}
	b.WriteString(r.String())
	b.WriteString("\n")
	if r.Structured != nil {
		js, _ := json.Marshal(r.Structured)
		fmt.Fprintf(&b, "[structured] %s\n", js)
	}
	return b.String()
}
