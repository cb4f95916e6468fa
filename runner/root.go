package runner

import (
	"context"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/julyfs/julyfs/rootspec"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// This file is the one place the runner turns root: into a tree: the
// mount-table grammar and the builders belong to rootspec.

// rootTable is an agent's decoded root.
type rootTable struct {
	table rootspec.Table
}

// ScratchPrefix is the reserved turn-scratch mount.
const ScratchPrefix = "/tmp"

// decodeRoot decodes agent.yaml's root: mapping (the grammar of a root
// config file's mounts:) with relative directories resolved against the
// agent's directory. An empty mapping (root: {}) is the spec's empty
// virtual workspace: "/" with nothing in it. A mount at or under the
// reserved /tmp is legal; when the plan binds scratch it is shadowed each
// turn, which shadowedTmp reports as a warning.
func decodeRoot(node *yaml.Node, agentDir string) (*rootTable, []Problem) {
	t, err := rootspec.DecodeMountsFile(node, ConfigFile, agentDir)
	if err != nil {
		return nil, []Problem{{Field: "root", Message: err.Error()}}
	}
	return &rootTable{table: t}, nil
}

// shadowedTmp returns a warning for each authored mount at or under /tmp,
// which the per-turn scratch /tmp hides.
func (t *rootTable) shadowedTmp() []Problem {
	var out []Problem
	for _, m := range t.table {
		if vfs.HasPrefix(m.Prefix, ScratchPrefix) {
			out = append(out, Problem{Field: "root", Message: fmt.Sprintf("mount %s is under %s, which each turn binds to an empty scratch tree: the mount is shadowed and the model never sees it; mount it elsewhere", m.Prefix, ScratchPrefix)})
		}
	}
	return out
}

// buildRoot builds the authored tree; close releases what it holds.
func buildRoot(ctx context.Context, t *rootTable) (fsys vfs.FileSystem, close func() error, err error) {
	if len(t.table) == 0 {
		return temp.Empty(), func() error { return nil }, nil
	}
	r, err := t.table.Open(ctx)
	if err != nil {
		return nil, nil, err
	}
	return r.FS, r.Close, nil
}

// hostTree is the host default: the host disk at dir.
func hostTree(dir string) (vfs.FileSystem, func() error, error) {
	fsys, err := local.New(dir)
	if err != nil {
		return nil, nil, err
	}
	return fsys, fsys.Close, nil
}

// withScratch composes a turn's tree: the authored root at / with a fresh
// empty tree at /tmp, holding at most quota bytes when quota > 0. It also
// returns the temp tree itself (for the watch view, which is not held to
// the quota).
func withScratch(authored vfs.FileSystem, quota int64) (vfs.FileSystem, vfs.FileSystem, error) {
	tmp, err := temp.New(nil)
	if err != nil {
		return nil, nil, err
	}
	var scratch vfs.FileSystem = tmp
	if quota > 0 {
		scratch = newQuotaFS(tmp, quota)
	}
	u, err := union.New([]union.Mount{{Prefix: "/", FS: authored}, {Prefix: ScratchPrefix, FS: scratch}})
	return u, tmp, err
}

// TreeDescription describes the agent's tree: its mount table in the
// --mount flag form ("/=temp:1 file, /docs=local:/abs/docs?ro"), or "host
// disk at DIR" for the host default.
func (a *Agent) TreeDescription() string {
	if a.root == nil {
		return "host disk at " + vfs.DisplayPath(a.Cwd)
	}
	if len(a.root.table) == 0 {
		return "empty (root: {})"
	}
	parts := make([]string, len(a.root.table))
	for i, m := range a.root.table {
		parts[i] = m.String()
		if a.live != nil {
			if v, ok := a.live.prefixes[m.Prefix]; ok {
				parts[i] = m.Prefix + "=" + v + " (per session)"
			}
		}
	}
	return strings.Join(parts, ", ")
}
