// Package sequential serves ranged reads (vfs.RangeReader,
// vfs.FileOpener) of files that can only be read from their start: a
// compressed archive entry, a git blob. [Files] keeps the most recent
// streams open at the offset where their last read ended, so reading a
// file front to back (cat, a FUSE read, a streamed grep) inflates it once,
// holding one buffer, never the whole file. A read before a kept stream's
// offset opens the file again and skips to it.
//
// # Concurrency
//
// Files is safe for concurrent use; a stream serves one read at a time
// (two readers of one file at different offsets get two streams).
//
// # Errors
//
// The opener's errors, and the stream's, are returned as they are. A
// stream that ends before the size the caller gave fails with
// io.ErrUnexpectedEOF.
package sequential

import (
	"context"
	"io"
	"sync"
)

// Opener opens the file's contents from their start.
type Opener func(ctx context.Context) (io.ReadCloser, error)

// Files keeps up to Max streams positioned for the next read.
type Files struct {
	// Max is how many streams are kept (0: 8).
	Max int

	mu   sync.Mutex
	kept []*cursor // least recently used first
}

type cursor struct {
	key string
	rc  io.ReadCloser
	pos int64
}

// skipPiece is how much a skip discards between two checks of the context.
const skipPiece = 1 << 20

// ReadAt reads len(p) bytes at off of the file key, size bytes long, with
// io.ReaderAt's rules (io.EOF at the end). open opens the file when no
// kept stream of key stands at or before off.
func (f *Files) ReadAt(ctx context.Context, key string, size int64, open Opener, p []byte, off int64) (int, error) {
	if off >= size {
		return 0, io.EOF
	}
	want := p
	if rest := size - off; int64(len(want)) > rest {
		want = want[:rest]
	}
	c, err := f.take(ctx, key, off, open)
	if err != nil {
		return 0, err
	}
	for c.pos < off {
		if err := ctx.Err(); err != nil {
			c.rc.Close()
			return 0, err
		}
		n, err := io.CopyN(io.Discard, c.rc, min(off-c.pos, skipPiece))
		c.pos += n
		if err != nil {
			c.rc.Close()
			return 0, unexpected(err)
		}
	}
	n, err := io.ReadFull(c.rc, want)
	c.pos += int64(n)
	if err != nil {
		c.rc.Close()
		return n, unexpected(err)
	}
	if c.pos < size {
		f.put(c)
	} else {
		c.rc.Close()
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// take removes and returns the kept stream of key that stands furthest
// but not past off, or opens a new one.
func (f *Files) take(ctx context.Context, key string, off int64, open Opener) (*cursor, error) {
	f.mu.Lock()
	best := -1
	for i, c := range f.kept {
		if c.key == key && c.pos <= off && (best < 0 || c.pos > f.kept[best].pos) {
			best = i
		}
	}
	if best >= 0 {
		c := f.kept[best]
		f.kept = append(f.kept[:best], f.kept[best+1:]...)
		f.mu.Unlock()
		return c, nil
	}
	f.mu.Unlock()
	rc, err := open(ctx)
	if err != nil {
		return nil, err
	}
	return &cursor{key: key, rc: rc}, nil
}

func (f *Files) put(c *cursor) {
	max := f.Max
	if max <= 0 {
		max = 8
	}
	f.mu.Lock()
	f.kept = append(f.kept, c)
	var drop []*cursor
	for len(f.kept) > max {
		drop = append(drop, f.kept[0])
		f.kept = f.kept[1:]
	}
	f.mu.Unlock()
	for _, c := range drop {
		c.rc.Close()
	}
}

// Close closes every kept stream.
func (f *Files) Close() {
	f.mu.Lock()
	kept := f.kept
	f.kept = nil
	f.mu.Unlock()
	for _, c := range kept {
		c.rc.Close()
	}
}

// Reader is a vfs.FileReader over one file of f.
type Reader struct {
	f    *Files
	ctx  context.Context
	key  string
	size int64
	open Opener
}

// Open returns a reader of the file key (size bytes), for vfs.FileOpener.
// Its reads use ctx.
func (f *Files) Open(ctx context.Context, key string, size int64, open Opener) *Reader {
	return &Reader{f: f, ctx: context.WithoutCancel(ctx), key: key, size: size, open: open}
}

// ReadAt reads at off.
func (r *Reader) ReadAt(p []byte, off int64) (int, error) {
	return r.f.ReadAt(r.ctx, r.key, r.size, r.open, p, off)
}

// Size is the file's size.
func (r *Reader) Size() int64 { return r.size }

// Close does nothing: the streams are f's.
func (r *Reader) Close() error { return nil }
