package vfs

import (
	"context"
	"iter"
	"slices"
)

// ListFunc lists the immediate children of a directory, sorted by path, as
// FileSystem.List does.
type ListFunc func(ctx context.Context, dir string) iter.Seq2[DirEntry, error]

// Walk yields every entry strictly under dir, in lexicographic order of the
// full path, using list to read one directory at a time. maxDepth limits how
// deep it goes (1 is dir's children only); 0 or less is unlimited.
//
// Depth-first order alone is not path order: "/a-b" sorts before "/a/x"
// because '-' < '/'. Walk therefore places each directory's subtree at the
// position of the key "name/" among its siblings. It holds one directory's
// entries per level of depth, never the whole tree. It never descends into
// a link and leaves out links to anything but a file (DirEntry.SkipInWalk).
func Walk(ctx context.Context, list ListFunc, dir string, maxDepth int) iter.Seq2[DirEntry, error] {
	return func(yield func(DirEntry, error) bool) {
		walk(ctx, list, Clean(dir), maxDepth, yield)
	}
}

// walkEvent is an entry to yield (sub == false) or a subtree to descend
// into (sub == true), keyed for sorting.
type walkEvent struct {
	key string
	e   DirEntry
	sub bool
}

func walk(ctx context.Context, list ListFunc, dir string, depth int, yield func(DirEntry, error) bool) bool {
	if err := ctx.Err(); err != nil {
		yield(DirEntry{}, err)
		return false
	}
	var events []walkEvent
	for e, err := range list(ctx, dir) {
		if err != nil {
			yield(DirEntry{}, err)
			return false
		}
		if e.SkipInWalk() {
			continue // a link to a directory or to nothing: never followed
		}
		name := Base(e.Path)
		events = append(events, walkEvent{key: name, e: e})
		if e.Kind == KindDir && !e.Link && depth != 1 {
			events = append(events, walkEvent{key: name + "/", e: e, sub: true})
		}
	}
	slices.SortFunc(events, func(a, b walkEvent) int { return compareStrings(a.key, b.key) })
	for _, ev := range events {
		if !ev.sub {
			if !yield(ev.e, nil) {
				return false
			}
			continue
		}
		if !walk(ctx, list, ev.e.Path, depth-1, yield) {
			return false
		}
	}
	return true
}

// WalkFiles yields the paths of the files under dir (or dir itself when it
// is a file), in path order. stat and list come from the same tree.
func WalkFiles(ctx context.Context, fsys FileSystem, dir string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		dir = Clean(dir)
		info, err := fsys.Stat(ctx, dir)
		if err != nil {
			yield("", err)
			return
		}
		switch info.Kind {
		case KindFile:
			yield(dir, nil)
			return
		case KindMissing:
			return
		}
		for e, err := range Walk(ctx, fsys.List, dir, 0) {
			if err != nil {
				yield("", err)
				return
			}
			if e.Kind == KindFile && !yield(e.Path, nil) {
				return
			}
		}
	}
}
