package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/julyfs/julyfs/rootspec"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
)

// OpenBase binds the agent's tree as Open does (its authored root, a live
// root with sessionID, or the host disk), without its index and without
// writing its workspaceFiles: the base of a copy-on-write session
// (vfs/cow), which must not be written. An agent whose plan grants the
// host shell is refused: its shell writes the host directly, past any
// layer.
func (a *Agent) OpenBase(ctx context.Context, sessionID string) (vfs.FileSystem, func() error, error) {
	if a.Plan.Shell {
		return nil, nil, errors.New("a copy-on-write session needs an agent whose tools all go through its tree: this one has the host shell, which writes the host directly")
	}
	var (
		fsys  vfs.FileSystem
		close func() error
		err   error
	)
	switch {
	case a.live != nil:
		fsys, close, err = a.openLive(ctx, RootContext{SessionID: sessionID, AgentName: a.Config.Name})
	case a.Plan.Root:
		fsys, close, err = buildRoot(rootspec.WithSessionID(ctx, sessionID), a.root)
	default:
		fsys, close, err = hostTree(a.Cwd)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("agent %s: binding the tree: %w", a.Config.Name, err)
	}
	if close == nil {
		close = func() error { return nil }
	}
	return fsys, close, nil
}

// OpenBaseIndex wraps base (from OpenBase) in the index a session on the
// tree would use (agent.yaml's index, or override as
// SessionOptions.IndexDir gives it), built or brought up to date; nil when
// the agent has none.
func (a *Agent) OpenBaseIndex(ctx context.Context, base vfs.FileSystem, override string, opts index.Options) (*index.FS, error) {
	dir, err := a.resolveIndexDir(override)
	if err != nil || dir == "" {
		return nil, err
	}
	idx, err := openIndex(ctx, base, dir, opts)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", a.Config.Name, err)
	}
	return idx, nil
}
