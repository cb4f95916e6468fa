package julyfscli

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/vfs"
)

// Heavy carries out the commands that need FUSE (fusemount, go-fuse) or the
// search index (vfs/index, bleve): linking those packages costs every run
// of julyfs tens of milliseconds of start-up, so only julyfsd does.
//
// The commands themselves (their flags, help and argument checks) are
// defined here and are the same in both executables; a nil function hands
// the whole command line to Delegate instead. julyfsd passes full.Heavy(),
// julyfs the zero Heavy.
type Heavy struct {
	// Mount serves the tree of c's flags on dir until it is unmounted or
	// c.Context is cancelled ('julyfs mount').
	Mount func(c *cli.Context, dir string) error
	// Unmount unmounts the julyfs mount on dir ('julyfs unmount').
	Unmount func(c *cli.Context, dir string, lazy bool) error
	// IndexBuild indexes the tree of c's flags into the directory of its
	// --index flag and prints the summary line ('julyfs index build').
	IndexBuild func(c *cli.Context) error
	// IndexFollow keeps the index of c's flags up to date as the tree
	// changes and answers other processes' searches of it, until
	// c.Context is cancelled ('julyfs index follow').
	IndexFollow func(c *cli.Context) error
	// OpenIndex wraps fsys with the index in dir, built or brought up to
	// date first, so it serves Search ('julyfs search --index DIR'). The
	// caller calls close when done.
	OpenIndex func(c *cli.Context, fsys vfs.FileSystem, dir string) (_ vfs.FileSystem, close func() error, _ error)

	// Delegate runs the command line args (without the program name)
	// elsewhere, for a command whose function above is nil. Nil is
	// ExecCompanion: julyfsd replaces this process. Tests run julyfsd as a
	// child process instead.
	Delegate func(c *cli.Context, args []string) error
}

// delegate hands c's command line to h.Delegate (or julyfsd); what names
// the command for the error when julyfsd is missing: "julyfs mount".
func (h Heavy) delegate(c *cli.Context, what string) error {
	args := commandLine(c)
	if h.Delegate != nil {
		return h.Delegate(c, args)
	}
	return ExecCompanion(what, args)
}

// The defaults the heavy commands' flags show in --help. They are the
// values of fusemount and vfs/index, which julyfs does not link; package
// full's tests check that they agree.
const (
	DefaultEntryTimeout = time.Second // fusemount.DefaultEntryTimeout
	DefaultAttrTimeout  = time.Second // fusemount.DefaultAttrTimeout
	DefaultMaxFileSize  = 1 << 20     // index.DefaultMaxFileSize
)

// indexFlags are the flags of a command that can serve Search from an
// index: --index DIR (and --rebuild).
func indexFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{
			Name:  "index",
			Usage: "serve search from the index in `DIR` (built or brought up to date first; see 'julyfs index build')",
		},
		&cli.BoolFlag{
			Name:  "rebuild",
			Usage: "with --index: discard the index (damaged or not) and build it anew",
		},
		&cli.StringFlag{
			Name:  "sync",
			Value: "auto",
			Usage: "with --index: how to bring the index up to date first: `auto` (list only the directories changed since the last sync; see docs/index.md), always (walk the whole tree), never",
		},
	}
}

func indexCommand(h Heavy) *cli.Command {
	return &cli.Command{
		Name:  "index",
		Usage: "build and maintain search indexes",
		Subcommands: []*cli.Command{
			{
				Name:  "build",
				Usage: "index the tree for search, or bring an index up to date",
				Description: `Indexes every text file of the tree into DIR so 'julyfs search --index DIR'
can rank files by relevance. Binary files and files over --max-file-size
are skipped. Run it again to bring the index up to date: only files whose
size, modification time or etag changed are read again, and files gone from
the tree are dropped. An interrupted build resumes where it stopped.

On a terminal a progress bar shows on stderr; the summary line goes to
stdout:

   12345 files: 10734 indexed (94.0 MiB), 0 unchanged, 0 removed, 736 skipped binary, 8 skipped too large in 14.2s

A damaged index fails with a message naming --rebuild, which discards it
and builds anew. An index written by another julyfs format version is
rebuilt automatically.

Examples:
   julyfs index build --mount /repo=local:./src --index .julyfs/index
   julyfs search --mount /repo=local:./src --index .julyfs/index 'parse http header' --max 10`,
				Flags: withVerbFlags(
					&cli.StringFlag{Name: "index", Usage: "the index `DIR` (created when missing)", Required: true},
					&cli.BoolFlag{Name: "rebuild", Usage: "discard the index (damaged or not) and build it anew"},
					&cli.Int64Flag{Name: "max-file-size", Value: DefaultMaxFileSize, Usage: "skip files larger than `BYTES`"},
				),
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return Usagef(c, "index build takes no arguments, got %d", c.NArg())
					}
					if h.IndexBuild == nil {
						return h.delegate(c, "julyfs index build")
					}
					return h.IndexBuild(c)
				},
			},
			{
				Name:  "follow",
				Usage: "keep an index up to date as the tree changes, and answer searches of it, until interrupted",
				Description: `Opens the index in DIR (building it or bringing it up to date first, as
'julyfs index build' does), then follows the tree's changes as they happen:
inotify on every directory of local: mounts, so a file created, deleted,
renamed or rewritten in place is searchable about 0.1 s later, with no walk
of the tree. Meanwhile 'julyfs search --index DIR' (and july call) in other
processes ask this one instead of opening the index: each answer includes
every change made before the question, rewritten files included, which
--sync=auto alone does not see in trees over 20,000 files. 'julyfs mount
--index DIR', 'july run' and 'july mcp' do the same while they run.

It prints one line on stderr once it answers, and runs until interrupted
(Ctrl-C, SIGTERM).

Example:
   julyfs index follow --mount /repo=local:./src --index .julyfs/index &
   julyfs search --mount /repo=local:./src --index .julyfs/index 'parse http header'`,
				Flags: withVerbFlags(
					&cli.StringFlag{Name: "index", Usage: "the index `DIR` (created when missing)", Required: true},
				),
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return Usagef(c, "index follow takes no arguments, got %d", c.NArg())
					}
					if h.IndexFollow == nil {
						return h.delegate(c, "julyfs index follow")
					}
					return h.IndexFollow(c)
				},
			},
		},
	}
}

func mountCommand(h Heavy) *cli.Command {
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
file is closed or synced; rename is atomic within a local: or temp: mount
(elsewhere a copy then a delete); a
directory made by mkdir is held by the mount until a file is written in it.
A tree with no writable mount is mounted read-only; --read-only makes any
tree read-only (writes fail with EROFS). A missing path is ENOENT; a
failing backend is EIO with a log line on stderr.

Under systemd (NOTIFY_SOCKET set, as for a Type=notify service), julyfs
says READY=1 once the mount answers and STOPPING=1 when it stops. For
/etc/fstab, systemd .mount units and mount -t fuse.julyfs, see 'julyfs
install-helper'. See docs/mount.md.`,
		Flags: withTreeFlags(
			&cli.BoolFlag{Name: "read-only", Usage: "refuse every change with EROFS"},
			&cli.BoolFlag{Name: "debug", Usage: "trace every FUSE operation on stderr"},
			&cli.DurationFlag{Name: "entry-timeout", Value: DefaultEntryTimeout, Usage: "how long the kernel caches a name lookup (0: not at all)"},
			&cli.DurationFlag{Name: "attr-timeout", Value: DefaultAttrTimeout, Usage: "how long the kernel caches attributes (0: not at all)"},
			&cli.DurationFlag{Name: "negative-timeout", Usage: "how long the kernel caches that a name does not exist"},
			&cli.BoolFlag{Name: "allow-other", Usage: "let other users see the mount (non-root needs user_allow_other in /etc/fuse.conf)"},
			&cli.BoolFlag{Name: "passthrough", Usage: "let the kernel read and write host files itself (FUSE passthrough, root on Linux 6.9+): on by default for a local: tree mounted alone; --passthrough turns it on for a union of local: trees too (where a writer while a reader has a large file open fails with ETXTBSY), --passthrough=false turns it off (docs/mount.md)"},
			&cli.StringFlag{Name: "fsname", Usage: "the source the mount table (df, mount, /proc/mounts) shows for the mount (default: julyfs)"},
			&cli.BoolFlag{Name: "foreground", Aliases: []string{"f"}, Usage: "serve in the foreground (what mount always does; for systemd units and mount helpers that pass it)"},
			&cli.BoolFlag{Name: "write-in-place", Usage: "with passthrough, let a writer that opens an existing local: file without O_TRUNC write the host file itself: host speed, but no atomic commit, no compare-and-swap, a crash leaves it partly written (docs/mount.md, In-place writes)"},
			indexFlags()[0], indexFlags()[1], indexFlags()[2],
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return Usagef(c, "mount takes one directory, got %d arguments", c.NArg())
			}
			if h.Mount == nil {
				return h.delegate(c, "julyfs mount")
			}
			return h.Mount(c, c.Args().First())
		},
	}
}

func unmountCommand(h Heavy) *cli.Command {
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
				return Usagef(c, "unmount takes one directory, got %d arguments", c.NArg())
			}
			if h.Unmount == nil {
				return h.delegate(c, "julyfs unmount")
			}
			return h.Unmount(c, c.Args().First(), c.Bool("lazy"))
		},
	}
}
