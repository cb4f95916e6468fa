// Package index wraps any vfs.FileSystem with a persistent full-text index
// (bleve's scorch, github.com/blevesearch/bleve/v2/index/scorch) that
// serves the contract's Search verb: [Open] returns an [FS] whose Search is
// answered by the index and whose Write and Delete update it before they
// return. Every other verb forwards to the wrapped tree unchanged. Every
// optional capability is offered and forwarded through its vfs helper (so
// a tree without it gets the helper's fallback or errors.ErrUnsupported,
// as the vfs package doc's rule for wrappers says); the writing ones
// ([vfs.ConditionalWriter], [vfs.Stager], [vfs.Renamer]) update the index
// when the write commits, as Write does. The FS is always a
// [vfs.Notifier]: it forwards the wrapped tree's changes when that is
// one, and otherwise reports the writes made through itself.
//
// # What is indexed
//
// Every file of the wrapped tree except those under a skipped directory
// (.git, .hg, .svn and .julyfs by default, see [Options.SkipDir]), files
// larger than [Options.MaxFileSize] and binary files (vfs.IsBinary). Each
// document holds the file's content, its path and its base name, analyzed
// for code and prose (see [AnalyzerName]): words are split at punctuation,
// path separators, camelCase and snake_case boundaries and lowercased, and
// an identifier is searchable both whole and by its parts. File contents
// are not stored in the index; snippets are computed when a result is
// yielded, by reading the file through the wrapped tree.
//
// # The manifest and resync
//
// Each document also stores the size, modification time and etag the file
// had when it was read (skipped files get a document holding only that).
// Bringing the index up to date re-reads only files whose size, mtime or
// etag changed, removes files that are gone, and reads new ones; opening
// an index whose tree did not change reads no file. Because a manifest
// entry is committed in the same batch as the document it describes, an
// interrupted build (a cancelled context, a crash) resumes where it
// stopped.
//
// How the tree is compared is [Options.Sync]: [SyncAlways] (the default,
// and [FS.Sync]) walks the whole tree, listing every directory and
// stat'ing every file; [SyncAuto] reads the manifest file the last sync
// left (julyfs-manifest: every file's entry and every directory's
// modification time), stats the directories, and lists only those whose
// time changed, which finds every file created, deleted or renamed; a file
// rewritten in place is found only while the index holds at most
// [Options.StatLimit] files (every file is then stat'ed too); [SyncNever]
// compares nothing. A long-running process sets [Options.Follow]: the FS
// then follows the tree's changes as they happen (the tree's
// [vfs.Notifier], and inotify for local trees, vfs/local.WatchHost), so
// nothing needs walking per query. Follow implies [Options.Warm]: after
// Open, a goroutine asks the kernel to read the index's segment files into
// the page cache, so a query's first run does not wait for the disk.
//
// # Asking a following process
//
// A following FS listens on a unix socket in the index directory
// (julyfs-follow.sock). An Open without Follow, Rebuild or
// [Options.Direct] that finds a live follower there does not open the
// index (which the follower holds): the FS it returns forwards every verb
// to the tree, and its Search asks the follower ([FS.FollowedBy]). The
// follower answers after a barrier: it writes a cookie file in the index
// directory, which it watches with the tree, and waits for its event, so
// every change made to a local tree before the question is then pending;
// it applies what is pending and searches. An asker with another
// Options.Tree is refused ([ErrOtherTree]).
//
// # On-disk layout and format version
//
// The index directory holds julyfs-index.json (the format version and,
// when [Options.Tree] was given, the tree the index is for), the manifest
// file julyfs-manifest (a cache for [SyncAuto], rewritten after each sync
// that changed something, ignored when missing or damaged) and the bleve
// index under bleve/, laid out as bleve's root package lays out a scorch
// index (index_meta.json, store/, the mapping stored inside), though this
// package uses only bleve's sub-packages: the root package's
// initialization (every language analyzer) would slow the start of every
// binary that links this one. An index written with another
// [FormatVersion] is rebuilt from scratch, with a message through
// [Options.Log]. A damaged index fails Open with an error matching
// [ErrCorrupt]; [Options.Rebuild] discards it and builds anew. A directory
// that holds other files and no julyfs-index.json is refused, never
// cleared. An index recorded for another tree is refused
// ([ErrOtherTree]) with a message naming both. An index directory that
// cannot be written (a read-only filesystem) is opened read-only: it is
// searched as it is, never synced ([FS.ReadOnly]), and Open says so once
// through Options.Log.
//
// # Concurrency
//
// An FS is safe for concurrent use. Writes and deletes of the same path
// through the FS are serialized, so the index ends with the content that
// won. [FS.Sync] excludes writes through the FS while it runs, and so does
// applying a round of followed changes. Changes made to the wrapped tree
// behind the FS's back are seen at the next Sync or Open, or, with
// Options.Follow, about 100 ms after they happen (one goroutine gathers
// the events, one applies them; Close stops both). A build or resync
// reads Options.Parallelism files at once and commits Options.Committers
// batches at once (scorch builds each batch's segment in the committing
// goroutine; its merger, one goroutine, merges the segments 8 at a time
// from a first tier of one batch, and a large sync ends by merging the
// segments of fewer than 1,024 documents left). A file's text is
// analysed straight into term counts (codeField), never into a token per
// occurrence. A search scores the
// index's segments straight from their postings lists, term at a time,
// up to GOMAXPROCS segments at once when the index holds 16k documents or
// more (score.go: bleve's tf-idf scores, bit for bit, without bleve's
// searchers). One index directory can be open in one process at a time;
// a following process answers each asker's search on its own goroutine.
//
// # Errors
//
// Verbs forwarded to the wrapped tree return its errors unchanged. A Write
// or Delete that succeeded on the tree but could not update the index
// returns an error saying so (the file was written). Search fails with the
// index's error; after [FS.Close] it fails with [ErrClosed].
package index
