package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/fusemount"
	"github.com/julyfs/julyfs/vfs/cow"
	"github.com/julyfs/julyfs/vfs/readonly"
)

// This file is july mount: a copy-on-write session's tree as it was at
// the end of a turn, mounted read-only for shell tools.

func mountCommand() *cli.Command {
	return &cli.Command{
		Name:      "mount",
		Usage:     "mount a copy-on-write session's tree as it was after a turn, read-only",
		ArgsUsage: "DIR SESSION MOUNTPOINT",
		Description: `Mounts the agent's tree with the session's changes up to the end of turn
--at N (0: the tree itself; default: the layer as it is now) on MOUNTPOINT,
read-only, until Ctrl-C or SIGTERM.

   july mount examples/project ses_01J... /mnt/t2 --at 2`,
		Flags: []cli.Flag{stateRootFlag, &cli.IntFlag{Name: "at", Value: -1, Usage: "the end of turn `N`"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 3 {
				return usagef(c, "want DIR SESSION MOUNTPOINT, got %d arguments", c.NArg())
			}
			mnt := c.Args().Get(2)
			t, err := openTarget(c)
			if err != nil {
				return err
			}
			es, err := t.State(c.Int("at"))
			if err != nil {
				return err
			}
			base, closeBase, err := t.Agent.OpenBase(c.Context, t.ID)
			if err != nil {
				return err
			}
			defer closeBase()
			view := readonly.New(cow.View(base, t.LayerDir(), es))
			// Signals are caught before the mount answers: one that came
			// between would leave the mount without its server.
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sig)
			srv, err := fusemount.Mount(mnt, view, fusemount.Options{ReadOnly: true, FsName: "july"})
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.ErrWriter, "july: session %s mounted read-only on %s; Ctrl-C to unmount\n", t.ID, srv.Dir())
			select {
			case <-sig:
			case <-c.Context.Done():
			}
			if err := srv.Unmount(); err != nil {
				srv.UnmountLazy()
			}
			return nil
		},
	}
}
