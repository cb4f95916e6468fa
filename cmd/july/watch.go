package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/fusemount"
	"github.com/julyfs/julyfs/runner"
)

// This file is --mount DIR of july run and july mcp: the session's tree
// (its root and the current turn's /tmp) mounted through fusemount for
// the life of the process, so a person can ls, cat and grep what the agent
// is doing. Read-only unless --mount-rw.

var watchFlags = []cli.Flag{
	&cli.StringFlag{Name: "mount", Usage: "mount the session's tree (root and the turn's /tmp) on `DIR` while july runs, read-only"},
	&cli.BoolFlag{Name: "mount-rw", Usage: "with --mount: let writes through the mount reach the tree"},
}

// mountWatch mounts s's tree on --mount's directory; the returned func
// unmounts it. Without --mount it does nothing.
func mountWatch(c *cli.Context, s *runner.Session) (func(), error) {
	dir := c.String("mount")
	if dir == "" {
		if c.Bool("mount-rw") {
			return nil, usagef(c, "--mount-rw needs --mount DIR")
		}
		return func() {}, nil
	}
	tree, err := s.WatchTree()
	if err != nil {
		return nil, err
	}
	rw := c.Bool("mount-rw")
	srv, err := fusemount.Mount(dir, tree, fusemount.Options{ReadOnly: !rw, FsName: "july"})
	if err != nil {
		return nil, fmt.Errorf("--mount: %w", err)
	}
	mode := "read-only"
	if rw {
		mode = "read-write"
	}
	fmt.Fprintf(c.App.ErrWriter, "july: the session's tree is mounted on %s (%s) until july exits\n", srv.Dir(), mode)
	s.SetTreeMount(srv.Dir())
	return func() {
		s.SetTreeMount("")
		if err := srv.Unmount(); err != nil {
			srv.UnmountLazy()
		}
	}, nil
}
