package rootspec

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

// notStarted is a plugin tree whose plugin could not start, as
// plugins/pluginkind returns it.
type notStarted struct {
	vfs.FileSystem
	err error
}

func (n notStarted) StartErr() error { return n.err }

// TestPluginStartWarning: binding a plugin mount whose plugin could not
// start warns once, naming where it was written and the mount's full
// prefix (inside a nested table too), on one line.
func TestPluginStartWarning(t *testing.T) {
	prev := pluginOpener
	t.Cleanup(func() { pluginOpener = prev })
	pluginOpener = func(ctx context.Context, p PluginSpec, seeded bool, seed map[string][]byte) (vfs.FileSystem, io.Closer, error) {
		fsys, err := temp.New(nil)
		require.NoError(t, err)
		if p.Path == "ok" {
			return fsys, io.NopCloser(nil), nil
		}
		return notStarted{fsys, errors.New("plugin " + p.Path + ": it\nbroke")}, io.NopCloser(nil), nil
	}
	plugin := func(path, origin string) Spec {
		return Spec{Kind: KindPlugin, Plugin: &PluginSpec{Path: path}, Origin: origin}
	}
	table := Table{
		{Prefix: "/", Spec: Spec{Kind: KindTemp}},
		{Prefix: "/good", Spec: plugin("ok", "agent.yaml:4")},
		{Prefix: "/u", Spec: Spec{Kind: KindUnion, Mounts: Table{{Prefix: "/q", Spec: plugin("bad", "agent.yaml:6")}}}},
	}
	var warnings []string
	ctx := WithWarn(t.Context(), func(msg string) { warnings = append(warnings, msg) })
	r, err := table.Open(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	assert.Equal(t, []string{`agent.yaml:6: mount /u/q: plugin bad: it\nbroke (the mount is bound; its calls answer this error until the plugin starts, which each call tries again after a backoff)`}, warnings)

	// A single plugin mount at / is mount /.
	warnings = nil
	r2, err := Table{{Prefix: "/", Spec: plugin("bad", "--mount /=plugin:bad")}}.Open(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { r2.Close() })
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "--mount /=plugin:bad: mount /: plugin bad:")
}

// TestCheckPlugins: CheckPlugins asks the registered checker about every
// plugin mount, nested and in overlays, naming each failure's origin and
// mount; without a checker it checks nothing.
func TestCheckPlugins(t *testing.T) {
	prev := pluginChecker
	t.Cleanup(func() { pluginChecker = prev })
	plugin := func(path, origin string) Spec {
		return Spec{Kind: KindPlugin, Plugin: &PluginSpec{Path: path}, Origin: origin}
	}
	table := Table{
		{Prefix: "/", Spec: plugin("bad1", "agent.yaml:3")},
		{Prefix: "/ok", Spec: plugin("ok", "agent.yaml:4")},
		{Prefix: "/o", Spec: Spec{Kind: KindOverlay, Layers: []Spec{{Kind: KindTemp}, plugin("bad2", "agent.yaml:6")}}},
		{Prefix: "/u", Spec: Spec{Kind: KindUnion, Mounts: Table{{Prefix: "/q", Spec: plugin("bad3", "agent.yaml:8")}}}},
	}
	pluginChecker = nil
	assert.Empty(t, table.CheckPlugins())
	pluginChecker = func(p PluginSpec) error {
		if p.Path == "ok" {
			return nil
		}
		return errors.New("plugin " + p.Path + ": missing")
	}
	var got []string
	for _, err := range table.CheckPlugins() {
		got = append(got, err.Error())
	}
	assert.Equal(t, []string{
		"agent.yaml:3: mount /: plugin bad1: missing",
		"agent.yaml:6: mount /o: plugin bad2: missing",
		"agent.yaml:8: mount /u/q: plugin bad3: missing",
	}, got)
}
