package grepscan

import (
	"context"
	"errors"
	"io"
	"iter"
	"runtime"
	"sync"
)

// Limits bound a scan without changing what matches: at most
// MaxResults hits (0: no limit), each hit's line cut to MaxLineBytes (0:
// whole lines), as in vfs.GrepQuery.
type Limits struct {
	MaxResults   int
	MaxLineBytes int
}

// Hit is one matching line, as vfs.GrepResult (the two convert).
type Hit struct {
	Path       string
	LineNumber int    // 1-based
	Line       string // without the line terminator
	// LineBytes is the length in bytes of the whole line when Line was
	// cut to Limits.MaxLineBytes; 0 when Line is the whole line.
	LineBytes int
}

// SkipFile is returned (or wrapped) by a [File]'s Load or Open to have
// the file skipped rather than end the stream: a file that vanished
// between the walk and the read, turned into a directory, or that this
// process may not read. It is the only error Scan passes over.
var SkipFile = errors.New("grepscan: skip this file")

// ReadError is a read that failed part-way through a file Scan opened
// (File.Open): it ends the stream.
type ReadError struct {
	Path string
	Err  error
}

func (e *ReadError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// File is one file for [Scan]: its path and how to load it.
type File struct {
	Path string
	// Load returns the file's contents. buf points to a scratch buffer
	// owned by the calling worker (nil after the stream has stopped): Load
	// may read into it, storing the grown buffer back in *buf, and return
	// a slice of it, used only until that worker's next Load. Or it may
	// return memory it keeps, which Scan never modifies. Scan
	// calls Load exactly once for every file it takes from its source,
	// even after the stream has stopped (then with a cancelled context),
	// so a source may release per-file resources in Load.
	Load func(ctx context.Context, buf *[]byte) ([]byte, error)
	// Open, when set, is called instead of Load: it opens the file for
	// reading and returns its size (-1 when unknown). Scan reads it
	// in pieces of at most grepChunk bytes (whole lines), so a large file
	// needs no buffer of its size, and closes it. A line longer than a
	// piece grows the buffer to hold it, unless the scan cuts lines
	// (Limits.MaxLineBytes): then the line is matched a window at a
	// time, and only its head is kept. The same rules hold as
	// for Load: it is called exactly once for every file taken from the
	// source, after the stream has stopped with a cancelled context (it
	// must then release what it holds and fail).
	Open func(ctx context.Context) (r io.ReadCloser, size int64, err error)
}

// release lets go of a file the stream will not scan.
func (f File) release(dead context.Context) {
	if f.Open != nil {
		if r, _, err := f.Open(dead); err == nil {
			r.Close()
		}
		return
	}
	f.Load(dead, nil)
}

// Scan scans files (in path order) with m, loading up to GOMAXPROCS of
// them at once with a reused buffer per worker, and yields hits in path
// then line order, at most lim.MaxResults of them (0: no limit), each
// line cut to lim.MaxLineBytes (0: whole lines). A file holding a NUL
// byte is binary and skipped. A load that fails with [SkipFile] skips the
// file; any other failure ends the stream with that error (a failed read
// of an opened file as a [*ReadError]). Memory is bounded by the files in flight (a few hundred
// files' hits, and one buffer per worker), not by the number of files; a
// loaded file is held whole while it is scanned, an opened one a piece of
// whole lines at a time, or, when lines are cut, a window of
// grepChunk bytes of a longer line (see [File]). Breaking out of the
// stream stops the walk and every worker before Scan returns.
//
// The workers take files in batches straight from the source, one worker
// at a time, and queue each batch for the consumer as they take it, so
// the walk runs on whichever worker needs files (no walker goroutine to
// wait for). Batches start at one file and grow to grepBatchMax as the
// walk goes on, so a small tree is still spread over every worker and a
// large one costs a few channel operations per batch, not per file.
func Scan(ctx context.Context, m *Matcher, files iter.Seq2[File, error], lim Limits) iter.Seq2[Hit, error] {
	max := lim.MaxResults
	return func(yield func(Hit, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		// dead is the cancelled context files are released with once a
		// batch has stopped early.
		dead, kill := context.WithCancel(ctx)
		kill()
		workers := runtime.GOMAXPROCS(0)
		jobs := make(chan *grepBatch, workers*grepWindow) // in path order, for the consumer
		next, stop := iter.Pull2(files)
		var (
			mu      sync.Mutex // serializes next, and the order batches enter jobs
			ended   bool       // no more batches: the source ended or failed, or the stream stopped
			walkErr error
			taken   int
		)
		// take gathers the next batch and queues it for the consumer; nil
		// when there is none.
		take := func() *grepBatch {
			mu.Lock()
			defer mu.Unlock()
			if ended || ctx.Err() != nil {
				ended = true
				return nil
			}
			b := newGrepBatch()
			for size := min(grepBatchMax, 1+taken/workers); len(b.files) < size; {
				f, err, ok := next()
				if !ok {
					ended = true
					break
				}
				if err != nil {
					walkErr, ended = err, true
					break
				}
				b.files = append(b.files, f)
			}
			if len(b.files) == 0 {
				return nil
			}
			taken++
			select {
			case jobs <- b:
				return b
			case <-ctx.Done():
				for _, f := range b.files {
					f.release(dead) // the stream has stopped
				}
				ended = true
				return nil
			}
		}
		var wg sync.WaitGroup
		// Registered first so it runs last: stop everything, wait, then
		// end the walk.
		defer stop()
		defer wg.Wait()
		defer cancel()
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w := grepWorker{maxLine: lim.MaxLineBytes}
				for b := take(); b != nil; b = take() {
					b.run(ctx, dead, m, &w, max)
				}
			}()
		}
		go func() {
			wg.Wait()
			close(jobs)
		}()
		n := 0
		for b := range jobs {
			<-b.done
			for _, h := range b.hits {
				if !yield(h, nil) {
					return
				}
				if n++; max > 0 && n >= max {
					return
				}
			}
			if b.err != nil {
				yield(Hit{}, b.err)
				return
			}
		}
		if walkErr != nil {
			yield(Hit{}, walkErr)
			return
		}
		if err := ctx.Err(); err != nil {
			yield(Hit{}, err)
		}
	}
}

const (
	// grepBatchMax is the most files a batch takes.
	grepBatchMax = 16
	// grepWindow is how many batches per worker may wait for the consumer:
	// how far the workers may run ahead of a slow file.
	grepWindow = 8
)

// A grepBatch is a run of consecutive files one worker loads and scans.
type grepBatch struct {
	files []File
	done  chan struct{} // closed when hits and err are set
	hits  []Hit         // in path then line order
	err   error         // the error that ends the stream after hits
}

func newGrepBatch() *grepBatch {
	return &grepBatch{files: make([]File, 0, grepBatchMax), done: make(chan struct{})}
}

// run loads and scans b's files with the worker's buffer buf, which it
// returns for the next batch. After an error, or once max hits are in,
// the remaining files are released with the cancelled context dead.
func (b *grepBatch) run(ctx, dead context.Context, m *Matcher, w *grepWorker, max int) {
	defer close(b.done)
	for i, f := range b.files {
		if b.err != nil || (max > 0 && len(b.hits) >= max) {
			for _, f := range b.files[i:] {
				f.release(dead)
			}
			break
		}
		b.hits, b.err = w.grepOne(ctx, m, f, max, b.hits)
	}
	b.files = nil
}

// loadErr decides what a file's failed load (or open) means for the
// stream: the context's error once it is done, nil for a file its source
// asked to skip ([SkipFile]), else err.
func loadErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if errors.Is(err, SkipFile) {
		return nil
	}
	return err
}
