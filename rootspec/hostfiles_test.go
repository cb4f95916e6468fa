package rootspec_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/julyfs/julyfs/rootspec"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore/pgtest"
)

func TestHostfilesFlag(t *testing.T) {
	base := t.TempDir()
	for _, c := range []struct {
		value, store, scope, str string
		ro                       bool
	}{
		{"/host=hostfiles:./state", base + "/state", "deployment", "/host=hostfiles:" + base + "/state?scope=deployment", false},
		{"/host=hostfiles:./state?scope=session,ro", base + "/state", "session", "/host=hostfiles:" + base + "/state?scope=session,ro", true},
		{"/host=hostfiles:/abs?scope=session:abc", "/abs", "session:abc", "/host=hostfiles:/abs?scope=session:abc", false},
		{"/host=hostfiles:postgres://u:pw@h:5433/db?scope=deployment", "postgres://u:pw@h:5433/db", "deployment", "/host=hostfiles:postgres://u@h:5433/db?scope=deployment", false},
		{"/host=hostfiles:postgres://u:pw@h/db?sslmode=disable", "postgres://u:pw@h/db?sslmode=disable", "deployment", "/host=hostfiles:postgres://u@h:5432/db?scope=deployment", false},
		{"/host=hostfiles:postgres://u:pw@h/db?sslmode=disable?scope=session", "postgres://u:pw@h/db?sslmode=disable", "session", "/host=hostfiles:postgres://u@h:5432/db?scope=session", false},
	} {
		m, err := rootspec.ParseMount(c.value, base)
		require.NoError(t, err, c.value)
		assert.Equal(t, rootspec.KindHostfiles, m.Spec.Kind, c.value)
		assert.Equal(t, c.store, m.Spec.Store, c.value)
		assert.Equal(t, c.scope, m.Spec.Scope, c.value)
		assert.Equal(t, c.ro, m.Spec.ReadOnly, c.value)
		assert.Equal(t, c.str, m.String(), c.value)
		assert.NotContains(t, m.Spec.Arg(), "pw", c.value)
	}
	for _, c := range []struct{ value, want string }{
		{"/host=hostfiles:", "hostfiles: needs a store"},
		{"/host=hostfiles:?scope=session", "hostfiles: needs a store"},
		{"/host=hostfiles:./s?scope=nope", `scope "nope": want deployment, session or session:ID`},
		{"/host=hostfiles:./s?scope=session:..", `invalid scope "session-..": contains ".."`},
		{"/host=hostfiles:http://x:pw@h/", `hostfiles store "postgres://?": want a directory or a postgres:// URL`},
	} {
		_, err := rootspec.ParseMount(c.value, base)
		if assert.Error(t, err, c.value) {
			assert.Contains(t, err.Error(), c.want, c.value)
			assert.NotContains(t, err.Error(), "pw")
		}
	}
}

func TestHostfilesYAML(t *testing.T) {
	base := t.TempDir()
	decode := func(src string) (rootspec.Table, error) {
		var n yaml.Node
		require.NoError(t, yaml.Unmarshal([]byte(src), &n))
		return rootspec.DecodeMountsFile(n.Content[0], "agent.yaml", base)
	}
	tab, err := decode(`
/: { temp: {} }
/host: { hostfiles: { url: "postgres://julyfs:pw@db/julyfs", scope: session } }
/state: { hostfiles: ./state, ro: true }
/flag: "hostfiles:./f?scope=session:x"
`)
	require.NoError(t, err)
	require.Len(t, tab, 4)
	assert.Equal(t, rootspec.Spec{Kind: "hostfiles", Store: "postgres://julyfs:pw@db/julyfs", Scope: "session", Origin: "agent.yaml:3"}, tab[1].Spec)
	assert.Equal(t, filepath.Join(base, "state"), tab[2].Spec.Store)
	assert.True(t, tab[2].Spec.ReadOnly)
	assert.Equal(t, "session:x", tab[3].Spec.Scope)
	for src, want := range map[string]string{
		`/h: { hostfiles: { scope: session } }`:          `agent.yaml:1: /h: hostfiles: needs url: (a directory or a postgres:// URL)`,
		`/h: { hostfiles: { url: ./s, scope: global } }`: `agent.yaml:1: /h: scope "global": want deployment, session or session:ID`,
		`/h: { hostfiles: { url: ./s, cache: true } }`:   `agent.yaml:1: /h: hostfiles: unknown key "cache" (keys: url, scope)`,
		`/h: { hostfiles: [a] }`:                         `agent.yaml:1: /h: hostfiles: wants a directory, a postgres:// URL or {url: ..., scope: ...}, got a list`,
	} {
		_, err := decode(src)
		if assert.Error(t, err, src) {
			assert.Equal(t, want, err.Error(), src)
		}
	}
}

func TestHostfilesOpen(t *testing.T) {
	ctx := t.Context()
	base := t.TempDir()
	tab, err := rootspec.ParseMounts([]string{"/=temp:", "/host=hostfiles:./state?scope=session"}, base)
	require.NoError(t, err)
	t.Setenv(rootspec.EnvSessionID, "")
	_, err = tab.Open(ctx)
	require.ErrorContains(t, err, "scope=session needs a session id")

	root, err := tab.Open(rootspec.WithSessionID(ctx, "s-42"))
	require.NoError(t, err)
	require.NoError(t, root.FS.Write(ctx, "/host/notes.md", []byte("kept")))
	require.NoError(t, root.Close())
	data, err := os.ReadFile(filepath.Join(base, "state", "session-s-42", "notes.md"))
	require.NoError(t, err)
	assert.Equal(t, "kept", string(data))
}

func TestHostfilesOpenPostgres(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	tab, err := rootspec.ParseMounts([]string{"/=temp:", "/host=hostfiles:" + url + "?scope=session:rootspec-test"}, t.TempDir())
	require.NoError(t, err)
	a, err := tab.Open(ctx)
	require.NoError(t, err)
	defer a.Close()
	b, err := tab.Open(ctx)
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, a.FS.Write(ctx, "/host/x.md", []byte("from a")))
	got, err := b.FS.Read(ctx, "/host/x.md")
	require.NoError(t, err)
	assert.Equal(t, "from a", string(got))
	require.NoError(t, a.FS.Write(ctx, "/host/x.md", []byte("a again")))
	err = b.FS.Write(ctx, "/host/x.md", []byte("from b"))
	require.EqualError(t, err, "conflict: /host/x.md")
}

func TestHostfilesPasswordNeverEchoed(t *testing.T) {
	for _, v := range []string{
		"/host=hostfiles:postgres://julyfs:s3cret@db/julyfs?scope=bogus",
		"/host=hostfiles:postgres://julyfs:s3cret@db/julyfs?scope=session:a/b",
	} {
		_, err := rootspec.ParseMount(v, "/")
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "s3cret")
		assert.Contains(t, err.Error(), "postgres://julyfs:xxxxx@db/julyfs")
	}
	m, err := rootspec.ParseMount("/host=hostfiles:postgres://julyfs:s3cret@127.0.0.1:1/julyfs?connect_timeout=2?scope=deployment", "/")
	require.NoError(t, err)
	assert.NotContains(t, m.Spec.Origin, "s3cret")
	_, err = rootspec.Table{m}.Open(t.Context())
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "s3cret")
	assert.Contains(t, err.Error(), "hostfiles store postgres://julyfs@127.0.0.1:1/julyfs")
}
