package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/mapping"
	bleveindex "github.com/blevesearch/bleve_index_api"
	bolt "go.etcd.io/bbolt"

	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
)

// FormatVersion is the version of the on-disk index format: the document
// fields, the analyzer and the manifest encoding. An index written with
// another version is rebuilt when opened.
const FormatVersion = 1

// Names inside the index directory.
const (
	metaFile = "julyfs-index.json"
	bleveDir = "bleve"
)

// Defaults for the zero Options.
const (
	DefaultMaxFileSize = 1 << 20
	DefaultBatchSize   = 256
	// batchBytes bounds the text held by one batch, whatever BatchSize:
	// analysed, a batch takes some 15 times its text in memory, and
	// Committers of them are analysed at once.
	batchBytes = 4 << 20
)

// BuildMemoryLimit is the soft memory limit (runtime/debug.SetMemoryLimit)
// julyfs index build sets when GOMEMLIMIT is not set: the garbage
// collector works harder near it rather than let the heap of a build grow
// to twice what is live. The build's peak RSS is the heap plus the pages
// of the segment files mapped for merges, and the mapped part varies from
// run to run (93-133 MiB at 8x GOROOT/src). At 8x, quiet: 288 MiB gave
// 359-373 MiB peak RSS, 256 MiB 327-375 MiB, 240 MiB 329-349 MiB but
// ~20% more CPU than 288 in the same window (the collector runs back to
// back near the limit); see docs/perf/index.md, "build memory and CPU at 8x".
const BuildMemoryLimit = 256 << 20

var (
	// ErrCorrupt is matched (errors.Is) by the error of Open on an index
	// directory that cannot be read. Open with Options.Rebuild discards it
	// and builds the index anew.
	ErrCorrupt = errors.New("index is damaged")
	// ErrClosed is returned by Search, Write, Delete and Sync after Close.
	ErrClosed = errors.New("index is closed")
	// ErrInUse is matched by the error of Open when another process has the
	// index directory open.
	ErrInUse = errors.New("index is in use by another process")
	// ErrOtherTree is matched by the error of Open when the index was built
	// for another tree (Options.Tree differs from the one recorded).
	ErrOtherTree = errors.New("index was built for another tree")
	// ErrReadOnly is returned by Sync (and matched by the error of a Write
	// or Delete's index update) on an index opened read-only.
	ErrReadOnly = errors.New("index is read-only")
)

// SyncMode says how Open brings the index up to date with the tree.
type SyncMode string

const (
	// SyncAlways walks the whole tree: every directory is listed and
	// every file stat'ed, and a file whose size, mtime or etag changed is
	// read again. It sees every change. "" means SyncAlways.
	SyncAlways SyncMode = "always"
	// SyncAuto compares the tree with the manifest file the last Sync
	// wrote (see the package doc) and lists only the directories whose
	// modification time changed since: it sees every file created,
	// deleted or renamed (a directory's time changes with its entries),
	// which includes editors and tools that save by writing a new file and
	// renaming it over the old one. A file rewritten in place (same name,
	// directory untouched) is seen only in an index of at most
	// Options.StatLimit files, where every file is also stat'ed; in a
	// larger one it is seen at the next SyncAlways, or at once by an FS
	// that follows the tree (see [FS.Follow]). Without a manifest file
	// (an index written before it existed) SyncAuto is SyncAlways.
	SyncAuto SyncMode = "auto"
	// SyncNever searches the index as it is.
	SyncNever SyncMode = "never"
)

// ParseSyncMode parses "auto", "always" or "never".
func ParseSyncMode(s string) (SyncMode, error) {
	switch m := SyncMode(s); m {
	case SyncAuto, SyncAlways, SyncNever:
		return m, nil
	}
	return "", fmt.Errorf("sync mode %q: want auto, always or never", s)
}

// DefaultStatLimit is the StatLimit of the zero Options.
const DefaultStatLimit = 20000

// Options configures Open. The zero value is usable.
type Options struct {
	// MaxFileSize is the size in bytes above which a file is not indexed
	// (it is counted as skipped). 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// Parallelism bounds the files read (and stat'ed) at the same time
	// during a build or resync. 0 means 2 × GOMAXPROCS, at least 4.
	Parallelism int
	// BatchSize is the number of documents committed together during a
	// build. 0 means DefaultBatchSize.
	BatchSize int
	// Committers is the number of batches committed (analysed and turned
	// into index segments) at the same time during a build or resync. 0
	// means GOMAXPROCS.
	Committers int
	// Rebuild discards an existing index (damaged or not) and builds it
	// from scratch.
	Rebuild bool
	// Sync is how Open brings an existing index up to date; "" is
	// SyncAlways. A new or rebuilt index is always built whole.
	Sync SyncMode
	// Direct opens the index itself even when another process follows it
	// (see [FS.FollowedBy]); Open then fails with ErrInUse. Without it,
	// an Open without Follow or Rebuild that finds a process following
	// the index asks that process for search results instead of opening
	// the index.
	Direct bool
	// StatLimit is the number of indexed files up to which SyncAuto stats
	// every file (and so sees files rewritten in place). 0 means
	// DefaultStatLimit; negative means never.
	StatLimit int
	// Follow makes the FS follow the tree's changes until Close, for a
	// long-running process: through the tree's vfs.Notifier, and through
	// inotify (fsnotify) for the local trees it is made of, so files
	// changed behind julyfs's back are searchable within about a second
	// with no walk per query. Open fails when the directories cannot all
	// be watched (fs.inotify.max_user_watches).
	Follow bool
	// Warm asks the kernel, in the background after the index is opened,
	// to read the index's segment files into the page cache, so that the
	// first run of each query does not wait for the disk (see warmStore).
	// Follow implies it: a long-running process. A one-shot search leaves
	// it off and reads only the pages its query needs.
	Warm bool
	// Tree describes the tree the index is for (julyfs passes its mount
	// table, "/repo=local:/abs/src"). When set, it is recorded in the
	// index, and Open refuses an index recorded for another tree
	// (ErrOtherTree) unless Rebuild is set. "" checks nothing.
	Tree string
	// SkipDir reports whether the directory at the clean absolute path p
	// (never "/") and everything under it is left out of the index. nil
	// skips directories named .git, .hg, .svn and .julyfs.
	SkipDir func(p string) bool
	// Progress, when set, is called during Open and Sync as work advances,
	// from one goroutine at a time.
	Progress func(Progress)
	// Log, when set, receives one-line messages about decisions the caller
	// should hear of (an index rebuilt because of its format version).
	Log func(msg string)
}

// DefaultSkipDir is the SkipDir of the zero Options: version-control
// metadata and julyfs's own state directory.
func DefaultSkipDir(p string) bool {
	switch vfs.Base(p) {
	case ".git", ".hg", ".svn", ".julyfs":
		return true
	}
	return false
}

func (o Options) withDefaults() Options {
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.Parallelism <= 0 {
		o.Parallelism = max(4, 2*runtime.GOMAXPROCS(0))
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	if o.Sync == "" {
		o.Sync = SyncAlways
	}
	if o.StatLimit == 0 {
		o.StatLimit = DefaultStatLimit
	}
	if o.Committers <= 0 {
		o.Committers = runtime.GOMAXPROCS(0)
	}
	if o.SkipDir == nil {
		o.SkipDir = DefaultSkipDir
	}
	if o.Progress == nil {
		o.Progress = func(Progress) {}
	}
	if o.Log == nil {
		o.Log = func(string) {}
	}
	return o
}

// FS is a tree whose Search is served by an index. Create it with Open and
// release it with Close.
type FS struct {
	inner    vfs.FileSystem
	dir      string
	opts     Options
	idx      *store
	mapping  mapping.IndexMapping // the fields, for queries
	analyzer analysis.Analyzer

	// syncMu is held for reading by Write and Delete and for writing by
	// Sync, so a resync never races a write through the FS.
	syncMu sync.RWMutex
	// paths serializes writes to one path (striped by hash).
	paths [64]sync.Mutex
	seed  maphash.Seed

	// readOnly: the index directory cannot be written (a read-only
	// filesystem); the index is searched as it is.
	readOnly bool
	follower *follower // nil unless Options.Follow
	server   *server   // a follower's socket (see remote.go)
	// remote is set when another process follows the index: searches
	// are its to answer, and idx is nil.
	remote *remote

	mu       sync.RWMutex // guards closed and last
	closed   bool
	last     Stats
	watchers vfs.Watchers // used when inner is not a vfs.Notifier
}

var (
	_ vfs.FileSystem        = (*FS)(nil)
	_ vfs.RangeReader       = (*FS)(nil)
	_ vfs.ConditionalWriter = (*FS)(nil)
	_ vfs.Notifier          = (*FS)(nil)
)

// Open opens (or creates) the index in directory dir for the tree fsys and
// brings it up to date with the tree (see [FS.Sync]) before returning. The
// build reads at most opts.Parallelism files at a time; cancelling ctx
// stops it, and the next Open resumes it. The caller must Close the FS.
func Open(ctx context.Context, fsys vfs.FileSystem, dir string, opts Options) (*FS, error) {
	opts = opts.withDefaults()
	f := &FS{inner: fsys, dir: dir, opts: opts, seed: maphash.MakeSeed(),
		mapping: newMapping(), analyzer: newCodeAnalyzer()}
	if !opts.Follow && !opts.Rebuild && !opts.Direct {
		// Another process follows the index: it holds it, and keeps it
		// up to date; ask it.
		r, err := dialFollower(ctx, dir, opts.Tree)
		if err != nil {
			return nil, err
		}
		if r != nil {
			f.remote = r
			return f, nil
		}
	}
	idx, created, readOnly, err := openBleve(dir, opts)
	if err != nil {
		return nil, err
	}
	f.idx = &store{idx: idx, readOnly: readOnly}
	f.readOnly = readOnly
	if opts.Warm || opts.Follow {
		go warmStore(dir)
	}
	if readOnly {
		opts.Log(fmt.Sprintf("index %s: read-only (%s cannot be written): searching the index as it is, without bringing it up to date with the tree", dir, dir))
		return f, nil
	}
	mode := opts.Sync
	if created {
		mode = SyncAlways
	}
	if opts.Follow {
		if err := f.startFollow(); err != nil {
			f.Close()
			return nil, err
		}
	}
	if _, err := f.SyncMode(ctx, mode); err != nil {
		f.Close()
		return nil, err
	}
	if opts.Follow {
		if err := f.serve(); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// currentFollower returns the follower, nil when not following or closed.
func (f *FS) currentFollower() *follower {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.follower
}

// ReadOnly reports whether the index was opened read-only, because its
// directory cannot be written: it is searched as it is and never synced.
func (f *FS) ReadOnly() bool { return f.readOnly }

// indexMeta is the content of julyfs-index.json.
type indexMeta struct {
	Format int    `json:"format"`
	Tree   string `json:"tree,omitempty"`
}

// writable reports whether dir can be written (not on a read-only
// filesystem, and permitted).
func writable(dir string) bool {
	return unix.Access(dir, unix.W_OK) == nil
}

// openBleve opens the bleve index under dir, creating, replacing or
// refusing it as the package doc describes. created says the index is new
// (empty); readOnly that dir cannot be written, so the index was opened
// read-only.
func openBleve(dir string, opts Options) (_ bleveindex.Index, created, readOnly bool, _ error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, false, false, fmt.Errorf("index: %w", err)
	}
	metaPath := filepath.Join(dir, metaFile)
	storePath := filepath.Join(dir, bleveDir)
	canWrite := writable(dir)
	create := func(why string) (bleveindex.Index, bool, bool, error) {
		if !canWrite {
			return nil, false, false, fmt.Errorf("index: %s %s, and cannot be written (a read-only filesystem?)", dir, why)
		}
		idx, err := createBleve(dir, opts.Tree)
		return idx, true, false, err
	}
	raw, err := os.ReadFile(metaPath)
	switch {
	case errors.Is(err, os.ErrNotExist):
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, false, false, fmt.Errorf("index: %w", err)
		}
		if len(ents) > 0 {
			return nil, false, false, fmt.Errorf("index: %s is not a julyfs index (it has no %s and is not empty); use an empty or new directory", dir, metaFile)
		}
		return create("holds no index yet")
	case err != nil:
		return nil, false, false, fmt.Errorf("index: %w", err)
	}
	var meta indexMeta
	if err := json.Unmarshal(raw, &meta); err != nil || meta.Format <= 0 {
		if !opts.Rebuild {
			return nil, false, false, corrupt(dir, fmt.Errorf("unreadable %s", metaFile))
		}
		opts.Log(fmt.Sprintf("index %s: %s unreadable; rebuilding", dir, metaFile))
		return create("must be rebuilt")
	}
	if meta.Format != FormatVersion {
		opts.Log(fmt.Sprintf("index %s: written by index format %d, this julyfs uses format %d; rebuilding it", dir, meta.Format, FormatVersion))
		return create("must be rebuilt")
	}
	if opts.Rebuild {
		opts.Log(fmt.Sprintf("index %s: rebuilding as asked", dir))
		return create("must be rebuilt")
	}
	if meta.Tree != "" && opts.Tree != "" && meta.Tree != opts.Tree {
		return nil, false, false, &otherTreeError{dir: dir, built: meta.Tree, given: opts.Tree}
	}
	if !canWrite {
		idx, err := openStore(storePath, true)
		if err != nil {
			return nil, false, false, corrupt(dir, err)
		}
		return idx, false, true, nil
	}
	if meta.Tree == "" && opts.Tree != "" {
		// An index from before trees were recorded: record this one.
		if err := writeMeta(dir, indexMeta{Format: FormatVersion, Tree: opts.Tree}); err != nil {
			return nil, false, false, err
		}
	}
	idx, err := openStore(storePath, false)
	switch {
	case err == nil:
		return idx, false, false, nil
	case errors.Is(err, bolt.ErrTimeout):
		return nil, false, false, fmt.Errorf("index: open %s: %w", dir, ErrInUse)
	}
	return nil, false, false, corrupt(dir, err)
}

// otherTreeError is the error of Open on an index built for another tree.
type otherTreeError struct{ dir, built, given string }

func (e *otherTreeError) Error() string {
	return fmt.Sprintf("index: %s was built for the tree %q, not for %q: use another index directory, or rebuild it for this tree with Options.Rebuild (julyfs index build --rebuild)",
		e.dir, e.built, e.given)
}

func (e *otherTreeError) Is(target error) bool { return target == ErrOtherTree }

func corrupt(dir string, cause error) error {
	return &corruptError{dir: dir, cause: cause}
}

type corruptError struct {
	dir   string
	cause error
}

func (e *corruptError) Error() string {
	return fmt.Sprintf("index: open %s: the index is damaged (%v); rebuild it with Options.Rebuild (julyfs index build --rebuild)", e.dir, e.cause)
}

func (e *corruptError) Is(target error) bool { return target == ErrCorrupt }
func (e *corruptError) Unwrap() error        { return e.cause }

// createBleve replaces any index under dir with an empty one. The meta
// file is written last, so a directory with a meta file always holds a
// complete bleve index of that format.
func createBleve(dir, tree string) (bleveindex.Index, error) {
	metaPath := filepath.Join(dir, metaFile)
	if err := os.Remove(metaPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("index: %w", err)
	}
	if err := removeManifest(dir); err != nil {
		return nil, err
	}
	storePath := filepath.Join(dir, bleveDir)
	if err := os.RemoveAll(storePath); err != nil {
		return nil, fmt.Errorf("index: %w", err)
	}
	idx, err := newStore(storePath)
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("index: open %s: %w", dir, ErrInUse)
		}
		return nil, fmt.Errorf("index: create %s: %w", dir, err)
	}
	if err := writeMeta(dir, indexMeta{Format: FormatVersion, Tree: tree}); err != nil {
		idx.Close()
		return nil, err
	}
	return idx, nil
}

// writeMeta replaces julyfs-index.json in dir with meta.
func writeMeta(dir string, meta indexMeta) error {
	metaPath := filepath.Join(dir, metaFile)
	raw, _ := json.Marshal(meta)
	tmp := metaPath + ".tmp"
	if err := os.WriteFile(tmp, append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	if err := os.Rename(tmp, metaPath); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}

// Document fields. A secondary file (see isSecondary) has its text in the
// fields of the same names prefixed with auxPrefix, which queries weigh
// less: a test or a vendored copy ranks below the code it tests or copies.
const (
	fieldContent  = "content" // the file's text, code analyzer
	fieldPath     = "path"    // the path, code analyzer
	fieldName     = "name"    // the base name, code analyzer
	auxPrefix     = "aux_"
	fieldScope    = "scope"    // the path and each ancestor directory, keyword
	fieldManifest = "manifest" // "size mtime etag state", stored only
)

// newMapping describes the documents. Documents are built directly (see
// newDocument); the mapping records the same fields, stored in the index
// so it is self-describing (and readable by bleve's root package), and
// queries are given it.
func newMapping() *mapping.IndexMappingImpl {
	text := func() *mapping.FieldMapping {
		fm := mapping.NewTextFieldMapping()
		fm.Analyzer = AnalyzerName
		fm.Store = false
		fm.IncludeTermVectors = false
		fm.IncludeInAll = false
		fm.DocValues = false
		return fm
	}
	scope := mapping.NewKeywordFieldMapping()
	scope.Store = false
	scope.IncludeTermVectors = false
	scope.IncludeInAll = false
	scope.DocValues = false
	scope.SkipFreqNorm = true
	manifest := mapping.NewKeywordFieldMapping()
	manifest.Index = false
	manifest.Store = true
	manifest.IncludeTermVectors = false
	manifest.IncludeInAll = false
	manifest.DocValues = false

	doc := mapping.NewDocumentStaticMapping()
	for _, f := range []string{fieldContent, fieldPath} {
		doc.AddFieldMappingsAt(f, text())
		doc.AddFieldMappingsAt(auxPrefix+f, text())
	}
	doc.AddFieldMappingsAt(fieldScope, scope)
	doc.AddFieldMappingsAt(fieldManifest, manifest)

	im := mapping.NewIndexMapping()
	im.DefaultMapping = doc
	im.DefaultAnalyzer = AnalyzerName
	// bleve's BM25 takes a field's average length to be its number of
	// distinct terms per document, which for file contents is orders of
	// magnitude too small and buries every long file; the classic tf-idf
	// model (sqrt tf, 1/sqrt length norm) ranks code far better.
	im.ScoringModel = bleveindex.DefaultScoringModel
	im.StoreDynamic = false
	im.IndexDynamic = false
	im.DocValuesDynamic = false
	return im
}

// Stats returns the summary of the last Sync (the one Open ran, or a
// later call).
func (f *FS) Stats() Stats {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.last
}

// Dir returns the index directory.
func (f *FS) Dir() string { return f.dir }

// Close waits until every change is on disk and closes the index. The
// wrapped tree is not closed. Close is idempotent.
func (f *FS) Close() error {
	if f.remote != nil {
		f.mu.Lock()
		f.closed = true
		f.mu.Unlock()
		return nil
	}
	f.mu.Lock()
	srv := f.server
	f.server = nil
	f.mu.Unlock()
	if srv != nil {
		srv.close()
	}
	f.mu.Lock()
	fl := f.follower
	f.follower = nil
	f.mu.Unlock()
	if fl != nil {
		fl.close()
	}
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	f.mu.Unlock()
	err := f.flush(context.Background())
	if cerr := f.idx.Close(); err == nil {
		err = cerr
	}
	return err
}

func (f *FS) isClosed() bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.closed
}

// flush waits until every batch committed so far is persisted on disk. It
// does nothing when no batch was committed since the last flush.
func (f *FS) flush(ctx context.Context) error {
	if f.readOnly || !f.idx.dirty.Swap(false) {
		return nil
	}
	if err := f.idx.persist(ctx, f.idx.batch); err != nil {
		f.idx.dirty.Store(true)
		return err
	}
	return nil
}

func (f *FS) lockPath(p string) func() {
	m := &f.paths[maphash.String(f.seed, p)%uint64(len(f.paths))]
	m.Lock()
	return m.Unlock
}

// beginWrite starts a write of clean p that keeps the index in step: it
// fails when the FS is closed, and otherwise holds off a Sync and other
// writers of p until the returned done is called.
func (f *FS) beginWrite(p string) (done func(), err error) {
	if f.isClosed() {
		return nil, vfs.NewError(vfs.KindWriteFailed, p, ErrClosed)
	}
	f.syncMu.RLock()
	unlock := f.lockPath(p)
	return func() {
		unlock()
		f.syncMu.RUnlock()
	}, nil
}

// skipped reports whether clean p lies under a skipped directory.
func (f *FS) skipped(p string) bool {
	for d := vfs.Parent(p); d != "/"; d = vfs.Parent(d) {
		if f.opts.SkipDir(d) {
			return true
		}
	}
	return false
}

// List forwards to the wrapped tree.
func (f *FS) List(ctx context.Context, prefix string) iter.Seq2[vfs.DirEntry, error] {
	return f.inner.List(ctx, prefix)
}

// Stat forwards to the wrapped tree.
func (f *FS) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	return f.inner.Stat(ctx, path)
}

// Glob forwards to the wrapped tree.
func (f *FS) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	return f.inner.Glob(ctx, pattern, dir)
}

// Read forwards to the wrapped tree.
func (f *FS) Read(ctx context.Context, path string) ([]byte, error) {
	return f.inner.Read(ctx, path)
}

// ReadAt forwards to the wrapped tree's RangeReader, or reads the file
// whole when it has none (vfs.ReadAt).
func (f *FS) ReadAt(ctx context.Context, path string, p []byte, off int64) (int, error) {
	return vfs.ReadAt(ctx, f.inner, path, p, off)
}

// MakeDir forwards to the wrapped tree (vfs.DirMaker): an empty directory
// holds nothing to index.
func (f *FS) MakeDir(ctx context.Context, path string) error {
	return vfs.MakeDir(ctx, f.inner, path)
}

// RemoveDir forwards to the wrapped tree (vfs.DirRemover): only an empty
// directory goes, so the index loses nothing.
func (f *FS) RemoveDir(ctx context.Context, path string) error {
	return vfs.RemoveDir(ctx, f.inner, path)
}

// Grep forwards to the wrapped tree.
func (f *FS) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	return f.inner.Grep(ctx, q)
}

// Watch forwards to the wrapped tree's Notifier; when it has none, the FS
// reports the writes and deletes made through it.
func (f *FS) Watch(fn func(vfs.Change)) (cancel func()) {
	if n, ok := f.inner.(vfs.Notifier); ok {
		return n.Watch(fn)
	}
	return f.watchers.Watch(fn)
}

func (f *FS) notify(c vfs.Change) {
	if _, ok := f.inner.(vfs.Notifier); !ok {
		f.watchers.Notify(c)
	}
}

// Write writes through to the wrapped tree, then indexes data as the
// file's new content before returning.
func (f *FS) Write(ctx context.Context, path string, data []byte) error {
	p := vfs.Clean(path)
	done, err := f.beginWrite(p)
	if err != nil {
		return err
	}
	defer done()
	if err := f.inner.Write(ctx, p, data); err != nil {
		return err
	}
	err = f.update(ctx, p, data)
	f.notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	return err
}

// WriteIf writes through the wrapped tree's ConditionalWriter, or, when it
// has none, checks and writes under the FS's per-path lock (atomic against
// writers using this FS, not against others of the wrapped tree). On
// success the index holds data before WriteIf returns.
func (f *FS) WriteIf(ctx context.Context, path string, data []byte, cond vfs.Precondition) (string, error) {
	p := vfs.Clean(path)
	done, err := f.beginWrite(p)
	if err != nil {
		return "", err
	}
	defer done()
	etag, err := vfs.WriteIf(ctx, f.inner, p, data, cond)
	if err != nil {
		return "", err
	}
	err = f.update(ctx, p, data)
	f.notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	return etag, err
}

// Delete deletes from the wrapped tree, then removes the file from the
// index before returning.
func (f *FS) Delete(ctx context.Context, path string) error {
	p := vfs.Clean(path)
	done, err := f.beginWrite(p)
	if err != nil {
		return err
	}
	defer done()
	if err := f.inner.Delete(ctx, p); err != nil {
		return err
	}
	if f.remote != nil {
		// The following process sees the deletion as it sees anyone's.
	} else if derr := f.idx.Delete(p); derr != nil {
		err = indexUpdateFailed(p, derr)
	}
	f.notify(vfs.Change{Path: p, Op: vfs.ChangeDelete})
	return err
}

// update indexes data as the content of clean p, just written.
func (f *FS) update(ctx context.Context, p string, data []byte) error {
	if f.skipped(p) || f.remote != nil {
		return nil // a following process indexes what it sees written
	}
	info, err := f.inner.Stat(ctx, p)
	if err != nil {
		return indexUpdateFailed(p, err)
	}
	if info.Kind != vfs.KindFile {
		// Gone again (another writer of the wrapped tree); the next Sync
		// settles it.
		info = vfs.FileInfo{Path: p, Kind: vfs.KindFile, Size: int64(len(data))}
	}
	doc, _ := f.newDocument(p, info, data)
	b := bleveindex.NewBatch()
	b.Update(doc)
	if err := f.idx.Batch(b); err != nil {
		return indexUpdateFailed(p, err)
	}
	return nil
}

func indexUpdateFailed(p string, cause error) error {
	return &vfs.PathError{Kind: vfs.KindOther, Path: p, Err: fmt.Errorf("written, but the index update failed: %w", cause)}
}
