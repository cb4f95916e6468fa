// Package vfs is the julyfs filesystem contract: the eight verbs every tree
// implements (List, Stat, Glob, Read, Grep, Write, Delete, Search), the
// types they exchange, path normalization, the error type with the
// contract's exact messages, and the shared helpers adapters build on
// (sorted walks, glob matching, grep scanning, k-way merges).
//
// # Paths
//
// Every path a FileSystem receives is normalized with [Clean] at the entry
// point: absolute, '/'-separated, "." and ".." resolved, no trailing slash
// except "/". "" and "/" mean the root, and a path that climbs above "/"
// stays at "/". Prefix tests are by path segment ([HasPrefix]): "/agent"
// covers "/agent/skills", never "/agent-tools".
//
// # Streams
//
// List, Glob, Grep and Search return iter.Seq2 streams. A stream is already
// sorted (List and Glob by path and unique, Grep by path then line, Search by
// score descending then path), reports an error as its last element, and
// stops all work when the consumer breaks out of the loop or the context is
// cancelled. Streams hold at most one directory's entries at a time, never
// the whole tree.
//
// # Grep and long lines
//
// Grep matches per line, and a line has no length limit: a minified bundle
// or a log without newlines can be one line of hundreds of megabytes.
// [GrepQuery].MaxLineBytes, when set, bounds what a hit carries: the line
// is cut to at most that many bytes (before a valid UTF-8 sequence the
// cut would split) and [GrepResult].LineBytes says how long it was. It
// also bounds memory: a long line is matched without being held whole
// (how, in vfs/grepscan's package doc), and matching stays exact: the
// answer for a long line is the regexp's answer for the whole line. This
// departs on purpose from ripgrep and GNU grep, which grow their buffer
// to the longest line. Without MaxLineBytes (0) a hit carries its whole
// line, so memory grows to the longest matching line. The runner's Grep
// tool always sets it and prints the '... [line cut: N bytes]' notice.
//
// # Helpers adapters share
//
// [Walk] is the path-ordered walk, holding one directory per level.
// [Glob] and [Pattern] are the one glob dialect (gobwas/glob, globstar,
// runs of "**/" collapsed, size limits); [Pattern.Below] rewrites a
// pattern for a mount below the scope. [Grep] and [GrepTree] compile a
// query once ([CompileGrepQuery] returns it carrying its compiled pattern,
// which composers hand down to their children), stat the scope and scan
// the file or the directory's files with vfs/grepscan. [Merge] k-way
// merges sorted streams. [DisplayPath] prints a path Go-quoted when it
// holds control characters or invalid UTF-8, and [ParseDisplayPath] reads
// one back.
//
// # Error handling
//
// Verbs fail with *[PathError], whose Error method renders the contract
// string ("not found: /p", "read-only mount: /p", ...). Callers test kinds
// with errors.Is against the exported sentinels ([ErrNotFound], ...) or read
// the [ErrorKind] with errors.As; never by matching strings. List, Stat and
// Glob never fail for a missing path: missing is an empty stream or a
// FileInfo of kind [KindMissing]. The kind and path are plain values so an
// error survives a process boundary ([PathError.Kind] round-trips through
// [ParseErrorKind]).
//
// # Optional capabilities
//
// Capabilities beyond the eight verbs are small upgrade interfaces, each
// with a helper that calls the tree's method when it has one and answers
// for it when it has none:
//
//   - [RangeReader] with [ReadAt]: read part of a file (the fallback reads
//     the file whole);
//   - [FileOpener] with [OpenFile]: open a file once for many ranged reads
//     (the fallback reads ranges through ReadAt, or the file whole once);
//   - [Stager] with [Stage]: build a file's new contents in place
//     (WriteAt, Truncate) and commit them atomically as one Write (the
//     fallback stages in memory);
//   - [ConditionalWriter] with [WriteIf]: compare-and-swap on the etag
//     (the fallback checks with Stat, then writes: not atomic);
//   - [Renamer] with [Rename]: move a file or directory in one step (the
//     fallback copies and deletes a file; syscall.EXDEV asks for it);
//   - [ConditionalCommitter] (on a StagedFile) with [CommitIf] and
//     [BaseETag]: commit a staging only while the file is still the
//     version it started from;
//   - [DirMaker], [DirRemover] with [MakeDir], [RemoveDir]: directories of
//     their own;
//   - [Symlinker] with [Symlink] and [Readlink], [ModeSetter] with
//     [SetMode], [TimeSetter] with [SetModTime], [LinkTimeSetter] with
//     [SetLinkModTime]: links, modes and times that persist. A tree with
//     links lists every one (DirEntry.Link, Kind what it leads to,
//     KindMissing when it dangles), Stat follows one inside the tree and
//     says so (FileInfo.Link, LinkModTime), and walks never descend into
//     one (DirEntry.SkipInWalk);
//   - [OwnerSetter] with [SetOwner], [LinkOwnerSetter] with
//     [SetLinkOwner]: owners and groups (chown, lchown) that persist;
//   - [Linker] with [Link]: hard links, a second name of one file
//     (FileInfo.Nlink counts the names, FileInfo.Ino is the host's inode
//     number, one for all of them);
//   - [NodeMaker] with [Mknod]: FIFOs, sockets and devices, which the
//     contract's verbs never open (Stat: KindMissing with
//     FileInfo.Special); [HostLister] with [ListHost] lists them, and
//     every entry's host inode number, for a FUSE mount's readdir;
//   - [Notifier] with [Watch]: hear about changes made through the tree.
//
// The helpers of the first five fall back on the eight verbs. Those of
// the conditional commit, the directories, links, modes, times, owners,
// hard links and special files answer
// errors.ErrUnsupported where a tree has none, never a fake success. Watch
// reports ok false and hears nothing.
//
// # Capabilities of wrappers
//
// A tree built from other trees (vfs/union, vfs/overlay, vfs/readonly,
// vfs/index) offers a capability exactly when it can honour it for every
// path it serves, or honours it path by path through the helper's answer.
// Which of the two is decided by what the helper does:
//
//   - A capability whose helper answers for a tree without it (a fallback,
//     or errors.ErrUnsupported) is offered whatever the trees beneath are,
//     and its method calls the helper on the tree that holds the path, as
//     io/fs.Sub does: each path gets that tree's method or the helper's
//     answer for it, so the wrapper's method set does not depend on its
//     trees. Such a method never answers errors.ErrUnsupported for a
//     capability whose helper falls back (ReadAt, OpenFile, Stage,
//     WriteIf, Rename): the helper passes that error on instead of
//     falling back. A read-only wrapper refuses with "read-only mount",
//     for every path, each write capability whose helper would otherwise
//     start work or answer errors.ErrUnsupported (Stage, Rename, the
//     directories, Symlink, modes and times); WriteIf's fallback already
//     ends in its refusing Write.
//   - [Notifier] has no answer per path: Watch names no path, and a tree
//     without it hears nothing. A wrapper is a Notifier exactly when every
//     tree it serves is one (vfs/index, which reports the writes made
//     through it itself, always is), so its constructor returns a
//     [FileSystem] whose method set says so (readonly.New, overlay.New,
//     union.New). A Notifier deaf to part of its tree would have a FUSE
//     mount cache that part's files as if every change reached it.
//
// vfstest's Capability/everyPath check holds every tree to this rule.
//
// # Concurrency
//
// Every FileSystem in this module is safe for concurrent use. A stream may be
// consumed while other goroutines write; it then reflects some consistent
// view of each directory it visits, not a snapshot of the whole tree.
package vfs
