package runner

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/web"
)

// FuzzSpillInput: the Read/Grep path rewrite only ever maps a file
// directly under the host agent-tools directory onto /tmp/<name>, and
// leaves every other argument as it was.
func FuzzSpillInput(f *testing.F) {
	host := "/work/proj/agent-tools"
	for _, seed := range []string{
		host + "/0b0e-uuid.txt", host + "/../etc/passwd.txt", host + "/a/b.txt", host, host + "/x.md",
		"/tmp/x.txt", "relative/agent-tools/x.txt", host + "//x.txt", host + "/./x.txt", "",
	} {
		f.Add(seed)
	}
	o := &overlaySpill{hostDir: host, spill: &web.Spill{Dir: "/work/proj"}}
	f.Fuzz(func(t *testing.T, p string) {
		args, _ := json.Marshal(map[string]any{"path": p, "pattern": "x"})
		var in map[string]any
		json.Unmarshal(args, &in)
		p = in["path"].(string) // what JSON carries (invalid UTF-8 replaced)
		out := o.input(args)
		var m map[string]any
		require.NoError(t, json.Unmarshal(out, &m), "input(%q) gave invalid JSON %s", p, out)
		got := m["path"].(string)
		if got == p {
			return
		}
		clean := filepath.Clean(p)
		require.True(t, filepath.IsAbs(p), "input rewrote %q to %q", p, got)
		require.Equal(t, host, filepath.Dir(clean), "input rewrote %q to %q", p, got)
		require.True(t, strings.HasSuffix(clean, ".txt"), "input rewrote %q to %q", p, got)
		require.Equal(t, "/tmp/"+filepath.Base(clean), got, "input(%q)", p)
		require.Equal(t, 2, strings.Count(got, "/"), "input(%q) = %q, want /tmp/%s", p, got, filepath.Base(clean))
		require.Equal(t, "x", m["pattern"], "other arguments changed: %v", m)
	})
}
