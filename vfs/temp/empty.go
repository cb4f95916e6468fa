package temp

import (
	"context"
	"iter"

	"github.com/julyfs/julyfs/vfs"
)

// EmptyFS is a tree with no files: walks are empty, reads miss and writes
// fail with "read-only mount". It is the contract's emptyFs, an overlay
// leaf or a missing catalog.
type EmptyFS struct{}

var _ vfs.FileSystem = EmptyFS{}

// Empty returns the empty tree.
func Empty() EmptyFS { return EmptyFS{} }

// List yields nothing.
func (EmptyFS) List(context.Context, string) iter.Seq2[vfs.DirEntry, error] {
	return vfs.Empty[vfs.DirEntry]()
}

// Stat answers missing for every path but the root, which is an empty
// directory.
func (EmptyFS) Stat(_ context.Context, path string) (vfs.FileInfo, error) {
	p := vfs.Clean(path)
	if p == "/" {
		return vfs.FileInfo{Path: p, Kind: vfs.KindDir}, nil
	}
	return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}, nil
}

// Glob yields nothing, after checking the pattern compiles.
func (EmptyFS) Glob(_ context.Context, pattern, _ string) iter.Seq2[vfs.DirEntry, error] {
	if _, err := vfs.CompilePattern(pattern); err != nil {
		return vfs.Fail[vfs.DirEntry](err)
	}
	return vfs.Empty[vfs.DirEntry]()
}

// Read fails with not found.
func (EmptyFS) Read(_ context.Context, path string) ([]byte, error) {
	return nil, vfs.NotFound(vfs.Clean(path))
}

// Grep yields nothing, after checking the pattern and glob filter compile.
func (EmptyFS) Grep(_ context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	if _, err := vfs.CompileGrepQuery(q); err != nil {
		return vfs.Fail[vfs.GrepResult](err)
	}
	return vfs.Empty[vfs.GrepResult]()
}

// Write fails with read-only mount.
func (EmptyFS) Write(_ context.Context, path string, _ []byte) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

// Delete fails with read-only mount.
func (EmptyFS) Delete(_ context.Context, path string) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

// Search yields nothing.
func (EmptyFS) Search(context.Context, vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return vfs.Empty[vfs.SearchResult]()
}
