// Package readonly wraps any tree so that it cannot be changed through the
// wrapper: what a "?ro" mount is.
//
// Every read verb (List, Stat, Glob, Read, Grep, Search) is forwarded
// unchanged, errors included; Write and Delete fail with
// "read-only mount: <path>" and never reach the tree.
//
// The wrapper follows vfs's rule for wrappers (see the vfs package doc,
// "Capabilities of wrappers"). It forwards [vfs.RangeReader],
// [vfs.FileOpener] and Readlink (through [vfs.ReadAt], [vfs.OpenFile] and
// [vfs.Readlink], so a tree without them gets the helper's answer);
// refuses [vfs.Stager], [vfs.Renamer], [vfs.DirMaker], [vfs.DirRemover],
// Symlink, [vfs.ModeSetter], [vfs.TimeSetter] and [vfs.LinkTimeSetter]
// with "read-only mount" for every path; offers no [vfs.ConditionalWriter]
// ([vfs.WriteIf]'s fallback ends in Write, which refuses); and is a
// [vfs.Notifier] exactly when the tree is one, so a FUSE mount still
// learns of changes other writers make to the tree. It holds no state of
// its own and is as safe for concurrent use as the tree.
package readonly

import (
	"context"
	"iter"

	"github.com/julyfs/julyfs/vfs"
)

// FS is a read-only view of a tree.
type FS struct {
	fsys vfs.FileSystem
}

// notifyingFS is the view of a tree that is a vfs.Notifier.
type notifyingFS struct {
	*FS
	n vfs.Notifier
}

var (
	_ vfs.FileSystem  = (*FS)(nil)
	_ vfs.RangeReader = (*FS)(nil)
	_ vfs.Notifier    = notifyingFS{}
)

// New returns a read-only view of fsys. The result is a vfs.Notifier
// exactly when fsys is one.
func New(fsys vfs.FileSystem) vfs.FileSystem {
	r := &FS{fsys: fsys}
	if n, ok := fsys.(vfs.Notifier); ok {
		return notifyingFS{FS: r, n: n}
	}
	return r
}

// Unwrap returns the wrapped tree.
func (r *FS) Unwrap() vfs.FileSystem { return r.fsys }

// List forwards to the tree.
func (r *FS) List(ctx context.Context, prefix string) iter.Seq2[vfs.DirEntry, error] {
	return r.fsys.List(ctx, prefix)
}

// Stat forwards to the tree.
func (r *FS) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	return r.fsys.Stat(ctx, path)
}

// Glob forwards to the tree.
func (r *FS) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	return r.fsys.Glob(ctx, pattern, dir)
}

// Read forwards to the tree.
func (r *FS) Read(ctx context.Context, path string) ([]byte, error) {
	return r.fsys.Read(ctx, path)
}

// ReadAt reads part of a file through the tree's RangeReader, or its
// fallback.
func (r *FS) ReadAt(ctx context.Context, path string, p []byte, off int64) (int, error) {
	return vfs.ReadAt(ctx, r.fsys, path, p, off)
}

// Grep forwards to the tree.
func (r *FS) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	return r.fsys.Grep(ctx, q)
}

// Search forwards to the tree.
func (r *FS) Search(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return r.fsys.Search(ctx, q)
}

// Write fails with "read-only mount: <path>".
func (r *FS) Write(_ context.Context, path string, _ []byte) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

// Delete fails with "read-only mount: <path>".
func (r *FS) Delete(_ context.Context, path string) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

// MakeDir fails: the tree is read-only (so a mount refuses mkdir at once
// rather than holding a directory nothing can be written under).
func (r *FS) MakeDir(_ context.Context, path string) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

// RemoveDir fails: the tree is read-only.
func (r *FS) RemoveDir(_ context.Context, path string) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

// Watch subscribes to the tree's changes.
func (n notifyingFS) Watch(fn func(vfs.Change)) (cancel func()) { return n.n.Watch(fn) }
