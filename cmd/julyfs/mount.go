package main

import (
	"fmt"
	"log"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/fusemount"
	"github.com/julyfs/julyfs/rootspec"
)

func mountCommand() *cli.Command {
	return &cli.Command{
		Name:      "mount",
		Usage:     "serve the tree as a FUSE filesystem on DIR until unmounted or interrupted",
		ArgsUsage: "DIR",
		Description: `Mounts the tree the --mount flags and --config describe on the directory DIR,
so every program sees it: ls, cat, grep -r, editors, compilers. The command
stays in the foreground serving the mount; stop it with Ctrl-C, SIGTERM or
'julyfs unmount DIR' from another shell. Stopping commits files still open
and unmounts, so nothing is left mounted.

   julyfs mount --mount /repo=local:./src --mount /notes=temp: /mnt/agent
   ls -la /mnt/agent/repo; grep -rn TODO /mnt/agent; echo hi > /mnt/agent/notes/a.md
   julyfs unmount /mnt/agent

DIR must exist, be empty and not be mounted already. As root julyfs mounts
with mount(2); otherwise it needs fusermount3 (Debian package fuse3).

What the shell sees is what the julyfs verbs answer: the same entries in the
same order, the same bytes. Writes are committed through the tree when a
file is closed or synced; rename is a copy then a delete (not atomic); a
directory made by mkdir is held by the mount until a file is written in it.
A tree with no writable mount is mounted read-only; --read-only makes any
tree read-only (writes fail with EROFS). A missing path is ENOENT; a
failing backend is EIO with a log line on stderr. See docs/mount.md.`,
		Flags: withTreeFlags(
			&cli.BoolFlag{Name: "read-only", Usage: "refuse every change with EROFS"},
			&cli.BoolFlag{Name: "debug", Usage: "trace every FUSE operation on stderr"},
			&cli.DurationFlag{Name: "entry-timeout", Value: fusemount.DefaultEntryTimeout, Usage: "how long the kernel caches a name lookup (0: not at all)"},
			&cli.DurationFlag{Name: "attr-timeout", Value: fusemount.DefaultAttrTimeout, Usage: "how long the kernel caches attributes (0: not at all)"},
			&cli.DurationFlag{Name: "negative-timeout", Usage: "how long the kernel caches that a name does not exist"},
			&cli.BoolFlag{Name: "allow-other", Usage: "let other users see the mount (non-root needs user_allow_other in /etc/fuse.conf)"},
			indexFlags()[0], indexFlags()[1],
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef(c, "mount takes one directory, got %d arguments", c.NArg())
			}
			dir := c.Args().First()
			table, err := loadTable(c)
			if err != nil {
				return err
			}
			// Check the mountpoint before opening any tree.
			if _, err := fusemount.CheckMountpoint(dir); err != nil {
				return err
			}
			root, err := table.Open(c.Context)
			if err != nil {
				return err
			}
			defer root.Close()
			// --index: the index serves Search and follows the mount's writes.
			fsys, closeIndex, err := openIndex(c, root.FS)
			if err != nil {
				return err
			}
			defer closeIndex()
			logger := log.New(c.App.ErrWriter, "julyfs: ", log.LstdFlags)
			opts := fusemount.Options{
				ReadOnly:        c.Bool("read-only") || !writable(table),
				Debug:           c.Bool("debug"),
				Logger:          logger,
				EntryTimeout:    cacheTimeout(c.Duration("entry-timeout")),
				AttrTimeout:     cacheTimeout(c.Duration("attr-timeout")),
				NegativeTimeout: c.Duration("negative-timeout"),
				AllowOther:      c.Bool("allow-other"),
			}
			return fusemount.Serve(c.Context, dir, fsys, opts, func(s *fusemount.Server) {
				mode := "read-write"
				if opts.ReadOnly {
					mode = "read-only"
				}
				fmt.Fprintf(c.App.ErrWriter, "julyfs: serving %d mount(s) on %s (%s); stop with Ctrl-C or 'julyfs unmount %s'\n",
					len(table), s.Dir(), mode, s.Dir())
			})
		},
	}
}

func unmountCommand() *cli.Command {
	return &cli.Command{
		Name:      "unmount",
		Usage:     "unmount a julyfs mount; its 'julyfs mount' process then exits",
		ArgsUsage: "DIR",
		Description: `Unmounts the julyfs mount on DIR. It fails while a program uses the mount
(a shell whose working directory is inside, an open file); --lazy detaches
it at once anyway (umount -l), and the mount process exits once those
programs let go.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "lazy", Usage: "detach even if busy"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef(c, "unmount takes one directory, got %d arguments", c.NArg())
			}
			return fusemount.Unmount(c.Args().First(), c.Bool("lazy"))
		},
	}
}

// writable reports whether any mount of the table accepts writes.
func writable(t rootspec.Table) bool {
	for _, m := range t {
		if m.Spec.Writable() {
			return true
		}
	}
	return false
}

// cacheTimeout maps the flag's 0 ("no caching") to fusemount's negative.
func cacheTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}
