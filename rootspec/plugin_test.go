package rootspec

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePluginFlag(t *testing.T) {
	m, err := ParseMount("/repo=plugin:julyfs-git?repo=.&ref=v1.2.0&sha256=abcd&ro", "/work")
	require.NoError(t, err)
	assert.Equal(t, KindPlugin, m.Spec.Kind)
	assert.Equal(t, &PluginSpec{Path: "julyfs-git", Args: map[string]string{"repo": ".", "ref": "v1.2.0"}, SHA256: "abcd", Dir: "/work"}, m.Spec.Plugin)
	assert.True(t, m.Spec.ReadOnly)
	assert.Equal(t, "plugin:julyfs-git?ref=v1.2.0&repo=.&sha256=abcd", m.Spec.Source())

	for value, want := range map[string]string{
		"/=plugin:":               `invalid --mount "/=plugin:": plugin: needs a binary, e.g. plugin:julyfs-git?repo=.&ref=main`,
		"/=plugin:x?a=1&a=2":      `invalid --mount "/=plugin:x?a=1&a=2": plugin: parameter a given twice`,
		"/=plugin:x?=1":           `invalid --mount "/=plugin:x?=1": plugin: bad parameter "=1"`,
		"/=plugin:x?ro=maybe&a=1": `invalid --mount "/=plugin:x?ro=maybe&a=1": option ro takes true or false, not "maybe"`,
	} {
		_, err := ParseMount(value, "/work")
		if assert.Error(t, err, value) {
			assert.Equal(t, want, err.Error())
		}
	}
}

func TestParsePluginYAML(t *testing.T) {
	table, err := Parse([]byte(`mounts:
  /repo: { plugin: { path: julyfs-git, args: { repo: ., ref: main }, sha256: ab } }
  /a: { plugin: ./bin/julyfs-archive, ro: true }
`), "agent.yaml", "/conf")
	require.NoError(t, err)
	require.Len(t, table, 2)
	assert.Equal(t, &PluginSpec{Path: "julyfs-git", Args: map[string]string{"repo": ".", "ref": "main"}, SHA256: "ab", Dir: "/conf"}, table[0].Spec.Plugin)
	assert.Equal(t, &PluginSpec{Path: "./bin/julyfs-archive", Dir: "/conf"}, table[1].Spec.Plugin)
	assert.True(t, table[1].Spec.ReadOnly)

	_, err = Parse([]byte("mounts:\n  /r: { plugin: { pth: x } }\n"), "agent.yaml", "/conf")
	require.Error(t, err)
	assert.Equal(t, `agent.yaml:2: /r: plugin: unknown key "pth" (known: path, args, sha256)`, err.Error())
}

func TestPluginWithoutSupport(t *testing.T) {
	m, err := ParseMount("/x=plugin:./some-plugin", t.TempDir())
	require.NoError(t, err)
	table := Table{{Prefix: "/t", Spec: Spec{Kind: KindTemp}}, {Prefix: "/u", Spec: Spec{Kind: KindUnion, Mounts: Table{m}}}}
	assert.True(t, table.NeedsPlugins())
	assert.False(t, table[:1].NeedsPlugins())
	require.False(t, PluginsAvailable(), "rootspec links no plugin machinery")
	_, err = table.Open(context.Background())
	require.ErrorIs(t, err, ErrNoPluginSupport)
	assert.Equal(t, "--mount /x=plugin:./some-plugin: this program cannot run plugins (it does not link plugins/pluginkind)", err.Error())
}
