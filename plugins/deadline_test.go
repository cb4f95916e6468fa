package plugins_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs"
)

// TestCallTimeout: with Config.CallTimeout every call to a plugin that
// never answers fails with "no answer within" the timeout, naming the
// plugin and the call, instead of hanging; the test's own wait is bounded
// by a context ten times longer.
func TestCallTimeout(t *testing.T) {
	const d = 300 * time.Millisecond
	fsys := open(t, plugins.Config{Args: map[string]string{"mode": "hang"}, CallTimeout: d, CallTimeoutHint: "raise it with --plugin-timeout"})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	want := func(op string, err error) {
		t.Helper()
		require.Error(t, err, op)
		assert.ErrorIs(t, err, plugins.ErrNoAnswer, op)
		assert.ErrorIs(t, err, context.DeadlineExceeded, op)
		assert.Equal(t, "plugin testplugin: "+op+": no answer within 300ms (raise it with --plugin-timeout)", err.Error(), op)
	}
	_, err := fsys.Stat(ctx, "/a")
	want("Stat /a", err)
	_, err = collect(fsys.List(ctx, "/"))
	want("List /", err)
	_, err = collect(fsys.Glob(ctx, "*", "/"))
	want("Glob *", err)
	_, err = collect(fsys.Grep(ctx, vfs.GrepQuery{Pattern: "x"}))
	want("Grep x", err)
	_, err = fsys.Read(ctx, "/a")
	want("Read /a", err)
	want("Write /a", fsys.Write(ctx, "/a", []byte("x")))
	want("Delete /a", fsys.Delete(ctx, "/a"))
	require.NoError(t, ctx.Err(), "the calls ended by their own deadline")

	// A plugin whose Open hangs fails to start, and says so.
	err = openErr(t, plugins.Config{Path: bins.plugin, Args: map[string]string{"mode": "hang", "hang": "open"}, CallTimeout: d})
	assert.ErrorIs(t, err, plugins.ErrNoAnswer)
	assert.EqualError(t, err, "plugin testplugin: open: no answer within 300ms")
}

// TestCallTimeoutSparesSlowConsumers: the deadline counts the plugin's
// time only; a caller that takes long over each entry is not cut off.
func TestCallTimeoutSparesSlowConsumers(t *testing.T) {
	const d = 200 * time.Millisecond
	fsys := open(t, plugins.Config{Args: map[string]string{"mode": "faults"}, CallTimeout: d})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	n := 0
	for _, err := range fsys.List(ctx, "/inf") {
		require.NoError(t, err)
		if n == 0 {
			time.Sleep(3 * d) // longer than d over the first entry
		}
		if n++; n == 10000 { // batches of at most 4096: more come after the pause
			break
		}
	}
	assert.Equal(t, 10000, n)
}
