package fusemount

import (
	"log"
	"os"
	"time"

	"github.com/julyfs/julyfs/vfs"
)

// Default values of the Options fields left zero.
const (
	DefaultEntryTimeout   = time.Second
	DefaultAttrTimeout    = time.Second
	DefaultWholeFileLimit = 1 << 20
	// DefaultMaxIO is the largest read or write request the kernel sends.
	DefaultMaxIO = 1 << 20
	// DefaultMaxFileSize bounds the size a file can be written to.
	DefaultMaxFileSize = 4 << 30
	// ObservedTimeout is the entry and attribute timeout, with the
	// default timeouts, of what only the tree can change and the tree
	// reports every change of (a temp: tree, not a host file): the mount
	// invalidates the kernel's caches on each change, so they can be
	// kept long.
	ObservedTimeout = time.Hour
)

// Options configure a mount. The zero value is a read-write mount with the
// default cache timeouts.
type Options struct {
	// ReadOnly refuses every change with EROFS and reports files without
	// write permission bits.
	ReadOnly bool

	// EntryTimeout is how long the kernel may cache a name lookup, and
	// AttrTimeout how long it may cache a file's attributes. Zero means
	// the default (one second, as libfuse; ObservedTimeout for entries of
	// a tree that reports all their changes, such as temp:); a negative
	// value disables the cache. Changes made through the tree's API are pushed to the kernel
	// at once when the tree implements vfs.Notifier, whatever the
	// timeouts; changes the tree does not report (a host directory edited
	// behind a local: mount) show after the timeouts.
	EntryTimeout time.Duration
	AttrTimeout  time.Duration
	// NegativeTimeout is how long the kernel may cache that a name does
	// not exist. Zero means not at all, except, with the default entry
	// and attribute timeouts, under a host directory the mount watches
	// completely: ObservedTimeout there (negative.go). Negative means not
	// at all, anywhere.
	NegativeTimeout time.Duration

	// WholeFileLimit is the size up to which a file opened for reading is
	// read whole (one Read) and served from that copy for the life of the
	// open handle. Larger files are read range by range with vfs.ReadAt,
	// so a daemon reading them holds no more than a request's worth.
	// Zero means DefaultWholeFileLimit; negative means always by range.
	WholeFileLimit int64

	// MaxFileSize bounds the size a write, truncate or fallocate can give
	// a file (EFBIG beyond it): a file being written is held whole in the
	// daemon's memory. Zero means DefaultMaxFileSize.
	MaxFileSize int64

	// ReadDirPlus lets the kernel ask for every entry's attributes with
	// the listing (READDIRPLUS), which costs one Stat per entry at every
	// readdir, and saves a LOOKUP round trip per name a program then
	// uses (rm -r, grep -r, ls -l). It is on for trees whose Stat is a
	// host call (a local: tree, a union of local: trees) unless
	// PlainReadDir; ReadDirPlus turns it on for any tree. Off, a listing
	// is List alone and the kernel looks up only the names a program then
	// uses: `find` costs a Stat per directory instead of one per entry.
	ReadDirPlus bool
	// PlainReadDir turns readdirplus off for local: trees too.
	PlainReadDir bool

	// Passthrough asks for FUSE passthrough on any tree whose files have
	// host descriptors (vfs.FileDescriptor), a union of local: trees
	// included. Without it passthrough is on by default where the mount
	// can keep every open working (a local: tree mounted alone: the tree
	// can write a file in place, see below) and off elsewhere.
	// Passthrough lets the kernel read and write host files itself, from
	// the host file or from its staging, at the host's speed, where the
	// kernel allows it (Linux 6.9+, as root); the mount falls back
	// without error elsewhere, and says so with Debug. On a tree that
	// cannot write in place (a union) it keeps the kernel's departures
	// (docs/mount.md, "FUSE passthrough": a writer while a reader of a
	// large file has it open waits, then fails with ETXTBSY). The
	// environment variable JULYFS_PASSTHROUGH=on sets it too (for `julyfs
	// mount`; `julyfs mount --passthrough`).
	//
	// On a local: tree mounted alone, a writer arriving while handles
	// pass through to the host file (readers of a large file, or the
	// handles still open on a staging that was committed) shares that
	// host file and writes it in place, checked at each close and
	// reported to the tree's watchers: the kernel allows no other backing
	// and no other mode while those handles are open (passthrough.go).
	// Readers pass through only where a writer could share their host
	// file (opened for reading and writing; not an executable); the others
	// read through the daemon.
	//
	// With passthrough on a local: tree mounted alone (not through a
	// union), a file the mount creates and an existing regular file that
	// holds no data (empty, or only holes and space reserved with
	// fallocate: SEEK_DATA finds none on the descriptor opened, as for
	// fio's laid-out file) that a writer opens without O_TRUNC while the
	// mount has no other handle on it are written in place, with no
	// staging (without passthrough the daemon writes them in place).
	// Readers see such a file's writes as they land and a crash leaves
	// what was written; each close checks that the name still holds the
	// file (EIO otherwise, the other writer's version kept) and reports
	// the writes to the tree's watchers (docs/mount.md, "Data safety"). A
	// file with data is staged.
	Passthrough bool
	// NoPassthrough turns passthrough off, wherever the kernel would
	// allow it: every read and write goes through the daemon. It wins over
	// Passthrough and WriteInPlace. The environment variable
	// JULYFS_PASSTHROUGH=off sets it too (`julyfs mount
	// --passthrough=false`).
	NoPassthrough bool

	// WriteInPlace (it sets Passthrough) lets a writer opening an existing
	// file of a local: tree without O_TRUNC, while no other handle has
	// it open, write the host file in place through the kernel instead of
	// a staging: no copy of the file at open, and writes at the host's
	// speed, but none of the staging's guarantees (docs/mount.md, "In-place
	// writes": readers see writes in progress, a crash or a full disk
	// leaves the file partly written, no compare-and-swap, no report
	// to watchers; a file that holds no data keeps the check and report
	// it gets with passthrough alone). The
	// environment variable JULYFS_PASSTHROUGH=inplace turns it on.
	WriteInPlace bool

	// SpareProcs is for a process that exists to serve the mount (the
	// julyfs mount daemon): the first mount made with it raises the
	// process's GOMAXPROCS above the count go-fuse sizes its readers by,
	// so that a reader waiting for the kernel keeps its P (spareProcs).
	// It is process-wide and stops the runtime's automatic GOMAXPROCS
	// updates; a GOMAXPROCS set in the environment is kept.
	SpareProcs bool

	// BlockingReads makes go-fuse's readers wait for requests in read(2)
	// of /dev/fuse, as go-fuse does by default, instead of in poll(2)
	// (fuse.MountOptions.PollReaders). The kernel wakes one read(2)
	// waiter per request, where the scheduler puts it, usually a CPU
	// other than the requesting process's; it wakes every poll(2) waiter
	// and one of them often runs on the requester's CPU, which spares
	// the round trip two wakeups across CPUs (git clone and tar -x of
	// 10,000 files in 0.7-0.8x of the time on 2 vCPUs, docs/perf.md).
	// The environment variable JULYFS_FUSE_READS=blocking sets it.
	BlockingReads bool

	// Debug traces every FUSE operation to Logger.
	Debug bool
	// Logger receives one line per backend failure (and the trace when
	// Debug is set). Nil means standard error with a "julyfs: " prefix.
	Logger *log.Logger

	// AllowOther lets users other than the one mounting see the tree
	// (fusermount3 needs user_allow_other in /etc/fuse.conf for non-root),
	// with default_permissions: the kernel checks each access against the
	// mode and owner the mount shows (the host's, for local:).
	AllowOther bool
	// FsName is the source column of /proc/mounts and df; default "julyfs".
	FsName string
}

// timeout resolves a timeout option against its default.
func timeout(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

func (o Options) entryTimeout() time.Duration { return timeout(o.EntryTimeout, DefaultEntryTimeout) }
func (o Options) attrTimeout() time.Duration  { return timeout(o.AttrTimeout, DefaultAttrTimeout) }
func (o Options) negativeTimeout() time.Duration {
	return max(o.NegativeTimeout, 0)
}

func (o Options) wholeFileLimit() int64 {
	switch {
	case o.WholeFileLimit == 0:
		return DefaultWholeFileLimit
	case o.WholeFileLimit < 0:
		return -1
	}
	return o.WholeFileLimit
}

func (o Options) maxFileSize() int64 {
	if o.MaxFileSize <= 0 {
		return DefaultMaxFileSize
	}
	return o.MaxFileSize
}

func (o Options) logger() *log.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return log.New(os.Stderr, "julyfs: ", log.LstdFlags)
}

func (o Options) fsName() string {
	if o.FsName != "" {
		return o.FsName
	}
	return "julyfs"
}

// withEnv is o with what JULYFS_PASSTHROUGH asks for ("on": Passthrough;
// "inplace": WriteInPlace; "off": NoPassthrough), with Passthrough on
// wherever WriteInPlace is, and both off with NoPassthrough. Mount reads
// it once, so no request reads the environment.
func (o Options) withEnv() Options {
	switch os.Getenv("JULYFS_PASSTHROUGH") {
	case "on":
		o.Passthrough = true
	case "inplace":
		o.WriteInPlace = true
	case "off":
		o.NoPassthrough = true
	}
	if os.Getenv("JULYFS_FUSE_READS") == "blocking" {
		o.BlockingReads = true
	}
	if o.WriteInPlace {
		o.Passthrough = true
	}
	if o.NoPassthrough {
		o.Passthrough, o.WriteInPlace = false, false
	}
	return o
}

// readDirPlus reports whether the mount of fsys answers READDIRPLUS:
// asked for, or on by default for a tree of local: trees, whose Stat is
// one host call (a remote tree's is a round trip per entry).
func (o Options) readDirPlus(fsys vfs.FileSystem) bool {
	return o.ReadDirPlus || !o.PlainReadDir && hostTree(fsys)
}

// hostTree reports whether fsys is a tree of host files (it opens them in
// place: local:) or a union of such trees.
func hostTree(fsys vfs.FileSystem) bool {
	switch t := fsys.(type) {
	case inPlaceOpener:
		return true
	case multiMount:
		for _, m := range t.Mounts() {
			if !hostTree(m.FS) {
				return false
			}
		}
		return true
	}
	return false
}
