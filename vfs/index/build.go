package index

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2/document"
	bleveindex "github.com/blevesearch/bleve_index_api"

	"github.com/julyfs/julyfs/vfs"
)

// Stats summarizes one Sync (or the build Open ran).
type Stats struct {
	// Files is the number of files found in the tree (outside skipped
	// directories).
	Files int
	// Indexed is the number of files read and indexed.
	Indexed int
	// Unchanged is the number of files whose manifest entry matched, so
	// they were not read.
	Unchanged int
	// Removed is the number of indexed files no longer in the tree.
	Removed int
	// SkippedBinary and SkippedLarge count the files not indexed because
	// they are binary or larger than Options.MaxFileSize (newly found or
	// changed ones; unchanged skipped files count as Unchanged).
	SkippedBinary int
	SkippedLarge  int
	// Failed counts files that could not be read; they are retried on the
	// next Sync. FirstError is the first such error.
	Failed     int
	FirstError error
	// Bytes is the size of the text indexed.
	Bytes int64
	// Duration is how long the Sync took.
	Duration time.Duration
}

// String renders s as the one-line summary `julyfs index build` prints.
func (s Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d files: %d indexed (%s), %d unchanged, %d removed, %d skipped binary, %d skipped too large",
		s.Files, s.Indexed, humanBytes(s.Bytes), s.Unchanged, s.Removed, s.SkippedBinary, s.SkippedLarge)
	if s.Failed > 0 {
		fmt.Fprintf(&b, ", %d failed (first: %v)", s.Failed, s.FirstError)
	}
	fmt.Fprintf(&b, " in %s", s.Duration.Round(time.Millisecond))
	return b.String()
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Phase names a stage of a Sync.
type Phase string

const (
	// PhaseScan: walking the tree and comparing it with the manifest.
	// Done counts the files seen; Total is not known yet (0).
	PhaseScan Phase = "scan"
	// PhaseIndex: reading and indexing the changed files. Done of Total.
	PhaseIndex Phase = "index"
	// PhaseDone: the Sync finished.
	PhaseDone Phase = "done"
)

// Progress is reported through Options.Progress.
type Progress struct {
	Phase Phase
	Done  int
	Total int
}

// manifest states of a document.
const (
	stateIndexed = 'i'
	stateBinary  = 'b'
	stateLarge   = 'l'
)

// entry is the manifest entry of one path.
type entry struct {
	size  int64
	mtime int64 // UnixNano, 0 when the tree has none
	etag  string
	state byte
}

func entryOf(info vfs.FileInfo, state byte) entry {
	var mt int64
	if !info.ModTime.IsZero() {
		mt = info.ModTime.UnixNano()
	}
	return entry{size: info.Size, mtime: mt, etag: info.ETag, state: state}
}

func (e entry) String() string {
	return strconv.FormatInt(e.size, 10) + " " + strconv.FormatInt(e.mtime, 10) + " " + string(e.state) + " " + e.etag
}

func parseEntry(s string) (entry, bool) {
	f := strings.SplitN(s, " ", 4)
	if len(f) != 4 || len(f[2]) != 1 {
		return entry{}, false
	}
	size, err1 := strconv.ParseInt(f[0], 10, 64)
	mtime, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return entry{}, false
	}
	return entry{size: size, mtime: mtime, state: f[2][0], etag: f[3]}, true
}

// same reports whether the file described by info is the one e recorded.
func (e entry) same(info vfs.FileInfo) bool {
	n := entryOf(info, e.state)
	return n.size == e.size && n.mtime == e.mtime && n.etag == e.etag
}

// newDocument builds the document of clean p with content data (nil for a
// file that is not read). It returns the manifest state it recorded.
func (f *FS) newDocument(p string, info vfs.FileInfo, data []byte) (*document.Document, byte) {
	state := byte(stateIndexed)
	switch {
	case info.Size > f.opts.MaxFileSize || int64(len(data)) > f.opts.MaxFileSize:
		state = stateLarge
	case vfs.IsBinary(data):
		state = stateBinary
	}
	doc := document.NewDocument(p)
	doc.AddField(document.NewTextFieldCustom(fieldManifest, nil, []byte(entryOf(info, state).String()), bleveindex.StoreField, nil))
	if state != stateIndexed {
		return doc, state
	}
	text := bleveindex.IndexField
	prefix := ""
	if isSecondary(p) {
		prefix = auxPrefix
	}
	doc.AddField(newCodeField(prefix+fieldContent, data, text))
	doc.AddField(newCodeField(prefix+fieldPath, []byte(p), text))
	i := uint64(0)
	for d := p; d != "/"; d = vfs.Parent(d) {
		doc.AddField(document.NewTextFieldCustom(fieldScope, []uint64{i}, []byte(d), bleveindex.IndexField|bleveindex.SkipFreqNorm, nil))
		i++
	}
	return doc, state
}

// isSecondary reports whether clean p is a test, test data or a vendored
// copy: a file whose matches rank below those of the code proper.
func isSecondary(p string) bool {
	base := vfs.Base(p)
	if strings.Contains(base, "_test.") || strings.Contains(base, ".test.") ||
		strings.Contains(base, ".spec.") || strings.HasPrefix(base, "test_") {
		return true
	}
	for _, seg := range vfs.Split(vfs.Parent(p)) {
		switch seg {
		case "testdata", "vendor", "node_modules", "__tests__":
			return true
		}
	}
	return false
}

// loadManifest reads every document's manifest entry. It reads every
// document's stored fields, so it is where a damaged segment shows first;
// bleve (zap) panics on some damaged segments instead of returning an error,
// and that is reported as a damaged index, not a crash.
func (f *FS) loadManifest(ctx context.Context) (_ map[string]entry, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = corrupt(f.dir, fmt.Errorf("unreadable segment: %v", r))
		}
	}()
	var m map[string]entry
	err = f.idx.read(func(r bleveindex.IndexReader) error {
		n, err := r.DocCount()
		if err != nil {
			return err
		}
		m = make(map[string]entry, n)
		if n == 0 {
			return nil
		}
		ids, err := r.DocIDReaderAll()
		if err != nil {
			return err
		}
		defer ids.Close()
		for i := 0; ; i++ {
			if i%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			iid, err := ids.Next()
			if err != nil || iid == nil {
				return err
			}
			id, err := r.ExternalID(iid)
			if err != nil {
				return err
			}
			doc, err := r.Document(id)
			if err != nil {
				return err
			}
			var s string
			if doc != nil {
				doc.VisitFields(func(fl bleveindex.Field) {
					if fl.Name() == fieldManifest {
						s = string(fl.Value())
					}
				})
			}
			e, ok := parseEntry(s)
			if !ok {
				// An entry this version cannot read: re-read the file.
				e = entry{size: -1}
			}
			m[id] = e
		}
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Sync brings the index up to date with the wrapped tree: it walks the
// tree, reads new files and files whose size, mtime or etag differ from
// the manifest, removes files that are gone, and reads nothing else.
// Writes through the FS wait while it runs. Cancelling ctx stops it after
// the current batch; what was committed stays, and the next Sync
// continues from there.
func (f *FS) Sync(ctx context.Context) (Stats, error) {
	return f.SyncMode(ctx, SyncAlways)
}

// SyncMode brings the index up to date as mode says: [SyncAlways] is
// Sync; [SyncAuto] checks the tree against the manifest file the last
// Sync left (see [SyncAuto] for what it sees); [SyncNever] does nothing.
// An index opened read-only (see [FS.ReadOnly]) is never synced: SyncMode
// returns ErrReadOnly, unless mode is SyncNever.
func (f *FS) SyncMode(ctx context.Context, mode SyncMode) (Stats, error) {
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	if f.isClosed() {
		return Stats{}, ErrClosed
	}
	if mode == SyncNever || f.remote != nil {
		return Stats{}, nil // a following process keeps the index up to date
	}
	if f.readOnly {
		return Stats{}, ErrReadOnly
	}
	start := time.Now()
	st, err := f.sync(ctx, mode)
	st.Duration = time.Since(start)
	f.mu.Lock()
	f.last = st
	f.mu.Unlock()
	if err != nil {
		return st, err
	}
	f.opts.Progress(Progress{Phase: PhaseDone, Done: st.Files, Total: st.Files})
	return st, nil
}

// todo is a file to (re-)read.
type todo struct {
	path string
	info vfs.FileInfo
}

func (f *FS) sync(ctx context.Context, mode SyncMode) (Stats, error) {
	var st Stats
	start := time.Now()
	// SyncAuto trusts the manifest file. SyncAlways reads the manifest back
	// from the index itself, which also reads every document's stored
	// fields (where a damaged segment shows), and walks the whole tree.
	if mode == SyncAuto {
		if old, ok := readManifest(f.dir); ok {
			work, gone, nm, quiet, err := f.quickScan(ctx, old, &st, start)
			if err != nil {
				return st, err
			}
			if quiet {
				return st, nil // nothing changed: nothing to write
			}
			return st, f.apply(ctx, work, gone, nm, &st)
		}
	}
	files, err := f.loadManifest(ctx)
	if errors.Is(err, ErrCorrupt) {
		return st, err
	}
	if err != nil {
		return st, fmt.Errorf("index: read manifest: %w", err)
	}
	nm := newManifest()
	work, err := f.scan(ctx, files, nm, &st, start)
	if err != nil {
		return st, err
	}
	// What is left in files is gone from the tree.
	gone := slices.Collect(maps.Keys(files))
	return st, f.apply(ctx, work, gone, nm, &st)
}

// apply removes the paths gone, reads and indexes the files of work, waits
// until the index is on disk and writes the manifest file for nm (which
// the indexed files are added to).
func (f *FS) apply(ctx context.Context, work []todo, gone []string, nm *manifest, st *Stats) error {
	if len(gone) > 0 || len(work) > 0 {
		// The manifest file no longer describes the index: a crash before
		// the new one is written leaves none (the next Sync walks).
		if err := removeManifest(f.dir); err != nil {
			return err
		}
	}
	for len(gone) > 0 {
		b := bleveindex.NewBatch()
		n := min(len(gone), 4*f.opts.BatchSize)
		for _, p := range gone[:n] {
			b.Delete(p)
		}
		if err := f.idx.Batch(b); err != nil {
			return fmt.Errorf("index: %w", err)
		}
		st.Removed += n
		gone = gone[n:]
	}
	if err := f.index(ctx, work, nm, st); err != nil {
		return err
	}
	if st.Indexed >= mergeAfter {
		// Batches committed on every core outrun scorch's merger, which
		// would leave a large build in dozens of segments, each a
		// dictionary every query term is looked up in: merge them as the
		// merge policy wants before returning.
		if err := f.idx.merge(ctx); err != nil {
			return fmt.Errorf("index: merge: %w", err)
		}
	}
	if err := f.flush(ctx); err != nil {
		return err
	}
	if err := writeManifest(f.dir, nm); err != nil {
		return fmt.Errorf("index: write %s: %w", manifestFile, err)
	}
	return nil
}

// scan walks the tree, stats files in parallel and returns those whose
// manifest entry does not match. Matched and found entries are removed
// from man; nm receives every directory with its time and the files that
// matched.
func (f *FS) scan(ctx context.Context, man map[string]entry, nm *manifest, st *Stats, start time.Time) ([]todo, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	paths := make(chan string, 256)
	infos := make(chan vfs.FileInfo, 256)
	var walkErr error
	go func() {
		defer close(paths)
		list := func(ctx context.Context, dir string) iter.Seq2[vfs.DirEntry, error] {
			return func(yield func(vfs.DirEntry, error) bool) {
				// The directory's time is taken before it is listed, so a
				// file created during the listing changes it again.
				info, err := f.inner.Stat(ctx, dir)
				if err != nil {
					yield(vfs.DirEntry{}, err)
					return
				}
				if info.Kind == vfs.KindDir {
					nm.dirs[dir] = dirTime(info.ModTime, start)
				}
				for e, err := range f.inner.List(ctx, dir) {
					if err == nil && e.Kind == vfs.KindDir && f.opts.SkipDir(e.Path) {
						continue
					}
					if !yield(e, err) {
						return
					}
				}
			}
		}
		for e, err := range vfs.Walk(ctx, list, "/", 0) {
			if err != nil {
				walkErr = err
				return
			}
			if e.Kind != vfs.KindFile {
				continue
			}
			select {
			case paths <- e.Path:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	var statErr error
	var statOnce sync.Once
	for range f.opts.Parallelism {
		wg.Go(func() {
			for p := range paths {
				info, err := f.inner.Stat(ctx, p)
				if err != nil {
					statOnce.Do(func() { statErr = err; cancel() })
					return
				}
				if info.Kind != vfs.KindFile {
					continue // gone since the listing
				}
				select {
				case infos <- info:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	go func() { wg.Wait(); close(infos) }()
	var work []todo
	for info := range infos {
		st.Files++
		if st.Files%1024 == 0 {
			f.opts.Progress(Progress{Phase: PhaseScan, Done: st.Files})
		}
		e, ok := man[info.Path]
		delete(man, info.Path)
		if ok && e.same(info) {
			st.Unchanged++
			nm.files[info.Path] = e
			continue
		}
		work = append(work, todo{path: info.Path, info: info})
	}
	// The walker has returned once paths is closed and every worker is done.
	switch {
	case statErr != nil:
		return nil, fmt.Errorf("index: scan: %w", statErr)
	case walkErr != nil:
		return nil, fmt.Errorf("index: scan: %w", walkErr)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return work, nil
}

// parallel calls fn for each item with f.opts.Parallelism goroutines and
// returns the first error (which stops the others).
func parallel[T any](ctx context.Context, n int, items []T, fn func(context.Context, T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan T)
	var wg sync.WaitGroup
	var first error
	var once sync.Once
	for range n {
		wg.Go(func() {
			for it := range ch {
				if err := fn(ctx, it); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		})
	}
	func() {
		defer close(ch)
		for _, it := range items {
			select {
			case ch <- it:
			case <-ctx.Done():
				return
			}
		}
	}()
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// quickScan is the check of SyncAuto: it compares the tree with the
// manifest file old without walking it. Every directory old lists is
// stat'ed; only those whose time changed (or was not trusted) are listed,
// and new directories found there are walked. Files are stat'ed when
// they are new, when their directory was listed, or, in an index of at
// most Options.StatLimit files, all of them; the other files are taken to
// be unchanged. It returns the files to read, the paths gone and the new
// manifest (without the entries of the files to read).
func (f *FS) quickScan(ctx context.Context, old *manifest, st *Stats, start time.Time) (work []todo, gone []string, nm *manifest, quiet bool, err error) {
	nm = newManifest()
	var mu sync.Mutex
	var changed []string
	dirs := slices.Collect(maps.Keys(old.dirs))
	err = parallel(ctx, f.opts.Parallelism, dirs, func(ctx context.Context, d string) error {
		info, err := f.inner.Stat(ctx, d)
		if err != nil {
			return err
		}
		if info.Kind != vfs.KindDir {
			return nil // gone: its files go with it
		}
		t := dirTime(info.ModTime, start)
		mu.Lock()
		defer mu.Unlock()
		nm.dirs[d] = t
		if t == 0 || old.dirs[d] == 0 || info.ModTime.UnixNano() != old.dirs[d] {
			changed = append(changed, d)
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, false, fmt.Errorf("index: scan: %w", err)
	}
	exact := old.nfiles <= f.opts.StatLimit
	if len(changed) == 0 && len(nm.dirs) == len(old.dirs) && !exact {
		// No directory changed, none is gone: the files are those of the
		// manifest, taken to be unchanged.
		st.Files, st.Unchanged = old.nfiles, old.nfiles
		return nil, nil, nil, true, nil
	}
	// List the changed directories, and walk the new ones found there.
	listed := map[string]bool{}  // directories listed
	present := map[string]bool{} // files found in them
	for len(changed) > 0 {
		d := changed[len(changed)-1]
		changed = changed[:len(changed)-1]
		listed[d] = true
		for e, err := range f.inner.List(ctx, d) {
			if err != nil {
				if vfs.KindOf(err) == vfs.KindNotFound {
					delete(nm.dirs, d) // gone since it was stat'ed
					break
				}
				return nil, nil, nil, false, fmt.Errorf("index: scan: %w", err)
			}
			if e.SkipInWalk() {
				continue // a link to a directory or to nothing: not followed
			}
			switch e.Kind {
			case vfs.KindFile:
				present[e.Path] = true
			case vfs.KindDir:
				if f.opts.SkipDir(e.Path) {
					continue
				}
				if _, known := nm.dirs[e.Path]; known {
					continue
				}
				info, err := f.inner.Stat(ctx, e.Path)
				if err != nil {
					return nil, nil, nil, false, fmt.Errorf("index: scan: %w", err)
				}
				if info.Kind != vfs.KindDir {
					continue
				}
				nm.dirs[e.Path] = dirTime(info.ModTime, start)
				changed = append(changed, e.Path)
			}
		}
	}
	// Sort out the files of the old manifest, directory by directory: a
	// directory gone takes its files with it; the files of a directory
	// listed are those found there; those of a directory unchanged are
	// stat'ed when exact, else kept undecoded.
	damaged := fmt.Errorf("index: %s is damaged; run julyfs index build to rewrite it", manifestFile)
	var stat []string
	for d := range old.dirs {
		_, exists := nm.dirs[d]
		if exists && !listed[d] && !exact {
			raw := old.blobs[d]
			nm.blobs[d] = raw
			st.Files += raw.n
			st.Unchanged += raw.n
			continue
		}
		files, ok := old.parseDir(d)
		if !ok {
			return nil, nil, nil, false, damaged
		}
		for _, p := range files {
			switch {
			case !exists:
				gone = append(gone, p)
			case listed[d] && !present[p]:
				gone = append(gone, p)
			default:
				delete(present, p)
				stat = append(stat, p)
			}
		}
	}
	for p := range present {
		stat = append(stat, p) // new
	}
	err = parallel(ctx, f.opts.Parallelism, stat, func(ctx context.Context, p string) error {
		info, err := f.inner.Stat(ctx, p)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		e, ok := old.files[p]
		switch {
		case info.Kind != vfs.KindFile:
			if ok {
				gone = append(gone, p)
			}
		case ok && e.same(info):
			st.Files++
			st.Unchanged++
			nm.files[p] = e
		default:
			st.Files++
			work = append(work, todo{path: p, info: info})
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, false, fmt.Errorf("index: scan: %w", err)
	}
	slices.SortFunc(work, func(a, b todo) int { return strings.Compare(a.path, b.path) })
	quiet = len(work) == 0 && len(gone) == 0 && maps.Equal(old.dirs, nm.dirs)
	return work, gone, nm, quiet, nil
}

// readResult is one file read for indexing.
type readResult struct {
	doc   *document.Document
	state byte
	ent   entry
	size  int
	err   error
	path  string
}

// index reads the files of work with bounded parallelism and commits them
// in batches, adding to nm the entry of each file once its batch is
// committed.
func (f *FS) index(ctx context.Context, work []todo, nm *manifest, st *Stats) error {
	if len(work) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	total := len(work)
	f.opts.Progress(Progress{Phase: PhaseIndex, Done: 0, Total: total})
	jobs := make(chan todo)
	results := make(chan readResult, f.opts.Parallelism)
	go func() {
		defer close(jobs)
		for i, w := range work {
			select {
			case jobs <- w:
				work[i] = todo{} // let what only the reader needs go
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range f.opts.Parallelism {
		wg.Go(func() {
			for w := range jobs {
				r := f.read(ctx, w)
				select {
				case results <- r:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	go func() { wg.Wait(); close(results) }()

	// Batches are committed by several goroutines at once (one per core:
	// scorch builds a batch's segment in the committing goroutine, and
	// that, not the analysis, is what one goroutine cannot keep up with)
	// while the readers fill the next one. A path is in one batch only, so
	// the order in which batches land does not matter.
	type done struct {
		path string
		ent  entry
	}
	type pending struct {
		b     *bleveindex.Batch
		n     int
		stat  Stats
		files []done
	}
	var nmMu sync.Mutex
	committers := f.opts.Committers
	// unpersisted bounds the batches committed but not yet on disk: scorch
	// keeps their segments in memory until its persister writes them, and
	// several committers outrun one persister.
	unpersisted := make(chan struct{}, 2*committers)
	commits := make(chan pending)
	commitErr := make(chan error, committers)
	for range committers {
		go func() {
			var err error
			for p := range commits {
				if err != nil {
					continue
				}
				select {
				case unpersisted <- struct{}{}:
				case <-ctx.Done():
					err = ctx.Err()
					continue
				}
				release := sync.OnceFunc(func() { <-unpersisted })
				p.b.SetPersistedCallback(func(error) { release() })
				if err = f.idx.Batch(p.b); err != nil {
					release()
					cancel()
					continue
				}
				nmMu.Lock()
				for _, d := range p.files {
					nm.files[d.path] = d.ent
				}
				nmMu.Unlock()
			}
			commitErr <- err
		}()
	}
	cur := pending{b: bleveindex.NewBatch()}
	bytes := 0
	sent := 0
	send := func() {
		if cur.n == 0 {
			return
		}
		commits <- cur
		addStats(st, cur.stat)
		sent += cur.n
		f.opts.Progress(Progress{Phase: PhaseIndex, Done: sent, Total: total})
		cur = pending{b: bleveindex.NewBatch()}
		bytes = 0
	}
	for r := range results {
		cur.n++
		switch {
		case r.err != nil:
			cur.stat.Failed++
			if cur.stat.FirstError == nil {
				cur.stat.FirstError = r.err
			}
		case r.doc == nil: // vanished since the scan
			cur.b.Delete(r.path)
		default:
			cur.b.Update(r.doc)
			cur.files = append(cur.files, done{r.path, r.ent})
			switch r.state {
			case stateIndexed:
				cur.stat.Indexed++
				cur.stat.Bytes += int64(r.size)
				bytes += r.size
			case stateBinary:
				cur.stat.SkippedBinary++
			case stateLarge:
				cur.stat.SkippedLarge++
			}
		}
		if cur.n >= f.opts.BatchSize || bytes >= batchBytes {
			send()
		}
	}
	if ctx.Err() == nil {
		send()
	}
	close(commits)
	var cerr error
	for range committers {
		if err := <-commitErr; err != nil && cerr == nil {
			cerr = err
		}
	}
	if cerr != nil {
		return fmt.Errorf("index: %w", cerr)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if st.FirstError == nil && st.Failed > 0 {
		st.FirstError = errors.New("unknown")
	}
	return nil
}

func addStats(dst *Stats, s Stats) {
	dst.Indexed += s.Indexed
	dst.SkippedBinary += s.SkippedBinary
	dst.SkippedLarge += s.SkippedLarge
	dst.Failed += s.Failed
	dst.Bytes += s.Bytes
	if dst.FirstError == nil {
		dst.FirstError = s.FirstError
	}
}

// read reads one file of a Sync and builds its document.
func (f *FS) read(ctx context.Context, w todo) readResult {
	if w.info.Size > f.opts.MaxFileSize {
		doc, state := f.newDocument(w.path, w.info, nil)
		return readResult{doc: doc, state: state, ent: entryOf(w.info, state), path: w.path}
	}
	data, err := f.inner.Read(ctx, w.path)
	switch {
	case errors.Is(err, vfs.ErrNotFound):
		return readResult{path: w.path}
	case err != nil:
		return readResult{err: err, path: w.path}
	}
	info := w.info
	if int64(len(data)) != info.Size {
		// Changed between Stat and Read: record what was read, without
		// an mtime or etag, so the next Sync reads it again.
		info = vfs.FileInfo{Path: w.path, Kind: vfs.KindFile, Size: -1}
	}
	doc, state := f.newDocument(w.path, info, data)
	return readResult{doc: doc, state: state, ent: entryOf(info, state), size: len(data), path: w.path}
}
