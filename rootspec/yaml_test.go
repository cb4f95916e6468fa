package rootspec

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// mkdirs creates dirs under base.
func mkdirs(t *testing.T, base string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
}

func TestLoadFile(t *testing.T) {
	base := t.TempDir()
	mkdirs(t, base, "conf/src", "conf/docs", "conf/docs-local", "abs", "conf/a", "conf/b")
	config := filepath.Join(base, "conf", "root.yaml")
	abs := filepath.Join(base, "abs")
	const text = `# a root config
mounts:
  /repo: { local: ./src }
  /notes: { temp: {} }
  /seeded:
    temp:
      /a.md: hello
      b/c.txt: "two\nlines"
  /docs:
    overlay:
      - local: ./docs-local      # earlier layers win
      - local: docs
  /abs: { local: ABS, ro: true }
  /flagform: local:./src?ro
  /ext:
    readonly: true
    union:
      /a: { local: ./a }
      /b: "temp:"
`
	require.NoError(t, os.WriteFile(config, []byte(strings.ReplaceAll(text, "ABS", abs)), 0o644))
	got, err := LoadFile(config)
	require.NoError(t, err)
	c := filepath.Join(base, "conf")
	line := func(line int) string { return config + ":" + strconv.Itoa(line) }
	want := Table{
		{"/repo", Spec{Kind: KindLocal, Dir: filepath.Join(c, "src"), Origin: line(3)}},
		{"/notes", Spec{Kind: KindTemp, Origin: line(4)}},
		{"/seeded", Spec{Kind: KindTemp, Files: map[string][]byte{"/a.md": []byte("hello"), "/b/c.txt": []byte("two\nlines")}, Origin: line(5)}},
		{"/docs", Spec{Kind: KindOverlay, Origin: line(9), Layers: []Spec{
			{Kind: KindLocal, Dir: filepath.Join(c, "docs-local"), Origin: line(11)},
			{Kind: KindLocal, Dir: filepath.Join(c, "docs"), Origin: line(12)},
		}}},
		{"/abs", Spec{Kind: KindLocal, Dir: abs, ReadOnly: true, Origin: line(13)}},
		{"/flagform", Spec{Kind: KindLocal, Dir: filepath.Join(c, "src"), ReadOnly: true, Origin: line(14)}},
		{"/ext", Spec{Kind: KindUnion, ReadOnly: true, Origin: line(15), Mounts: Table{
			{"/a", Spec{Kind: KindLocal, Dir: filepath.Join(c, "a"), Origin: line(18)}},
			{"/b", Spec{Kind: KindTemp, Origin: line(19)}},
		}}},
	}
	if !reflect.DeepEqual(got, want) {
		for i := range max(len(got), len(want)) {
			assert.Equal(t, at(i, want), at(i, got), "LoadFile mount %d", i)
		}
	}
	var modes []string
	for _, m := range got {
		modes = append(modes, m.Prefix+" "+m.Spec.Mode()+" "+m.Spec.String())
	}
	wantModes := []string{
		"/repo rw local:" + c + "/src",
		"/notes rw temp:",
		"/seeded rw temp:2 files",
		"/docs ro overlay:[local:" + c + "/docs-local,local:" + c + "/docs]",
		"/abs ro local:" + abs + "?ro",
		"/flagform ro local:" + c + "/src?ro",
		"/ext ro union:[/a=local:" + c + "/a,/b=temp:]?ro",
	}
	assert.Equal(t, wantModes, modes, "modes and strings")
}

// at returns t[i], or nothing past the end.
func at(i int, t Table) any {
	if i < len(t) {
		return t[i]
	}
	return nil
}

func TestLoadFileErrors(t *testing.T) {
	base := t.TempDir()
	mkdirs(t, base, "src")
	tests := []struct {
		name, text, want string // want: the message after "root.yaml:"
	}{
		{"empty", "", "root.yaml: empty config: want a mounts: mapping"},
		{"syntax", "mounts:\n  /a: b: c\n", "root.yaml: line 2: mapping values are not allowed in this context"},
		{"list", "- a\n", "root.yaml:1: want a mapping with a mounts: key, got a list"},
		{"top key", "mounts: {}\nroot: {}\n", `root.yaml:2: unknown key "root": a root config has only mounts:`},
		{"no mounts", "x: 1\n", `root.yaml:1: unknown key "x": a root config has only mounts:`},
		{"mounts list", "mounts:\n  - /a\n", "root.yaml:2: want a mapping of prefix to entry, e.g. {/repo: {local: ./src}}, got a list"},
		{"relative prefix", "mounts:\n  repo: {temp: {}}\n", `root.yaml:2: repo: prefix "repo" is not absolute: want /repo`},
		{"duplicate", "mounts:\n  /a: {temp: {}}\n  /a/: {temp: {}}\n", "root.yaml:3: /a: duplicate prefix (first at line 2)"},
		{"unknown kind", "mounts:\n  /docs: {lokal: ./src}\n", `root.yaml:2: /docs: unknown key "lokal" (kinds: hostfiles, local, overlay, plugin, temp, union; options: readonly, ro)`},
		{"unknown option", "mounts:\n  /docs:\n    local: ./src\n    cache: true\n", `root.yaml:4: /docs: unknown key "cache" (kinds: hostfiles, local, overlay, plugin, temp, union; options: readonly, ro)`},
		{"two kinds", "mounts:\n  /docs: {local: ./src, temp: {}}\n", "root.yaml:2: /docs: both local and temp: an entry has exactly one kind"},
		{"no kind", "mounts:\n  /docs: {ro: true}\n", "root.yaml:2: /docs: no kind: want one of hostfiles, local, overlay, plugin, temp, union"},
		{"empty entry", "mounts:\n  /docs:\n", "root.yaml:2: /docs: empty entry: want a kind such as {local: ./dir} or {temp: {}}"},
		{"missing dir", "mounts:\n  /docs: {local: ./nope}\n", "root.yaml:2: /docs: directory " + filepath.Join(base, "nope") + " does not exist"},
		{"local list", "mounts:\n  /docs: {local: [a]}\n", "root.yaml:2: /docs: local: wants a directory, got a list"},
		{"local null", "mounts:\n  /docs: {local: }\n", "root.yaml:2: /docs: local: wants a directory, got nothing"},
		{"scalar unknown kind", "mounts:\n  /docs: nfs:x\n", `root.yaml:2: /docs: unknown kind "nfs" (known: hostfiles, local, plugin, temp)`},
		{"ro not bool", "mounts:\n  /docs: {local: ./src, ro: yes}\n", `root.yaml:2: /docs: ro: wants true or false, got "yes"`},
		{"temp list", "mounts:\n  /n: {temp: [a]}\n", "root.yaml:2: /n: temp: wants {} or a mapping of file path to contents, got a list"},
		{"temp root", "mounts:\n  /n: {temp: {/: x}}\n", `root.yaml:2: /n: temp: "/" is the root, not a file`},
		{"temp dup", "mounts:\n  /n:\n    temp:\n      /a: x\n      a: y\n", "root.yaml:5: /n: temp: duplicate file /a"},
		{"temp nested value", "mounts:\n  /n:\n    temp:\n      /a: {b: c}\n", "root.yaml:4: /n: temp: /a: want the file's contents as a string, got a mapping"},
		{"temp file under file", "mounts:\n  /n:\n    temp:\n      /a: x\n      /a/b: y\n", "root.yaml:4: /n: temp: /a is a file, so /a/b cannot be under it"},
		{"overlay mapping", "mounts:\n  /d: {overlay: {local: ./src}}\n", "root.yaml:2: /d: overlay: wants a list of layers, e.g. [{local: ./upper}, {local: ./lower}], got a mapping"},
		{"overlay empty", "mounts:\n  /d: {overlay: []}\n", "root.yaml:2: /d: overlay needs at least one layer"},
		{"overlay bad layer", "mounts:\n  /d:\n    overlay:\n      - local: ./src\n      - lokal: ./src\n", `root.yaml:5: /d: unknown key "lokal" (kinds: hostfiles, local, overlay, plugin, temp, union; options: readonly, ro)`},
		{"union empty", "mounts:\n  /u: {union: {}}\n", "root.yaml:2: /u: union needs at least one mount"},
		{"union nested error", "mounts:\n  /u:\n    union:\n      /a: {temp: {}}\n      b: {temp: {}}\n", `root.yaml:5: /u/b: prefix "b" is not absolute: want /b`},
		{"union nested kind", "mounts:\n  /u:\n    union:\n      /a: {ftp: x}\n", `root.yaml:4: /u/a: unknown key "ftp" (kinds: hostfiles, local, overlay, plugin, temp, union; options: readonly, ro)`},
		{"alias cycle", "mounts:\n  /u: &a\n    union:\n      /x: *a\n", "too many or too deeply nested entries (a cycle of YAML aliases?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.text), "root.yaml", base)
			require.Error(t, err, "Parse succeeded, want error %q", tt.want)
			var se *Error
			assert.ErrorAs(t, err, &se, "Parse error %T, want *Error", err)
			if tt.name == "alias cycle" {
				assert.True(t, strings.HasSuffix(err.Error(), tt.want), "Parse error:\n got %s\nwant suffix %s", err, tt.want)
				return
			}
			assert.EqualError(t, err, tt.want, "Parse error")
		})
	}
}

func TestLoadFileMissing(t *testing.T) {
	_, err := LoadFile(filepath.Join(t.TempDir(), "nope.yaml"))
	if assert.ErrorIs(t, err, os.ErrNotExist, "LoadFile(missing), want a not-exist error") {
		assert.True(t, strings.HasPrefix(err.Error(), "config: open "), "LoadFile(missing) = %v, want a not-exist error", err)
	}
}

// TestDecodeMounts decodes the mapping under another key, as the runner
// does with root: in agent.yaml, and reports lines without a file name.
func TestDecodeMounts(t *testing.T) {
	base := t.TempDir()
	mkdirs(t, base, "src")
	var doc struct {
		Name string    `yaml:"name"`
		Root yaml.Node `yaml:"root"`
	}
	text := "name: x\nroot:\n  /repo: {local: ./src}\n  /tmp: 'temp:'\n"
	require.NoError(t, yaml.Unmarshal([]byte(text), &doc))
	got, err := DecodeMounts(&doc.Root, base)
	require.NoError(t, err)
	want := Table{
		{"/repo", Spec{Kind: KindLocal, Dir: filepath.Join(base, "src"), Origin: "line 3"}},
		{"/tmp", Spec{Kind: KindTemp, Origin: "line 4"}},
	}
	assert.Equal(t, want, got, "DecodeMounts")

	text = "root:\n  /repo: {local: ./nope}\n"
	require.NoError(t, yaml.Unmarshal([]byte(text), &doc))
	_, err = DecodeMounts(&doc.Root, base)
	wantErr := "line 2: /repo: directory " + filepath.Join(base, "nope") + " does not exist"
	assert.EqualError(t, err, wantErr, "DecodeMounts error")
	_, err = DecodeMountsFile(&doc.Root, "agent.yaml", base)
	assert.EqualError(t, err, "agent.yaml:"+strings.TrimPrefix(wantErr, "line "), "DecodeMountsFile error, want it to name agent.yaml")

	var null yaml.Node
	got, err = DecodeMounts(&null, base)
	assert.NoError(t, err, "DecodeMounts(empty node)")
	assert.Empty(t, got, "DecodeMounts(empty node), want an empty table")
}

// FuzzParse checks that any config text parses or fails with an *Error,
// never panics, and that a parsed table has clean, unique prefixes.
func FuzzParse(f *testing.F) {
	base := f.TempDir()
	require.NoError(f, os.MkdirAll(filepath.Join(base, "src"), 0o755))
	for _, s := range []string{
		"mounts:\n  /repo: { local: ./src }\n  /notes: { temp: {} }\n",
		"mounts:\n  /d:\n    overlay:\n      - local: ./src\n      - temp: {/a: b}\n",
		"mounts:\n  /u:\n    ro: true\n    union:\n      /a: local:./src?ro\n",
		"mounts:\n  /u: &a\n    union:\n      /x: *a\n",
		"mounts: {/a: {temp: {/x: '1', /x/y: '2'}}}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		tab, err := Parse([]byte(text), "f.yaml", base)
		if err != nil {
			var se *Error
			require.ErrorAs(t, err, &se, "Parse error %T (%v), want *Error", err, err)
			return
		}
		checkTable(t, tab)
	})
}

func checkTable(t *testing.T, tab Table) {
	seen := map[string]bool{}
	for _, m := range tab {
		require.True(t, strings.HasPrefix(m.Prefix, "/"), "bad prefix %q in %v", m.Prefix, tab)
		require.Equal(t, m.Prefix, filepath.Clean(m.Prefix), "bad prefix %q in %v", m.Prefix, tab)
		require.False(t, seen[m.Prefix], "duplicate prefix %q in %v", m.Prefix, tab)
		seen[m.Prefix] = true
		for _, l := range m.Spec.Layers {
			checkTable(t, Table{{"/", l}})
		}
		checkTable(t, m.Spec.Mounts)
	}
}
