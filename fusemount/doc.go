// Package fusemount serves any vfs.FileSystem as a FUSE filesystem, so
// shell tools, editors and compilers see the same tree the API answers:
// the same entries in the same order, the same bytes, and each other's
// changes at once. It is built on go-fuse's fs package.
//
// # Mapping
//
// Lookup and getattr come from Stat (open reuses a lookup's answer within
// the attribute timeout); readdir from List, in its order, after "." and
// ".." (readdirplus, a Stat per entry with the listing, for local: trees
// and unions of them, where it saves rm -r and grep -r a LOOKUP round trip
// per name; on a local: tree mounted alone a regular file's entry is
// one fstatat in the directory held open while the
// listing is read, dirHandle); plain readdir, which costs no Stat per entry, for other
// trees; Options.ReadDirPlus, Options.PlainReadDir); open and read from Read, or, for files above
// Options.WholeFileLimit, range by range through a reader each handle opens
// once (vfs.OpenFile: one host descriptor for a local: tree), so reading a
// large file holds only a request's worth of it. Inode numbers are the
// host's where the tree gives them (vfs.FileInfo.Ino: a local: tree), so
// ls -i, find -samefile, du, tar and git see the truth: two names of one
// host file (hard links) are one node with one number, and a rename keeps
// it (a host file on another device than the first met, in a union of
// local: mounts, gets a hash of its device and number). Elsewhere they are
// a hash of the path, stable per path and distinct across the mounts of a
// union; a file or directory the kernel knows keeps its number across a
// rename. A file rewritten through the mount (the staging commit renames
// a new host file over the name) keeps the node and number it had while
// the kernel holds it open or cached, and shows the new host number once
// nothing is open on it and it is looked up again. Files have Nlink 1, or the tree's FileInfo.Nlink where it has
// hard links (0 once unlinked while open); directories 2 plus their
// subdirectories. ctime is the tree's FileInfo.ChangeTime where it has
// one (the host's on local:), else the modification time.
//
// Writes (write, append, truncate, O_TRUNC) go to a staging of the whole
// file (vfs.Stage), shared by every handle on it, and are committed whole
// on flush (each close), fsync and release; fsync succeeds only once the
// tree has taken the data, and until then other readers see the previous
// file. A local: tree stages in an unnamed temporary file on its own disk;
// other trees stage in memory, so there a file being written is held whole
// in memory. A file the mount creates on a tree that can (local: alone:
// CreateInPlace) has no older version to protect and is not staged: it
// is created on the host and written there in place, by the kernel with
// passthrough (see below), or by the daemon through the descriptor the
// create opened; so is an existing file that holds no data
// (empty, or only holes and space reserved with fallocate:
// OpenDatalessInPlace, fio's laid-out file) that a writer opens without
// O_TRUNC while the mount has no other handle on it. Each flush (the
// creator's close sends none: FOPEN_NOFLUSH; its release does it) checks
// that the name still holds it or that it was only moved (EIO when it was
// replaced or removed, and at the next flush of
// every other writer sharing it: their writes are not told apart) and
// reports the writes to the tree's watchers; once the name holds another
// file (a commit through the API, a rename on the host), an open or a
// truncate(2) of the name reaches that file, and the handles keep
// writing theirs, as on a disk; the host watch tells the
// daemon's own writes to such a file from another program's by the size
// and time each left
// (node.ownWrite), and leaves the kernel's pages of its own. O_TRUNC (negotiated as atomic with the kernel) and a
// truncate(2) while the file is open for writing only empty the staging.
// The commit is a compare-and-swap (the staging's own CommitIf where it is
// a vfs.ConditionalCommitter, as on local:, else vfs.WriteIf) on the tree's
// etag when the staging started: a file another writer replaced meanwhile
// is kept and the writer's close fails with EIO. A failed write poisons the
// staging: later writes fail, the next flush, fsync or release returns the
// error and discards the staging, and the tree's file stays as it was.
// unlink is Delete. rename goes through the tree's vfs.Renamer (atomic;
// EXDEV across the mounts of a union, so mv falls back to copy and delete);
// a tree without one gets a copy through Read and Write followed by Delete,
// not atomic. mkdir and rmdir make and remove directories in the tree when
// it has directories of its own (vfs.DirMaker, vfs.DirRemover: a local:
// mount, on the host). Elsewhere, as the contract has no mkdir, a directory
// made by mkdir is held by the mount, empty, until something is written
// under it, and stays until rmdir even when emptied; a directory the mount
// emptied (rm of its last file) stays the same way.
//
// chmod and utimes go to the tree (vfs.ModeSetter, vfs.TimeSetter; a
// link's own time through vfs.LinkTimeSetter): the host's on local:, the
// tree's memory on temp:; ENOTSUP where the tree has none, never a change
// only the mount remembers. symlink and readlink go through
// vfs.Symlinker; lookup shows a path whose FileInfo.Link is set as a link
// (S_IFLNK, with the link's own time, FileInfo.LinkModTime), which the
// kernel follows itself, and readdir lists every entry whose
// DirEntry.Link is set as a link (DT_LNK), whatever it leads to. The mount holds in memory,
// by path, only what no tree keeps: access times, owners set by chown on
// a tree without owners (chown to another owner of a host file of
// a tree that cannot chown is ENOTSUP) and a mode asked at create or mkdir on a tree
// without modes. chown goes through vfs.OwnerSetter (vfs.LinkOwnerSetter
// for a link), link(2) through vfs.Linker (EXDEV across the mounts of a
// union) and mknod(2) (FIFOs, sockets, devices) through vfs.NodeMaker;
// ENOTSUP where the tree has none. A file with more than one name gets
// no attribute caching (its Nlink moves with an unlink of another name).
//
// # Passthrough
//
// On a read-write mount of a local: tree mounted alone, a file is read
// and written by the kernel itself (FUSE passthrough, go-fuse's
// fs.FilePassthroughFder) wherever the kernel allows it (Linux 6.9+, as
// root: probed at mount; elsewhere the mount falls back to the daemon
// path without error, saying so with Options.Debug). Options.NoPassthrough
// (JULYFS_PASSTHROUGH=off) turns it off; Options.Passthrough asks for it
// on other trees whose files have host descriptors too (a union of
// local: trees; vfs.FileDescriptor). A reader of a file above
// WholeFileLimit passes through to the host file, opened for reading and
// writing (smaller ones are read whole and kept in the kernel's pages;
// an executable, or a file the host will not open for writing, is read
// through the daemon), a writer to the file's staging, made at open;
// commits stay renames with the compare-and-swap at flush, fsync and
// release. A file the mount writes in place (created, or holding no
// data) is written by the kernel through its host descriptor.
//
// The kernel allows one backing file per inode and no mix with cached
// opens, so a node is in one mode at a time, and an open arriving while
// handles pass through can only share their backing. A writer arriving
// while readers read the host file, or after the staging they share was
// committed (it is the host file then), shares that host file and writes
// it in place, when it is still the file at the path: each of its closes
// checks that the name still holds it and reports the writes to the
// tree's watchers, as for a file created in place; readers see the
// writes as they land. A writer of a name whose file was replaced
// meanwhile gets ESTALE, and the kernel's second lookup a node of its
// own for the new file (the handles keep the old one, as on disk). Only
// a discarded staging makes an open wait up to five seconds for the
// handles' release, then fail with ETXTBSY. On
// a tree that cannot write in place (a union, with Options.Passthrough)
// readers pass through read-only and a writer arriving meanwhile waits
// and fails so. A writer on a nearly full disk never passes through,
// since the daemon does not see a write the kernel failed. See
// passthrough.go and docs/mount.md.
//
// # Request sizes and writeback
//
// Reads and writes go in requests of up to DefaultMaxIO (1 MiB: go-fuse's
// MaxWrite, which also sets the kernel's max_pages). The kernel starts a
// FUSE mount's readahead at 128 KiB whatever INIT asks, so Mount raises
// it to DefaultMaxIO (the mount's /sys/class/bdi read_ahead_kb, as root;
// left as it is otherwise): a sequential reader's READs are then 1 MiB,
// not 128 to 256 KiB. Writeback cache (-o writeback_cache) is off: the
// kernel would own a file's size and times between writebacks and report
// the tree's failed writes at close, not at write (docs/mount.md, "Data
// safety").
//
// # Caching
//
// The kernel caches names and attributes for Options.EntryTimeout and
// Options.AttrTimeout (one second by default) and file pages across opens
// while the file's etag, size and mtime are unchanged. When the tree
// implements vfs.Notifier (a union or an overlay does only when every tree
// in it does), a change made through the API (in the same process)
// invalidates the kernel's caches for that path at once; changes the tree
// does not report show once the timeouts pass. On such a tree, with the
// default timeouts, entries that are not host files (no FileInfo.HasMode:
// temp:) are cached for ObservedTimeout, and directory listings are cached
// across opens (FOPEN_CACHE_DIR, dropped on a change through the mount, an
// invalidation, or a new directory mtime). Host entries of local: trees
// (alone, in a union, under vfs/readonly, under a vfs/cow layer) are
// cached for ObservedTimeout too while the mount watches their host
// directories (hostwatch.go:
// vfs/local's WatchHost, inotify, asked for by interface, not part of
// vfs.Notifier): every host change, by any program, is invalidated from
// the invalidator's goroutine; so are names found missing there, with no
// Options.NegativeTimeout (negative.go); the mount's own creates, unlinks
// and mkdirs are not (a directory it makes is watched before its MKDIR
// reply, so its report is the mount's and nothing under it is dropped);
// lost changes (an inotify overflow) drop everything the kernel holds; a tree that cannot be watched completely
// (the inotify watch limit) keeps, or falls back to, the short timeouts.
// Explicit timeouts turn the watch off. A file reopened at the version
// the kernel keeps pages of is not read at open. A reader's open of a
// small file (Options.WholeFileLimit) the kernel holds no page of puts
// the file in the kernel's page cache before it answers
// (FUSE_NOTIFY_STORE, then FOPEN_KEEP_CACHE), so the first read sends no
// READ (file.go, storePages). Readers open with
// FOPEN_NOFLUSH (they have nothing to commit), and so does the descriptor
// a create opens on a file made in place (its writes are on the host; its
// release checks and reports them). A read-only mount answers
// OPEN and FLUSH with ENOSYS (no-open, no-flush): reads come without a
// handle and are served by range from the tree's current file; on a tree
// that reports its changes OPENDIR too (no-opendir, noopendir.go).
//
// # Permissions
//
// Modes and owners are the tree's (vfs.FileInfo.Mode, UID, GID: the
// host's on local:; modes set on temp:) or 0644/0755 owned by the
// mounting user. With Options.AllowOther the mount adds
// default_permissions, so the kernel enforces them for every user.
// Set-user-ID and set-group-ID bits are cleared by the daemon where Linux
// clears them (chown; write, truncate, O_TRUNC by an unprivileged caller):
// the mount negotiates FUSE_HANDLE_KILLPRIV_V2, which spares the kernel's
// GETATTR before each chown (killpriv.go).
//
// # Errors
//
// Errors of the tree become errnos in one function (toErrno, whose doc
// holds the whole table): not found is ENOENT, read-only and no mount for
// path are EROFS, is a directory is EISDIR, conflict is EEXIST, and
// anything else is the errno in its cause chain (ENOSPC, ENOTDIR, ...) or
// else EIO, plus one log line naming the path and cause; the daemon keeps
// serving. docs/mount.md ("Errors", "Data safety", "Caching and
// consistency with the API") is the user's side of these rules.
//
// # Files
//
// mount.go: Mount, Serve, Unmount, the Server, and the spare Ps of the
// julyfs mount daemon (Options.SpareProcs: two Ps more than go-fuse's cap
// on its readers, so that sysmon leaves a reader waiting for the kernel
// its P); go-fuse's readers wait in poll(2), not read(2), unless
// Options.BlockingReads (fuse.MountOptions.PollReaders, a patch of the
// go-fuse copy in third_party/go-fuse: one of the readers woken then
// often runs on the requesting process's CPU, which spares the round
// trip its wakeups across CPUs). state.go: the state type, plain Go over a vfs.FileSystem with no
// go-fuse in it (pending and hidden directories, metadata, the mount's own
// changes in flight), unit-tested without a kernel. binding.go: the mount
// type the go-fuse nodes share (the state, inode numbers, dirty files, the
// invalidator, attributes). node.go, dir.go, file.go, rename.go: the
// go-fuse node. private.go: the buffer of a file whose name is gone.
// passthrough.go: FUSE passthrough. killpriv.go: set-ID bits cleared by
// the daemon. requests.go: state rawFS and the nodes share per request. notify.go: kernel invalidation from a
// worker. hostwatch.go: host changes behind a local: mount. negative.go:
// missing names cached long under watched host directories. errno.go: the
// one kind-to-errno function.
//
// # Concurrency and deadlocks
//
// go-fuse serves requests in parallel; every node guards its state with its
// own mutex and the mount's shared state with another, never calling into
// the kernel while holding either. Invalidations are queued by the Watch
// callback and sent from a separate goroutine, since the tree reports
// changes from inside requests the kernel holds locks for. The one
// notification sent from inside a request is an attributes-only
// NOTIFY_INVAL_INODE (offset -1) after an OPEN or WRITE cleared a set-ID
// bit: the kernel takes no inode or page lock for it. As go-fuse
// documents, a process must not access its own mount from code that can
// block the serving threads (fork with inherited mount descriptors, mmap of
// mounted files); the tests run every tool in a separate process.
package fusemount
