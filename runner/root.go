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
// agent's directory, and refuses a mount at or under the reserved /tmp.
func decodeRoot(node *yaml.Node, agentDir string) (*rootTable, []Problem) {
	t, err := rootspec.DecodeMountsFile(node, ConfigFile, agentDir)
	if err != nil {
		return nil, []Problem{{Field: "root", Message: err.Error()}}
	}
	var problems []Problem
	if len(t) == 0 {
		problems = append(problems, Problem{Field: "root", Message: "the mount table is empty: mount a tree at / (for example root: { /: { temp: {} } }), or omit root for the host disk"})
	}
	for _, m := range t {
		if vfs.HasPrefix(m.Prefix, ScratchPrefix) {
			problems = append(problems, Problem{Field: "root", Message: fmt.Sprintf("mount %s is under the reserved %s (turn scratch: each turn binds an empty %s over the root, shadowing it); mount it elsewhere", m.Prefix, ScratchPrefix, ScratchPrefix)})
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return &rootTable{table: t}, nil
}

// buildRoot builds the authored tree; close releases what it holds.
func buildRoot(ctx context.Context, t *rootTable) (fsys vfs.FileSystem, close func() error, err error) {
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
// empty tree at /tmp.
// It also returns the scratch tree alone.
func withScratch(authored vfs.FileSystem) (vfs.FileSystem, vfs.FileSystem, error) {
	scratch, err := temp.New(nil)
	if err != nil {
		return nil, nil, err
	}
	u, err := union.New([]union.Mount{{Prefix: "/", FS: authored}, {Prefix: ScratchPrefix, FS: scratch}})
	return u, scratch, err
}

// TreeDescription describes the agent's tree: its mount table in the
// --mount flag form ("/=temp:1 file, /docs=local:/abs/docs?ro"), or "host
// disk at DIR" for the host default.
func (a *Agent) TreeDescription() string {
	if a.root == nil {
		return "host disk at " + a.Cwd
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
