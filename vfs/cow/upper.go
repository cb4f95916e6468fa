package cow

import (
	"context"
	"errors"
	"iter"

	"github.com/julyfs/julyfs/vfs"
)

// Upper returns a read-only tree of the layer's own files: the files the
// layer wrote (not its links, whiteouts or the base's files), under the
// directories that lead to them, with the contents and etags the merged
// tree shows. It is what a search index of the layer's changes reads
// (runner/cowsession indexes it and serves the layer's Search from it,
// [FS.SetUpperSearch]). It follows the layer as it changes; Glob and Grep
// walk it, Search is unsupported, and Write and Delete fail as read-only.
func (c *FS) Upper() vfs.FileSystem { return upperFS{c} }

type upperFS struct{ c *FS }

// kind is what the view has at clean p: a file of the layer, a directory
// on the way to some, or nothing.
func (u upperFS) kind(p string) vfs.EntryKind {
	u.c.mu.RLock()
	defer u.c.mu.RUnlock()
	n := lookup(u.c.root, p)
	switch {
	case n == nil:
		return vfs.KindMissing
	case n.e.Type == TypeFile:
		return vfs.KindFile
	case n.isDir():
		return vfs.KindDir
	}
	return vfs.KindMissing
}

func (u upperFS) List(ctx context.Context, prefix string) iter.Seq2[vfs.DirEntry, error] {
	return func(yield func(vfs.DirEntry, error) bool) {
		p := vfs.Clean(prefix)
		if err := ctx.Err(); err != nil {
			yield(vfs.DirEntry{}, err)
			return
		}
		u.c.mu.RLock()
		var out []vfs.DirEntry
		n := lookup(u.c.root, p)
		found := n != nil && n.isDir()
		if found {
			for _, name := range sortedNames(n) {
				switch ch := n.children[name]; {
				case ch.e.Type == TypeFile:
					out = append(out, vfs.DirEntry{Path: vfs.Join(p, name), Kind: vfs.KindFile})
				case ch.isDir():
					out = append(out, vfs.DirEntry{Path: vfs.Join(p, name), Kind: vfs.KindDir})
				}
			}
		}
		u.c.mu.RUnlock()
		if !found && p != "/" {
			yield(vfs.DirEntry{}, vfs.NotFound(p))
			return
		}
		for _, e := range out {
			if !yield(e, nil) {
				return
			}
		}
	}
}

func (u upperFS) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return vfs.FileInfo{}, err
	}
	switch u.kind(p) {
	case vfs.KindFile:
		return u.c.Stat(ctx, p)
	case vfs.KindDir:
		return vfs.FileInfo{Path: p, Kind: vfs.KindDir}, nil
	}
	return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}, nil
}

func (u upperFS) Read(ctx context.Context, path string) ([]byte, error) {
	p := vfs.Clean(path)
	switch u.kind(p) {
	case vfs.KindFile:
		return u.c.Read(ctx, p)
	case vfs.KindDir:
		return nil, vfs.IsDir(p)
	}
	return nil, vfs.NotFound(p)
}

func (u upperFS) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	return vfs.Glob(ctx, u, pattern, dir)
}

func (u upperFS) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	return vfs.Grep(ctx, u, q)
}

func (u upperFS) Search(context.Context, vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return func(yield func(vfs.SearchResult, error) bool) {
		yield(vfs.SearchResult{}, errors.ErrUnsupported)
	}
}

func (u upperFS) Write(_ context.Context, path string, _ []byte) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

func (u upperFS) Delete(_ context.Context, path string) error {
	return vfs.ReadOnly(vfs.Clean(path))
}
