// Package pluginkind makes the rootspec kind plugin: openable: import it
// (for its side effect) in a binary that mounts plugins. julyfsd and july
// do; julyfs does not, to keep gRPC out of its start-up, and hands
// commands with plugin mounts to julyfsd.
//
// A plugin mount whose plugin cannot start is bound anyway
// (plugins.Config.Deferred): its calls answer the start error and try
// again later, and rootspec warns about it once when it binds the tree,
// so the other mounts serve. A seeded open (conformance checks) fails
// instead.
//
// The bound on each plugin call comes from the context of the open
// (rootspec.WithPluginCallTimeout, which the one-shot julyfs verbs set).
package pluginkind

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/rootspec"
	"github.com/julyfs/julyfs/vfs"
)

func init() {
	rootspec.RegisterPluginOpener(open)
	rootspec.RegisterPluginChecker(check)
}

func check(p rootspec.PluginSpec) error {
	return plugins.Check(plugins.Config{Path: p.Path, Args: p.Args, SHA256: p.SHA256, Dir: p.Dir})
}

func open(ctx context.Context, p rootspec.PluginSpec, seeded bool, seed map[string][]byte) (vfs.FileSystem, io.Closer, error) {
	timeout, hint := rootspec.PluginCallTimeout(ctx)
	fsys, err := plugins.OpenConfig(ctx, plugins.Config{Path: p.Path, Args: p.Args, SHA256: p.SHA256, Dir: p.Dir, Seeded: seeded, Seed: seed, Deferred: !seeded, CallTimeout: timeout, CallTimeoutHint: hint})
	if errors.Is(err, plugins.ErrNoSeed) {
		return nil, nil, fmt.Errorf("%w: %w", rootspec.ErrPluginNoSeed, err)
	}
	if err != nil {
		return nil, nil, err
	}
	return fsys, fsys, nil
}
