package vfs

import (
	"bytes"
	"context"
	"iter"
	"strings"

	"github.com/julyfs/julyfs/vfs/grepscan"
)

// IsBinary reports whether data looks binary: a NUL byte in its first 8000
// bytes, the heuristic of git. (Grep is stricter: a NUL byte anywhere.)
func IsBinary(data []byte) bool {
	n := min(len(data), 8000)
	return bytes.IndexByte(data[:n], 0) >= 0
}

// GrepFilter is a compiled GrepQuery.Glob: a slash-free pattern matches the
// basename at any depth, a pattern with a slash matches the path relative to
// the grep scope.
type GrepFilter struct {
	p     *Pattern
	base  bool
	scope string
}

// CompileGrepFilter compiles glob for a grep scoped at scope; a nil filter
// (for an empty glob) matches everything.
func CompileGrepFilter(glob, scope string) (*GrepFilter, error) {
	if glob == "" {
		return nil, nil
	}
	p, err := CompilePattern(glob)
	if err != nil {
		return nil, err
	}
	return &GrepFilter{p: p, base: !strings.Contains(glob, "/"), scope: Clean(scope)}, nil
}

// Match reports whether the file at clean path p passes the filter.
func (f *GrepFilter) Match(p string) bool {
	if f == nil {
		return true
	}
	if f.base {
		return f.p.Match(Base(p))
	}
	rel, ok := Rel(p, f.scope)
	if !ok {
		return false
	}
	if rel == "" { // the scope is the file itself
		rel = Base(p)
	}
	return f.p.Match(rel)
}

// CompileGrepQuery compiles q's pattern and its glob filter (scoped at
// q.Path), failing with the contract's invalid-pattern errors: what every
// Grep checks before it reads anything.
func CompileGrepQuery(q GrepQuery) (*grepscan.Matcher, *GrepFilter, error) {
	m, err := grepscan.Compile(q.Pattern, q.CaseInsensitive)
	if err != nil {
		return nil, nil, InvalidGrepPattern(q.Pattern, err)
	}
	f, err := CompileGrepFilter(q.Glob, Clean(q.Path))
	if err != nil {
		return nil, nil, err
	}
	return m, f, nil
}

// Grep is the shared implementation of FileSystem.Grep for any tree: it
// walks the files under q.Path in order, reads them in parallel and scans
// them with the grep engine (vfs/grepscan). A missing scope yields
// nothing; binary files are skipped; a file that vanishes between walk
// and read is skipped.
func Grep(ctx context.Context, fsys FileSystem, q GrepQuery) iter.Seq2[GrepResult, error] {
	return func(yield func(GrepResult, error) bool) {
		m, filter, err := CompileGrepQuery(q)
		if err != nil {
			yield(GrepResult{}, err)
			return
		}
		files := func(yield func(grepscan.File, error) bool) {
			for p, err := range WalkFiles(ctx, fsys, q.Path) {
				if err != nil {
					yield(grepscan.File{}, err)
					return
				}
				if filter.Match(p) && !yield(readFile(fsys, p), nil) {
					return
				}
			}
		}
		for h, err := range grepscan.Scan(ctx, m, files, GrepLimits(q)) {
			if !yield(GrepResult(h), GrepError(err)) || err != nil {
				return
			}
		}
	}
}

// readFile is the file at p for the scanner, read whole with fsys.Read. A
// file that vanished or became a directory since the walk is skipped.
func readFile(fsys FileSystem, p string) grepscan.File {
	return grepscan.File{Path: p, Load: func(ctx context.Context, _ *[]byte) ([]byte, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, err := fsys.Read(ctx, p)
		switch KindOf(err) {
		case KindNotFound, KindIsDir:
			return nil, grepscan.SkipFile
		}
		return data, err
	}}
}

// GrepLimits returns q's bounds for the scanner.
func GrepLimits(q GrepQuery) grepscan.Limits {
	return grepscan.Limits{MaxResults: q.MaxResults, MaxLineBytes: q.MaxLineBytes}
}

// GrepError is err, from the scanner, as a tree reports it: a failed read
// of an opened file is a *PathError about that file.
func GrepError(err error) error {
	if re, ok := err.(*grepscan.ReadError); ok {
		return NewError(KindOther, re.Path, re.Err)
	}
	return err
}
