package rootspec

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
)

func TestParseMount(t *testing.T) {
	base := t.TempDir()
	src := filepath.Join(base, "src")
	require.NoError(t, os.Mkdir(src, 0o755))
	tests := []struct {
		value string
		want  Mount
	}{
		{"/=temp:", Mount{"/", Spec{Kind: KindTemp}}},
		{"/notes=temp:?ro", Mount{"/notes", Spec{Kind: KindTemp, ReadOnly: true}}},
		{"/repo=local:./src", Mount{"/repo", Spec{Kind: KindLocal, Dir: src}}},
		{"/repo/=local:src", Mount{"/repo", Spec{Kind: KindLocal, Dir: src}}},
		{"/a/../repo=local:" + src, Mount{"/repo", Spec{Kind: KindLocal, Dir: src}}},
		{"/docs=local:./src?ro", Mount{"/docs", Spec{Kind: KindLocal, Dir: src, ReadOnly: true}}},
		{"/docs=local:./src?readonly=true", Mount{"/docs", Spec{Kind: KindLocal, Dir: src, ReadOnly: true}}},
		{"/docs=local:./src?ro,ro=false", Mount{"/docs", Spec{Kind: KindLocal, Dir: src}}},
		{"/docs=local:./src?", Mount{"/docs", Spec{Kind: KindLocal, Dir: src}}},
		{"/docs=local:./src/../src/", Mount{"/docs", Spec{Kind: KindLocal, Dir: src}}},
	}
	for _, tt := range tests {
		got, err := ParseMount(tt.value, base)
		if !assert.NoError(t, err, "ParseMount(%q)", tt.value) {
			continue
		}
		tt.want.Spec.Origin = "--mount " + tt.value
		assert.Equal(t, tt.want, got, "ParseMount(%q)", tt.value)
	}
}

func TestParseMountErrors(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file.txt")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	tests := []struct {
		value string
		want  string // the whole message
	}{
		{"/repo", `invalid --mount "/repo": missing '=': want PREFIX=KIND:ARG, e.g. /repo=local:./src or /=temp:`},
		{"", `invalid --mount "": missing '=': want PREFIX=KIND:ARG, e.g. /repo=local:./src or /=temp:`},
		{"=temp:", `invalid --mount "=temp:": missing prefix before '=': want an absolute path such as / or /repo`},
		{"repo=temp:", `invalid --mount "repo=temp:": prefix "repo" is not absolute: want /repo`},
		{"./repo=temp:", `invalid --mount "./repo=temp:": prefix "./repo" is not absolute: want /repo`},
		{"/=temp", `invalid --mount "/=temp": missing ':' after the kind: want temp:`},
		{"/=./src", `invalid --mount "/=./src": missing KIND: want KIND:ARG with KIND one of hostfiles, local, plugin, temp`},
		{"/=nfs:server", `invalid --mount "/=nfs:server": unknown kind "nfs" (known: hostfiles, local, plugin, temp)`},
		{"/=:x", `invalid --mount "/=:x": missing KIND before ':': want one of hostfiles, local, plugin, temp`},
		{"/=overlay:x", `invalid --mount "/=overlay:x": kind overlay has no --mount form; write it in a --config file`},
		{"/=union:", `invalid --mount "/=union:": kind union has no --mount form; write it in a --config file`},
		{"/=local:", `invalid --mount "/=local:": local: needs a directory, e.g. local:./src`},
		{"/=local:?ro", `invalid --mount "/=local:?ro": local: needs a directory, e.g. local:./src`},
		{"/=local:nope", `invalid --mount "/=local:nope": directory ` + filepath.Join(base, "nope") + ` does not exist`},
		{"/=local:file.txt", `invalid --mount "/=local:file.txt": ` + file + ` is not a directory`},
		{"/=temp:seed", `invalid --mount "/=temp:seed": temp: takes no argument, got "seed" (seed files need a --config file)`},
		{"/=temp:?rw", `invalid --mount "/=temp:?rw": unknown option "rw" (known: readonly, ro)`},
		{"/=temp:?ro,", `invalid --mount "/=temp:?ro,": empty option in "?ro,"`},
		{"/=temp:?ro=yes", `invalid --mount "/=temp:?ro=yes": option ro takes true or false, not "yes"`},
	}
	for _, tt := range tests {
		_, err := ParseMount(tt.value, base)
		if !assert.Error(t, err, "ParseMount(%q) succeeded, want error %q", tt.value, tt.want) {
			continue
		}
		var se *Error
		assert.ErrorAs(t, err, &se, "ParseMount(%q) error %T, want *Error", tt.value, err)
		assert.EqualError(t, err, tt.want, "ParseMount(%q)", tt.value)
	}
}

func TestParseMounts(t *testing.T) {
	base := t.TempDir()
	got, err := ParseMounts([]string{"/b=temp:", "/a=local:.?ro"}, base)
	require.NoError(t, err)
	want := []string{"/b=temp:", "/a=local:" + base + "?ro"}
	var gotS []string
	for _, m := range got {
		gotS = append(gotS, m.String())
	}
	assert.Equal(t, want, gotS, "ParseMounts (order kept)")

	_, err = ParseMounts([]string{"/a=temp:", "/a/=local:."}, base)
	const wantErr = `invalid --mount "/a/=local:.": prefix /a is already mounted by /a=temp:`
	assert.EqualError(t, err, wantErr, "ParseMounts(duplicate)")
}

// TestMountStringRoundTrip checks that String renders the flag form, which
// parses back to the same mount (a '?' in a directory name included).
func TestMountStringRoundTrip(t *testing.T) {
	base := t.TempDir()
	odd := filepath.Join(base, "a?b,c=d")
	require.NoError(t, os.Mkdir(odd, 0o755))
	for _, m := range []Mount{
		{"/", Spec{Kind: KindTemp}},
		{"/x", Spec{Kind: KindTemp, ReadOnly: true}},
		{"/y", Spec{Kind: KindLocal, Dir: odd}},
		{"/z", Spec{Kind: KindLocal, Dir: odd, ReadOnly: true}},
	} {
		s := m.String()
		got, err := ParseMount(s, "/")
		if !assert.NoError(t, err, "ParseMount(%q)", s) {
			continue
		}
		got.Spec.Origin = ""
		assert.Equal(t, m, got, "ParseMount(%q)", s)
	}
}

func TestOverride(t *testing.T) {
	file := Table{
		{"/repo", Spec{Kind: KindTemp, Origin: "file"}},
		{"/docs", Spec{Kind: KindTemp, Origin: "file"}},
	}
	flags := Table{
		{"/new", Spec{Kind: KindTemp, Origin: "flag"}},
		{"/repo", Spec{Kind: KindTemp, ReadOnly: true, Origin: "flag"}},
	}
	got := file.Override(flags)
	want := Table{
		{"/repo", Spec{Kind: KindTemp, ReadOnly: true, Origin: "flag"}},
		{"/docs", Spec{Kind: KindTemp, Origin: "file"}},
		{"/new", Spec{Kind: KindTemp, Origin: "flag"}},
	}
	assert.Equal(t, want, got, "Override")
	assert.Equal(t, "file", file[0].Spec.Origin, "Override modified its receiver")
}

func TestSpecMode(t *testing.T) {
	tests := []struct {
		s    Spec
		want string
	}{
		{Spec{Kind: KindTemp}, "rw"},
		{Spec{Kind: KindLocal, ReadOnly: true}, "ro"},
		{Spec{Kind: KindOverlay, Layers: []Spec{{Kind: KindTemp}}}, "ro"},
		{Spec{Kind: KindUnion, Mounts: Table{{"/a", Spec{Kind: KindTemp, ReadOnly: true}}}}, "ro"},
		{Spec{Kind: KindUnion, Mounts: Table{{"/a", Spec{Kind: KindTemp, ReadOnly: true}}, {"/b", Spec{Kind: KindTemp}}}}, "rw"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.s.Mode(), "%v.Mode()", tt.s)
	}
}

// flagSeeds reads testdata/flags.txt, with DIR replaced by dir.
func flagSeeds(t testing.TB, dir string) []string {
	f, err := os.Open("testdata/flags.txt")
	require.NoError(t, err)
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, strings.ReplaceAll(line, "DIR", dir))
	}
	return out
}

// FuzzParseMount checks that any value parses or fails with an *Error
// naming it, never panics, and that a parsed mount has a clean absolute
// prefix, a flag kind, an existing absolute directory for local, and
// renders back to a value that parses to the same mount.
func FuzzParseMount(f *testing.F) {
	dir := f.TempDir()
	for _, s := range flagSeeds(f, dir) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		m, err := ParseMount(value, dir)
		if err != nil {
			var se *Error
			require.ErrorAs(t, err, &se, "ParseMount(%q) error %T, want *Error", value, err)
			want := "invalid --mount " + strconv.Quote(value) + ": "
			require.True(t, strings.HasPrefix(err.Error(), want), "ParseMount(%q) error %q, want prefix %q", value, err, want)
			require.NotEmpty(t, se.Msg, "ParseMount(%q) error %q, want a message", value, err)
			return
		}
		require.True(t, strings.HasPrefix(m.Prefix, "/"), "ParseMount(%q) prefix %q is not absolute", value, m.Prefix)
		require.Equal(t, m.Prefix, vfs.Clean(m.Prefix), "ParseMount(%q) prefix %q is not clean", value, m.Prefix)
		require.Contains(t, FlagKinds(), m.Spec.Kind, "ParseMount(%q) kind %q is not a flag kind", value, m.Spec.Kind)
		if m.Spec.Kind == KindLocal {
			require.True(t, filepath.IsAbs(m.Spec.Dir), "ParseMount(%q) dir %q is not absolute", value, m.Spec.Dir)
			info, err := os.Stat(m.Spec.Dir)
			require.NoError(t, err, "ParseMount(%q) dir %q is not a directory", value, m.Spec.Dir)
			require.True(t, info.IsDir(), "ParseMount(%q) dir %q is not a directory", value, m.Spec.Dir)
		}
		again, err := ParseMount(m.String(), "/")
		require.NoError(t, err, "ParseMount(%q) = %v, whose String %q fails", value, m, m.String())
		again.Spec.Origin = m.Spec.Origin
		require.Equal(t, m, again, "round trip of %q", value)
	})
}
