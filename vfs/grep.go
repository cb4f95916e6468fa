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

// CompileGrepQuery checks q before anything is read: its pattern
// compiles and so does its glob filter, or it fails with the contract's
// "invalid grep pattern" or "invalid glob pattern" error. It returns q
// carrying its compiled pattern. A composer compiles the query it is
// given once and hands the result, with each child's own Path and Glob,
// down to its children: their Grep ([Grep], [GrepTree]) reuses the
// compiled pattern instead of compiling it again. A query that already
// carries its compiled pattern is not compiled again.
func CompileGrepQuery(q GrepQuery) (GrepQuery, error) {
	_, _, err := compileGrep(&q)
	return q, err
}

// compiledGrep is a GrepQuery's compiled pattern, with the pattern and
// folding it was compiled from.
type compiledGrep struct {
	pattern string
	fold    bool
	m       *grepscan.Matcher
}

// compileGrep compiles q's pattern, unless q carries it compiled already
// (and records it in q), and q's glob filter, scoped at q.Path.
func compileGrep(q *GrepQuery) (*grepscan.Matcher, *GrepFilter, error) {
	c := q.compiled
	if c == nil || c.pattern != q.Pattern || c.fold != q.CaseInsensitive {
		m, err := grepscan.Compile(q.Pattern, q.CaseInsensitive)
		if err != nil {
			return nil, nil, InvalidGrepPattern(q.Pattern, err)
		}
		c = &compiledGrep{pattern: q.Pattern, fold: q.CaseInsensitive, m: m}
		q.compiled = c
	}
	f, err := CompileGrepFilter(q.Glob, Clean(q.Path))
	if err != nil {
		return nil, nil, err
	}
	return c.m, f, nil
}

// Grep is the shared implementation of FileSystem.Grep for any tree: it
// walks the files under q.Path in order (a missing scope holds none),
// reads each whole with fsys.Read, in parallel, and scans them with the
// grep engine (vfs/grepscan). Binary files are skipped, and so is a file
// that vanishes or becomes a directory between walk and read.
func Grep(ctx context.Context, fsys FileSystem, q GrepQuery) iter.Seq2[GrepResult, error] {
	file := func(p string) grepscan.File { return readFile(fsys, p) }
	return GrepTree(ctx, q, GrepSource{Stat: fsys.Stat, File: file, Dir: WalkGrepFiles(fsys.List, file)})
}

// WalkGrepFiles is a [GrepSource] Dir for a tree whose files the engine
// reaches one at a time: a walk of list under dir (see [Walk]) yields
// each file that passes the filter, as file makes it, in path order.
func WalkGrepFiles(list ListFunc, file func(path string) grepscan.File) func(ctx context.Context, dir string, filter *GrepFilter) iter.Seq2[grepscan.File, error] {
	return func(ctx context.Context, dir string, filter *GrepFilter) iter.Seq2[grepscan.File, error] {
		return func(yield func(grepscan.File, error) bool) {
			for e, err := range Walk(ctx, list, dir, 0) {
				if err != nil {
					yield(grepscan.File{}, err)
					return
				}
				if e.Kind == KindFile && filter.Match(e.Path) && !yield(file(e.Path), nil) {
					return
				}
			}
		}
	}
}

// GrepSource is how [GrepTree] reaches a tree's files.
type GrepSource struct {
	// Stat reports what the scope is. A scope of KindMissing holds
	// nothing; a tree for which a missing scope is an error returns that
	// error instead.
	Stat StatFunc
	// File returns the scope, a file, for the engine.
	File func(path string) grepscan.File
	// Dir yields the files under the directory dir that pass filter
	// (nil passes everything), in path order. A loader marks a file to
	// pass over with [grepscan.SkipFile].
	Dir func(ctx context.Context, dir string, filter *GrepFilter) iter.Seq2[grepscan.File, error]
}

// GrepTree is the body every Grep built on the grep engine shares:
// compile q (see [CompileGrepQuery]), stat its scope, and scan the scope
// when it is a file that passes q.Glob, or the files src.Dir yields when
// it is a directory, within q's MaxResults and MaxLineBytes. Trees that
// hand the engine their files their own way (vfs/local streams them from
// directory handles, vfs/temp scans them in place) call it with their
// source; [Grep] is it over any tree's Stat, List and Read.
func GrepTree(ctx context.Context, q GrepQuery, src GrepSource) iter.Seq2[GrepResult, error] {
	return func(yield func(GrepResult, error) bool) {
		m, filter, err := compileGrep(&q)
		if err != nil {
			yield(GrepResult{}, err)
			return
		}
		scope := Clean(q.Path)
		info, err := src.Stat(ctx, scope)
		if err != nil {
			yield(GrepResult{}, err)
			return
		}
		var files iter.Seq2[grepscan.File, error]
		switch info.Kind {
		case KindMissing:
			return
		case KindFile:
			if !filter.Match(scope) {
				return
			}
			files = func(yield func(grepscan.File, error) bool) { yield(src.File(scope), nil) }
		default:
			files = src.Dir(ctx, scope, filter)
		}
		lim := grepscan.Limits{MaxResults: q.MaxResults, MaxLineBytes: q.MaxLineBytes}
		for h, err := range grepscan.Scan(ctx, m, files, lim) {
			if re, ok := err.(*grepscan.ReadError); ok {
				err = NewError(KindOther, re.Path, re.Err)
			}
			if !yield(GrepResult(h), err) || err != nil {
				return
			}
		}
	}
}

// readFile is the file at p for the engine, read whole with fsys.Read. A
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
