package plugins_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/internal/julyfscli"
	_ "github.com/julyfs/julyfs/plugins/pluginkind" // the in-process CLI runs plugins
)

// julyfs runs the julyfs CLI in process, bounded by two minutes.
func julyfs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	code = julyfscli.Run(ctx, append([]string{"julyfs"}, args...), strings.NewReader(""), &out, &errOut, julyfscli.Heavy{})
	require.NoError(t, ctx.Err(), "julyfs %s ended by the test's bound", args)
	return code, out.String(), errOut.String()
}

// TestConformanceHungPlugin: a plugin that answers nothing fails each
// check after --check-timeout, and the run goes on to the next check.
func TestConformanceHungPlugin(t *testing.T) {
	t.Setenv("TESTPLUGIN_HANG", "1") // its seeded trees hang
	code, out, errOut := julyfs(t, "conformance", "--mount", "/=plugin:"+bins.plugin, "--read-only", "--check-timeout", "300ms", "--run", "^(List/children|Stat/files)$")
	assert.Equal(t, 1, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, out)
	assert.Equal(t, "FAIL List/children: no answer within 300ms (abandoned)", lines[0])
	assert.Equal(t, "FAIL Stat/files: no answer within 300ms (abandoned)", lines[1])
	assert.Equal(t, "0 passed, 2 failed", lines[2])
}

// TestConformanceHungOpen: a plugin whose Open hangs fails the run at
// once, after the check timeout, with one line.
func TestConformanceHungOpen(t *testing.T) {
	t.Setenv("TESTPLUGIN_HANG", "open")
	code, _, errOut := julyfs(t, "conformance", "--mount", "/=plugin:"+bins.plugin, "--read-only", "--check-timeout", "300ms")
	assert.Equal(t, 1, code)
	assert.Equal(t, "plugin testplugin: open: no answer within 300ms (raise it with --check-timeout)\n", errOut)
}

// TestVerbPluginTimeout: a one-shot verb on a plugin that hangs fails
// after --plugin-timeout with one line saying how to raise it.
func TestVerbPluginTimeout(t *testing.T) {
	spec := "/p=plugin:" + bins.plugin + "?mode=hang"
	for _, args := range [][]string{
		{"ls", "/p"},
		{"stat", "/p/a"},
		{"cat", "/p/a"},
		{"grep", "x", "/p"},
	} {
		code, _, errOut := julyfs(t, append(args, "--mount", spec, "--mount", "/n=temp:", "--plugin-timeout", "300ms")...)
		assert.Equal(t, 1, code, "%s", args)
		assert.Contains(t, errOut, "no answer within 300ms (raise it with --plugin-timeout, 0 for no bound)", "%s", args)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
	}
	// A plugin whose Open hangs: the mount is bound with a warning, and
	// the verb's call fails with the same bound.
	code, _, errOut := julyfs(t, "ls", "/p", "--mount", spec+"&hang=open", "--mount", "/n=temp:", "--plugin-timeout", "300ms")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "open: no answer within 300ms (raise it with --plugin-timeout, 0 for no bound)")
}
