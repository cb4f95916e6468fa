package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	bleveindex "github.com/blevesearch/bleve_index_api"
)

// The bleve index is used through its sub-packages only (scorch, mapping,
// search/query, search/collector, document). bleve's root package imports
// bleve/v2/config, which registers every language analyzer bleve has; its
// package initialization alone added ~10 ms to the start of every binary
// linking this package, and ~15 MB to its size.
//
// The store keeps the layout bleve's root package gives an index, so an
// index is the same on disk whichever wrote it: under bleveDir,
// index_meta.json names the index type and storeDir holds scorch's files;
// the index mapping is stored as the internal value mappingKey.
const (
	storeMetaFile = "index_meta.json"
	storeDir      = "store"
	mappingKey    = "_mapping"
)

// storeMeta is the content of index_meta.json, as bleve writes it.
type storeMeta struct {
	Storage   string         `json:"storage"`
	IndexType string         `json:"index_type"`
	Config    map[string]any `json:"config,omitempty"`
}

// analysisQueue runs the analysis of the documents of a batch (bleve's
// root package keeps one such queue of 4 workers for the process).
var analysisQueue = sync.OnceValue(func() *bleveindex.AnalysisQueue {
	return bleveindex.NewAnalysisQueue(4)
})

// scorchConfig is the configuration of the scorch index at path. Batches
// do not wait for fsync: a lost batch takes its manifest entries with it,
// so the next Sync re-reads those files. Close waits for persistence.
func scorchConfig(path string, create, readOnly bool) map[string]any {
	c := storeConfig()
	c["path"] = path
	c["create_if_missing"] = create
	c["error_if_exists"] = create
	if readOnly {
		c["read_only"] = true
	}
	return c
}

// storeConfig is the part of the configuration recorded in index_meta.json.
// An index opened takes this configuration, not the one recorded: none of
// it changes what is on disk.
//
// The merge plan keeps scorch's tiered policy with a first tier of one
// build batch (~256 files) instead of 2,000 documents, and tiers and
// merges 8 wide instead of 10. With the default, a build's first tier
// held fewer segments than it had batches, so every new batch triggered
// another merge of the small segments at hand: merges wrote 2.3 times the
// final index at 1x. With this plan a build's merges wrote 2.1 times it
// at 8x and the build took ~15% less CPU (docs/perf/index.md); the final
// merge of a large sync (store.merge) then merges the small segments left
// (finalMergePlan).
func storeConfig() map[string]any {
	return map[string]any{
		"unsafe_batch": true,
		"bolt_timeout": "1s",
		"scorchMergePlanOptions": map[string]any{
			"FloorSegmentSize":     DefaultBatchSize,
			"MaxSegmentsPerTier":   8,
			"SegmentsPerMergeTask": 8,
			"TierGrowth":           8.0,
		},
	}
}

// openStore opens the existing index at path (dir/bleve), read-only when
// asked.
func openStore(path string, readOnly bool) (bleveindex.Index, error) {
	raw, err := os.ReadFile(filepath.Join(path, storeMetaFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s missing", storeMetaFile)
		}
		return nil, err
	}
	var meta storeMeta
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("unreadable %s: %v", storeMetaFile, err)
	}
	if meta.IndexType != scorch.Name {
		return nil, fmt.Errorf("%s: index type %q, want %q", storeMetaFile, meta.IndexType, scorch.Name)
	}
	idx, err := scorch.NewScorch(scorch.Name, scorchConfig(filepath.Join(path, storeDir), false, readOnly), analysisQueue())
	if err != nil {
		return nil, err
	}
	if err := idx.Open(); err != nil {
		return nil, err
	}
	return idx, nil
}

// newStore creates an empty index at path (dir/bleve), which must not
// exist.
func newStore(path string) (_ bleveindex.Index, err error) {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(storeMeta{Storage: scorch.Name, IndexType: scorch.Name, Config: storeConfig()})
	if err := os.WriteFile(filepath.Join(path, storeMetaFile), raw, 0o666); err != nil {
		return nil, err
	}
	idx, err := scorch.NewScorch(scorch.Name, scorchConfig(filepath.Join(path, storeDir), true, false), analysisQueue())
	if err != nil {
		return nil, err
	}
	if err := idx.Open(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			idx.Close()
		}
	}()
	m, err := json.Marshal(newMapping())
	if err != nil {
		return nil, err
	}
	if err := idx.SetInternal([]byte(mappingKey), m); err != nil {
		return nil, err
	}
	return idx, nil
}

// store is the scorch index with the guard bleve's root package gave it:
// a read or batch after Close fails with ErrClosed instead of reaching the
// closed index (whose Reader returns a nil snapshot), and Close waits for
// the reads and batches in flight.
type store struct {
	mu  sync.RWMutex
	idx bleveindex.Index // nil once closed
	// dirty is set by every Batch, cleared by FS.flush.
	dirty    atomic.Bool
	readOnly bool
}

// Batch commits b.
func (s *store) Batch(b *bleveindex.Batch) error {
	s.dirty.Store(true)
	return s.batch(b)
}

// batch commits b without marking the store dirty.
func (s *store) batch(b *bleveindex.Batch) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.idx == nil {
		return ErrClosed
	}
	if s.readOnly {
		return ErrReadOnly
	}
	return s.idx.Batch(b)
}

// Delete removes the document id.
func (s *store) Delete(id string) error {
	b := bleveindex.NewBatch()
	b.Delete(id)
	return s.Batch(b)
}

// read calls fn with a reader of the index as it is now, closed after fn.
func (s *store) read(fn func(bleveindex.IndexReader) error) (err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.idx == nil {
		return ErrClosed
	}
	r, err := s.idx.Reader()
	if err != nil {
		return err
	}
	defer func() {
		if cerr := r.Close(); err == nil {
			err = cerr
		}
	}()
	return fn(r)
}

// mergeAfter is the number of files indexed by one sync after which it
// merges the index's segments (see store.merge).
const mergeAfter = 2000

// finalMergeBelow is the size (documents) under which a segment is merged
// at the end of a large sync: the segments of one or a few batches that
// the build's tiered merges left behind. Larger ones are left as they are.
const finalMergeBelow = 4 * DefaultBatchSize

// finalMergePlan is the merge plan of the end of a large sync: every
// segment of fewer than finalMergeBelow documents into one (or a few, 8
// at a time). scorch's merger runs a plan's merges one after another on
// one goroutine while the build's other core has nothing left to do, so
// this tail is kept to the small segments. (With scorch's default plan
// the tail also merged again the segments of 1,800–2,000 documents the
// build had just merged: at 1x GOROOT/src it rewrote two thirds of the
// index on one core, ~1 s of a 6 s build.)
func finalMergePlan() mergeplan.MergePlanOptions {
	o := mergeplan.SingleSegmentMergePlanOptions
	// Only segments of fewer than MaxSegmentSize/2 documents are eligible,
	// and a merge stays under MaxSegmentSize documents.
	o.MaxSegmentSize = 2 * finalMergeBelow
	o.SegmentsPerMergeTask = 8
	return o
}

// merge merges the small segments a large sync leaves (finalMergePlan).
func (s *store) merge(ctx context.Context) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.idx == nil {
		return ErrClosed
	}
	sc, ok := s.idx.(*scorch.Scorch)
	if !ok {
		return nil
	}
	opts := finalMergePlan()
	return sc.ForceMerge(ctx, &opts)
}

// persist commits a batch through commit and waits until it, and so
// everything committed before, is persisted.
func (s *store) persist(ctx context.Context, commit func(*bleveindex.Batch) error) error {
	done := make(chan error, 1)
	b := bleveindex.NewBatch()
	b.SetInternal([]byte("julyfs:flush"), []byte(time.Now().UTC().Format(time.RFC3339Nano)))
	b.SetPersistedCallback(func(err error) {
		select {
		case done <- err:
		default:
		}
	})
	if err := commit(b); err != nil {
		return fmt.Errorf("index: flush: %w", err)
	}
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("index: flush: %w", err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close closes the index once reads and batches in flight are done.
func (s *store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idx == nil {
		return nil
	}
	err := s.idx.Close()
	s.idx = nil
	return err
}
