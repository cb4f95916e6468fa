package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/julyfs/julyfs/runner/tools"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
)

// This file backs SemanticSearch with a vfs/index over the authored root.

// DefaultIndexDir is the index directory of index: true, relative to the
// agent's directory. vfs/index never indexes a .julyfs directory, so it
// stays out of its own index even when the agent directory is mounted.
const DefaultIndexDir = ".julyfs/index"

// indexDir resolves agent.yaml's index: a path (relative to the agent's
// directory), true for DefaultIndexDir, false or null for none. It returns
// the absolute directory, or a problem.
func indexDir(node *yaml.Node, agentDir string) (string, string) {
	if node.Kind == 0 || node.Tag == "!!null" {
		return "", ""
	}
	if node.Kind != yaml.ScalarNode {
		return "", "want a directory (relative to the agent directory) or true"
	}
	switch node.Tag {
	case "!!bool":
		var on bool
		if err := node.Decode(&on); err != nil || !on {
			return "", ""
		}
		return filepath.Join(agentDir, DefaultIndexDir), ""
	case "!!str":
		if node.Value == "" {
			return "", "empty: want a directory (relative to the agent directory) or true"
		}
		if filepath.IsAbs(node.Value) {
			return filepath.Clean(node.Value), ""
		}
		return filepath.Join(agentDir, node.Value), ""
	}
	return "", fmt.Sprintf("%s is not a directory: want a directory (relative to the agent directory) or true", node.Value)
}

// indexProblem says why the plan cannot use an index, or "".
func (p Plan) indexProblem() string {
	if !p.Root {
		return "the host default has no SemanticSearch served by july (semSearch is the harness's host index): remove index, or give the agent a root"
	}
	if !slices.Contains(p.FileTools, tools.NameSemanticSearch) {
		return "the tools allowlist leaves out semSearch, so nothing would search the index: add semSearch to tools, or remove index"
	}
	return ""
}

// openIndex wraps the authored tree in the index at dir, built or brought
// up to date before it returns.
func openIndex(ctx context.Context, fsys vfs.FileSystem, dir string, opts index.Options) (*index.FS, error) {
	idx, err := index.Open(ctx, fsys, dir, opts)
	switch {
	case err == nil:
		return idx, nil
	case errors.Is(err, index.ErrInUse):
		return nil, fmt.Errorf("index %s: %w (one july or julyfs at a time may open an index): wait for it to end, or use another index directory", dir, index.ErrInUse)
	case errors.Is(err, index.ErrCorrupt):
		return nil, fmt.Errorf("%w\n(july: remove %s and run again to rebuild it)", err, dir)
	}
	return nil, err
}

// resolveIndexDir returns the index directory a session uses: override
// (relative to the process's working directory) when set, else the
// agent's.
func (a *Agent) resolveIndexDir(override string) (string, error) {
	if override == "" {
		return a.IndexDir, nil
	}
	if msg := a.Plan.indexProblem(); msg != "" {
		return "", fmt.Errorf("agent %s: index %s: %s", a.Config.Name, override, msg)
	}
	return filepath.Abs(override)
}
