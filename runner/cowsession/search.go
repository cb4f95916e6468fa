package cowsession

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"sync"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/cow"
	"github.com/julyfs/julyfs/vfs/index"
)

// IndexDir is the directory of the index of the layer's own files of the
// session in sessionDir: a cache, rebuilt when missing or damaged.
func IndexDir(sessionDir string) string { return filepath.Join(sessionDir, "index") }

// Search is the search index of a session on a layer: the agent's index
// over the tree (the base), which answers for the files the layer leaves
// as they are, and an index of the layer's own files ([cow.FS.Upper]),
// brought up to date before each search, so a search sees what the layer
// shows: its new and changed files found by their new contents, its
// deleted files not found. The two are merged by score; the layer's
// files are scored against the layer's index, so a changed file's score
// is comparable with the tree's, not equal to what a whole index of the
// merged tree would give.
type Search struct {
	base     *index.FS
	upperDir string
	opts     index.Options

	mu    sync.Mutex // guards upper; held while it syncs
	layer *cow.FS
	upper *index.FS
}

// NewSearch is the search of a layer over base, the tree wrapped in its
// index (runner.Agent.OpenBaseIndex), whose own files are indexed in
// upperDir with opts' file policy. Attach the layer before the first
// search; Close closes base too.
func NewSearch(base *index.FS, upperDir string, opts index.Options) *Search {
	up := index.Options{MaxFileSize: opts.MaxFileSize, SkipDir: opts.SkipDir, Log: opts.Log, Direct: true}
	return &Search{base: base, upperDir: upperDir, opts: up}
}

// Base is the tree wrapped in its index: the layer's base.
func (s *Search) Base() vfs.FileSystem { return s.base }

// Attach makes the layer's Search answer from s.
func (s *Search) Attach(layer *cow.FS) {
	s.mu.Lock()
	s.layer = layer
	s.mu.Unlock()
	layer.SetUpperSearch(s.searchUpper)
}

// searchUpper searches the layer's own files, after bringing their index
// up to date (opened, or rebuilt when damaged, on first use).
func (s *Search) searchUpper(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return func(yield func(vfs.SearchResult, error) bool) {
		idx, err := s.syncUpper(ctx)
		if err != nil {
			yield(vfs.SearchResult{}, err)
			return
		}
		for r, err := range idx.Search(ctx, q) {
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}

func (s *Search) syncUpper(ctx context.Context) (*index.FS, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.upper != nil {
		if _, err := s.upper.Sync(ctx); err != nil {
			return nil, fmt.Errorf("index of the layer's files %s: %w", s.upperDir, err)
		}
		return s.upper, nil
	}
	idx, err := index.Open(ctx, s.layer.Upper(), s.upperDir, s.opts)
	if errors.Is(err, index.ErrCorrupt) {
		opts := s.opts
		opts.Rebuild = true
		idx, err = index.Open(ctx, s.layer.Upper(), s.upperDir, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("index of the layer's files %s: %w", s.upperDir, err)
	}
	s.upper = idx
	return idx, nil
}

// Close closes both indexes (the layer stops searching its files).
func (s *Search) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.layer != nil {
		s.layer.SetUpperSearch(nil)
	}
	var err error
	if s.upper != nil {
		err = s.upper.Close()
		s.upper = nil
	}
	return errors.Join(err, s.base.Close())
}
