package vfstest

import (
	"bytes"
	"context"
	"iter"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/julyfs/julyfs/vfs"
)

// Reference is the plainest correct tree: a map of files, with every
// answer computed by brute force over all paths and sorted. It exists to
// check the suite itself and to serve as an oracle ([Checks] compares a
// backend's Glob and Grep answers with it); it is slow by design and safe
// for concurrent use.
type Reference struct {
	mu    sync.Mutex
	files map[string][]byte // clean path -> contents
}

var _ vfs.FileSystem = (*Reference)(nil)

// NewReference returns a reference tree holding a copy of files, keyed by
// path (normalized with vfs.Clean).
func NewReference(files map[string][]byte) *Reference {
	r := &Reference{files: map[string][]byte{}}
	for p, data := range files {
		r.files[vfs.Clean(p)] = slices.Clone(data)
	}
	return r
}

// kinds returns every path in the tree (files, their parent directories
// and "/") with its kind. Callers hold mu.
func (r *Reference) kinds() map[string]vfs.EntryKind {
	all := map[string]vfs.EntryKind{"/": vfs.KindDir}
	for p := range r.files {
		all[p] = vfs.KindFile
		for d := vfs.Parent(p); d != "/"; d = vfs.Parent(d) {
			all[d] = vfs.KindDir
		}
	}
	return all
}

// entries returns the entries keep accepts, sorted by path, or the
// context's error.
func (r *Reference) entries(ctx context.Context, keep func(p string) bool) ([]vfs.DirEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []vfs.DirEntry
	for p, k := range r.kinds() {
		if keep(p) {
			out = append(out, vfs.DirEntry{Path: p, Kind: k})
		}
	}
	slices.SortFunc(out, vfs.CompareDirEntries)
	return out, nil
}

func yieldAll[E any](ctx context.Context, items []E, err error) iter.Seq2[E, error] {
	return func(yield func(E, error) bool) {
		var zero E
		if err != nil {
			yield(zero, err)
			return
		}
		for _, it := range items {
			if err := ctx.Err(); err != nil {
				yield(zero, err)
				return
			}
			if !yield(it, nil) {
				return
			}
		}
	}
}

// List yields the paths whose parent is prefix.
func (r *Reference) List(ctx context.Context, prefix string) iter.Seq2[vfs.DirEntry, error] {
	dir := vfs.Clean(prefix)
	es, err := r.entries(ctx, func(p string) bool { return p != "/" && vfs.Parent(p) == dir })
	return yieldAll(ctx, es, err)
}

// Stat looks path up.
func (r *Reference) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return vfs.FileInfo{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.kinds()[p] {
	case vfs.KindFile:
		data := r.files[p]
		return vfs.FileInfo{Path: p, Kind: vfs.KindFile, Size: int64(len(data)), ETag: vfs.ContentETag(data)}, nil
	case vfs.KindDir:
		return vfs.FileInfo{Path: p, Kind: vfs.KindDir}, nil
	}
	return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}, nil
}

// Glob yields the paths strictly under dir whose path relative to dir (to
// "/" for a pattern with a leading slash) matches pattern.
func (r *Reference) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	d := vfs.Clean(dir)
	pat, err := vfs.CompilePattern(pattern)
	if err != nil {
		return vfs.Fail[vfs.DirEntry](err)
	}
	base := d
	if strings.HasPrefix(pattern, "/") {
		base = "/"
	}
	es, err := r.entries(ctx, func(p string) bool {
		rel, ok := vfs.Rel(p, base)
		return ok && p != d && vfs.HasPrefix(p, d) && pat.Match(rel)
	})
	return yieldAll(ctx, es, err)
}

// Read returns a copy of the file at path.
func (r *Reference) Read(ctx context.Context, path string) ([]byte, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.kinds()[p] {
	case vfs.KindFile:
		return slices.Clone(r.files[p]), nil
	case vfs.KindDir:
		return nil, vfs.IsDir(p)
	}
	return nil, vfs.NotFound(p)
}

// Grep splits every text file under q.Path into lines and matches each
// line with the regexp on its own.
func (r *Reference) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	flags := "(?m)"
	if q.CaseInsensitive {
		flags = "(?mi)"
	}
	re, err := regexp.Compile(flags + q.Pattern)
	if err != nil {
		return vfs.Fail[vfs.GrepResult](vfs.InvalidGrepPattern(q.Pattern, err))
	}
	scope := vfs.Clean(q.Path)
	filter, err := vfs.CompileGrepFilter(q.Glob, scope)
	if err != nil {
		return vfs.Fail[vfs.GrepResult](err)
	}
	if err := ctx.Err(); err != nil {
		return vfs.Fail[vfs.GrepResult](err)
	}
	r.mu.Lock()
	paths := slices.Sorted(maps.Keys(r.files))
	files := maps.Clone(r.files)
	r.mu.Unlock()
	var hits []vfs.GrepResult
	for _, p := range paths {
		data := files[p]
		if !vfs.HasPrefix(p, scope) || !filter.Match(p) || bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			continue
		}
		lines := strings.Split(string(data), "\n")
		if strings.HasSuffix(string(data), "\n") {
			lines = lines[:len(lines)-1]
		}
		for i, line := range lines {
			if re.MatchString(line) {
				hits = append(hits, vfs.GrepResult{Path: p, LineNumber: i + 1, Line: line})
			}
		}
	}
	if q.MaxResults > 0 && len(hits) > q.MaxResults {
		hits = hits[:q.MaxResults]
	}
	return yieldAll(ctx, hits, nil)
}

// Write stores a copy of data at path. Writing "/", a directory, or below
// a file fails.
func (r *Reference) Write(ctx context.Context, path string, data []byte) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	kinds := r.kinds()
	if kinds[p] == vfs.KindDir {
		return vfs.IsDir(p)
	}
	for d := vfs.Parent(p); d != "/"; d = vfs.Parent(d) {
		if kinds[d] == vfs.KindFile {
			return vfs.WriteFailed(p, nil)
		}
	}
	r.files[p] = slices.Clone(data)
	return nil
}

// Delete removes the file at path.
func (r *Reference) Delete(ctx context.Context, path string) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.kinds()[p] {
	case vfs.KindFile:
		delete(r.files, p)
		return nil
	case vfs.KindDir:
		return vfs.IsDir(p)
	}
	return vfs.NotFound(p)
}

// Search yields nothing: the reference has no index.
func (r *Reference) Search(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return vfs.Empty[vfs.SearchResult]()
}
