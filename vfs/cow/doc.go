// Package cow is a writable copy-on-write tree over any tree: reads fall
// through to the base until a path is written; every change (writes,
// deletes, renames, new directories, links, modes and times) goes to an
// upper layer kept in a directory on the host, and the base is never
// written (it may be read-only).
//
// # The layer
//
// The upper layer is a tree of entries, one per path where it differs from
// the base ([Entry]): a file (its contents a blob named by SHA-256), a
// directory of its own, a link, or a whiteout. A delete of a base file
// leaves a whiteout; removing a base directory leaves one whiteout that
// hides its whole subtree, and a directory made there later is opaque, so
// the base's old files never come back. Directories the layer only passes
// through (it holds something below them) are not entries.
//
// The layer directory holds the blobs (blobs/ab/abcd…, read-only, never
// changed: identical contents are stored once), head.json (the entries at
// the last [FS.Compact] or [FS.Reset]) and journal.ndjson (each change
// since, one line appended before the change is made). [Open] rebuilds the
// layer from the two, so a process killed at any moment reopens to every
// change it reported done. A staging ([FS.Stage]) is a temporary file in
// tmp/ until its Commit publishes it as a blob and an entry in one step:
// no reader, and no [FS.Entries] snapshot, ever sees part of a file.
// Journal lines are written, not fsynced, per change: they survive a
// killed process, and [FS.Sync] (which a checkpoint calls) makes the
// blobs durable before a manifest names them.
//
// # Reads and walks
//
// Stat, Read, ReadAt and OpenFile of a path the layer does not hold go to
// the base (through vfs.ReadAt and vfs.OpenFile, so a base without those
// capabilities gets their fallbacks). List merges the base's listing
// with the layer's children by name, whiteouts applied. Glob and Grep of
// a scope where the layer changes nothing are the base's own (at the
// base's speed); elsewhere Grep merges the base's hits, less those in
// files the layer changed, with the hits in the layer's files, in path
// order, and Glob walks the merged tree. Every stream holds at most one
// directory's listing of the base, plus the layer's own entries (which
// live in memory: the layer's size, never the base's). Search answers
// from the base's index for files the layer leaves as they are, merged
// by score with what a search of the layer's own files ([FS.Upper],
// [FS.SetUpperSearch]) finds; without one, the layer's files are not
// searched.
//
// # Links
//
// A link of the layer is followed inside the merged tree as vfs/temp
// follows its own (an absolute target from the root, ".." above the root
// staying there). Links of the base are the base's to follow: a path that
// goes through one is answered by the base, against the base's contents.
//
// # Capabilities
//
// FS has every optional capability of the vfs package, whatever the base
// has: the layer's files are its own (blobs open with a descriptor for
// FUSE passthrough reads; stagings are files in the layer, without a
// descriptor, since a commit moves them into the content store). A
// directory that holds anything of the base cannot be renamed in one step
// and fails with a cause of syscall.EXDEV, as on Linux's overlayfs, so mv
// copies it. [FS.Tree] is a vfs.Notifier exactly when the base is one,
// and watches the base's host directory when the base does (vfs/local's
// WatchHost, passing on the changes of paths the layer does not shadow):
// a FUSE mount then caches the layer's entries as long as it would the
// base's alone.
//
// # Apply and checkpoints
//
// Each entry records what the base had at its path when the layer first
// shadowed it (BaseKind, BaseETag), so the layer's changes can be written
// back with compare-and-swap. [FS.Entries] is a consistent snapshot of the
// layer, [FS.Reset] replaces it with another set of entries (a
// checkpoint's), and [FS.Sync] makes the blobs written since the last
// sync durable: what runner/checkpoint builds on.
//
// # Concurrency
//
// An FS is safe for concurrent use. Changes are serialized; readers never
// wait for the base behind a change.
package cow
