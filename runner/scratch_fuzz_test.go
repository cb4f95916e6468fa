package runner

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

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
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("input(%q) gave invalid JSON %s", p, out)
		}
		got := m["path"].(string)
		if got == p {
			return
		}
		clean := filepath.Clean(p)
		if !filepath.IsAbs(p) || filepath.Dir(clean) != host || !strings.HasSuffix(clean, ".txt") {
			t.Fatalf("input rewrote %q to %q", p, got)
		}
		if got != "/tmp/"+filepath.Base(clean) || strings.Count(got, "/") != 2 {
			t.Fatalf("input(%q) = %q, want /tmp/%s", p, got, filepath.Base(clean))
		}
		if m["pattern"] != "x" {
			t.Fatalf("other arguments changed: %v", m)
		}
	})
}
