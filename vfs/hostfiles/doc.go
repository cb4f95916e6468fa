// Package hostfiles is the contract's hostFs(files, scope): durable files
// owned by the host (not by the model's workspace), kept in a [Store] that
// many processes and hosts share, and served as a vfs.FileSystem that is
// usually mounted at /host.
//
// A [Store] holds files by key (a clean absolute path) within a [Scope]:
// [Deployment] shares them across sessions, [SessionScope] keys them by a
// session id. Two stores ship: vfs/hostfiles/diskstore (a host directory,
// the embedded default) and vfs/hostfiles/pgstore (PostgreSQL, for many
// hosts on one database); rootspec's hostfiles: kind picks one from a
// directory or a postgres:// URL. docs/hostfiles.md is the user's guide.
//
// # Compare-and-swap
//
// [New] turns a scope into a tree with the contract's rule: each FS keeps
// the etag of every path it has read or written; a Write of a path with a
// cached etag is a compare-and-swap on it, a Write without one is
// unconditional. So two agents that both read version A and then write
// cannot both win: the second gets "conflict: <path>" (kind
// vfs.KindConflict, errors.Is(err, vfs.ErrConflict)), whose cause is a
// *[ConflictError] carrying the etag it expected and the one it found.
// The synthesized StrReplace is Read then Write, so it is a CAS too.
// [FS.WriteIf] takes an explicit precondition (vfs.ConditionalWriter).
// Delete follows the same rule: a Delete of a path with a cached etag is
// a CAS on it (a delete after another writer's change is a conflict, never
// a silent loss of that change), one without is unconditional. Stat and
// Grep do not count as reads. The cache belongs to one FS value (one agent
// session's view): goroutines that share an FS share its cache, and for
// CAS between them use WriteIf with an etag.
//
// # Caching
//
// Nothing but etags is cached: every verb reads the store, so a change
// made by another process is seen by the next call. Directories are not
// stored; a directory exists while a file is under it.
//
// # Change notification
//
// FS is a vfs.Notifier. Changes made through any FS over the same Store
// value are delivered before the verb returns; changes made by other
// processes or hosts arrive from the store's change feed (inotify for the
// disk store, LISTEN/NOTIFY with a sequence table for PostgreSQL), so a
// FUSE mount drops its kernel caches for a path another host wrote. A
// notification lost with a dropped connection is recovered from the
// sequence table on reconnect (pgstore) or by a rescan (diskstore); until
// then a mount serves at most its entry timeout of stale metadata.
//
// # Capabilities
//
// An FS honours two optional capabilities for every path, and offers only
// those: [FS.WriteIf] (vfs.ConditionalWriter, one compare-and-swap in the
// store) and [FS.Watch] (vfs.Notifier, which every Store feeds). For the
// others the vfs helpers answer: ranged reads and OpenFile read the file
// whole, vfs.Stage stages in memory and commits as one Write (under the
// CAS rule above), vfs.Rename copies and deletes, and the directory,
// link, mode and time helpers answer errors.ErrUnsupported.
//
// # Errors
//
// Missing files are "not found: <path>", writes over a directory "is a
// directory: <path>", writes below a file "write failed: <path>", refused
// preconditions "conflict: <path>". A failure of the store itself (a
// database that is down, a full disk, a file over the size limit) is a
// *vfs.PathError of kind KindOther whose message names the path, the store
// and the cause ("/notes.md: hostfiles store postgres://julyfs@host/db:
// put /notes.md: ..."); errors.Is(err, vfs.ErrUnavailable) holds when the
// store could not be reached. Nothing is written partially: a write either
// commits whole or not at all.
//
// # Stores
//
// diskstore is the embedded default (temp file, fsync and rename; flock
// CAS across processes; an inotify feed) and pgstore keeps files in
// PostgreSQL (one-statement CAS, primary-key range listing, LISTEN/NOTIFY
// with a sequence table for catch-up). A store that also implements
// [Opener] lets Grep stream a file instead of reading it whole.
// hostfiles/storetest is the suite every store runs.
//
// # Concurrency
//
// An FS and every Store are safe for concurrent use.
package hostfiles
