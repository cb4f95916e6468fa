package main

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/plugins/sequential"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/grepscan"
)

// limits bound what one archive may make the plugin do (the mount's
// parameters; see the package doc).
type limits struct {
	maxEntries   int
	maxEntrySize int64
	maxRatio     int64 // 0: none
	maxRead      int64
}

// Defaults of the limits.
const (
	defaultMaxEntries   = 2_000_000
	defaultMaxEntrySize = 4 << 30
	defaultMaxRatio     = 200
	defaultMaxRead      = 64 << 20
	// ratioFloor: entries (and tar.gz streams) that expand to less are
	// never refused for their ratio (a small file of one repeated byte
	// is no bomb).
	ratioFloor = 1 << 20
)

var defaultLimits = limits{maxEntries: defaultMaxEntries, maxEntrySize: defaultMaxEntrySize, maxRatio: defaultMaxRatio, maxRead: defaultMaxRead}

// expansionLimit is the most a compressed stream of size bytes may
// expand to (0: no limit).
func (l limits) expansionLimit(size int64) int64 {
	if l.maxRatio <= 0 {
		return 0
	}
	return max(size*l.maxRatio, ratioFloor)
}

// archiveFS is a read-only tree of one archive, served from its index
// and the archive file, which it keeps open.
type archiveFS struct {
	f     *os.File
	name  string // the file= parameter, for messages
	ix    *index
	lim   limits
	mtime time.Time
	close func() // unmaps a cached index
	// streams keeps the inflating streams of recent ranged reads.
	streams sequential.Files
}

// openArchiveFS opens file, indexing it or taking its index from cache
// (a directory; "" keeps no index).
func openArchiveFS(file, format, cache string, lim limits) (*archiveFS, error) {
	if file == "" {
		return nil, errors.New("file= is required: the .zip, .tar or .tar.gz to serve")
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("file=%s: %v", file, unwrapPath(err))
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("file=%s: %v", file, unwrapPath(err))
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("file=%s: not a regular file", file)
	}
	if format == "" {
		head := make([]byte, 4)
		n, _ := f.ReadAt(head, 0)
		format = detect(file, head[:n])
	}
	code, ok := formatNames[format]
	if !ok {
		f.Close()
		return nil, fmt.Errorf("format=%s: want zip, tar or tar.gz", format)
	}
	a := &archiveFS{f: f, name: file, lim: lim, mtime: fi.ModTime(), close: func() {}}
	size, mtime := fi.Size(), fi.ModTime().UnixNano()
	var cached string
	if cache != "" {
		cached = cachePath(cache, file, fi)
		if data, unmap, err := mapFile(cached); err == nil {
			if ix, err := decode(data, size, mtime); err == nil && ix.format == code {
				a.ix, a.close = ix, unmap
			} else {
				unmap()
			}
		}
	}
	if a.ix == nil {
		entries, unpacked, err := build(f, size, code, lim)
		if errors.Is(err, errExpands) {
			f.Close()
			return nil, fmt.Errorf("%s expands past %d times its size: over this mount's max-ratio=%d (raise it with ?max-ratio=N, 0 for no limit)", file, lim.maxRatio, lim.maxRatio)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s is not a valid %s archive: %v", file, format, err)
		}
		data := encode(entries, code, size, mtime, unpacked)
		if a.ix, err = decode(data, size, mtime); err != nil {
			f.Close()
			return nil, err
		}
		if cached != "" {
			writeCache(cached, data) // best effort: the next command indexes again
		}
	}
	if a.ix.n > lim.maxEntries {
		a.Close()
		return nil, fmt.Errorf("%s: %v", file, errTooMany(lim.maxEntries))
	}
	if l := lim.expansionLimit(size); a.ix.format == fmtTgz && l > 0 && a.ix.unpacked > l {
		a.Close()
		return nil, fmt.Errorf("%s expands to %d bytes, over %d times its size: over this mount's max-ratio=%d (raise it with ?max-ratio=N, 0 for no limit)", file, a.ix.unpacked, lim.maxRatio, lim.maxRatio)
	}
	return a, nil
}

// cachePath names the cached index of file: a hash of its absolute path,
// device, inode, size and mtime, so a changed archive gets a new index.
func cachePath(dir, file string, fi os.FileInfo) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00%d", abs, indexVersion, fi.Size(), fi.ModTime().UnixNano())
	h.Write([]byte(fileIdentity(fi)))
	return filepath.Join(dir, hex.EncodeToString(h.Sum(nil)[:16])+".idx")
}

// writeCache writes data to path atomically (a temp file renamed into
// place).
func writeCache(path string, data []byte) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".idx-*")
	if err != nil {
		return
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
}

// Close closes the archive.
func (a *archiveFS) Close() {
	a.streams.Close()
	a.close()
	a.f.Close()
}

// corrupt is the error of a damaged cached index.
func (a *archiveFS) corrupt(p string) error {
	return vfs.NewError(vfs.KindOther, p, fmt.Errorf("%v (delete it from the cache directory, or mount with cache=off)", errCorrupt))
}

// find returns the record of clean path p; ok false when none.
func (a *archiveFS) find(p string) (record, bool, error) {
	parent, name := key(p)
	i, err := a.ix.search(parent, name)
	if err != nil {
		return record{}, false, a.corrupt(p)
	}
	if i >= a.ix.n {
		return record{}, false, nil
	}
	r, ok := a.ix.at(i)
	if !ok {
		return record{}, false, a.corrupt(p)
	}
	return r, r.path == p, nil
}

func (a *archiveFS) List(ctx context.Context, prefix string) iter.Seq2[vfs.DirEntry, error] {
	return func(yield func(vfs.DirEntry, error) bool) {
		p := vfs.Clean(prefix)
		if p != "/" {
			r, ok, err := a.find(p)
			if err != nil {
				yield(vfs.DirEntry{}, err)
				return
			}
			if !ok || r.kind != vfs.KindDir {
				return
			}
		}
		i, err := a.ix.search(p, "")
		if err != nil {
			yield(vfs.DirEntry{}, a.corrupt(p))
			return
		}
		for ; i < a.ix.n; i++ {
			if i%1024 == 0 && ctx.Err() != nil {
				yield(vfs.DirEntry{}, ctx.Err())
				return
			}
			parent, _, ok := a.ix.keyAt(i)
			if !ok {
				yield(vfs.DirEntry{}, a.corrupt(p))
				return
			}
			if string(parent) != p {
				return
			}
			r, ok := a.ix.at(i)
			if !ok {
				yield(vfs.DirEntry{}, a.corrupt(p))
				return
			}
			if !yield(vfs.DirEntry{Path: r.path, Kind: r.kind}, nil) {
				return
			}
		}
	}
}

func (a *archiveFS) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return vfs.FileInfo{}, err
	}
	if p == "/" {
		return vfs.FileInfo{Path: "/", Kind: vfs.KindDir, ModTime: a.mtime}, nil
	}
	r, ok, err := a.find(p)
	if err != nil || !ok {
		return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}, err
	}
	info := vfs.FileInfo{Path: p, Kind: r.kind, Size: r.size}
	if r.mtime != 0 {
		info.ModTime = time.Unix(0, r.mtime)
	}
	if r.kind == vfs.KindFile {
		info.ETag = strconv.FormatUint(uint64(r.crc), 16) + "-" + strconv.FormatInt(r.off, 16)
	}
	return info, nil
}

func (a *archiveFS) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	return vfs.Glob(ctx, a, pattern, dir)
}

// file returns the file entry at clean p, checked against the limits.
func (a *archiveFS) file(ctx context.Context, p string) (record, error) {
	if err := ctx.Err(); err != nil {
		return record{}, err
	}
	r, ok, err := a.find(p)
	switch {
	case err != nil:
		return record{}, err
	case !ok:
		return record{}, vfs.NotFound(p)
	case r.kind == vfs.KindDir:
		return record{}, vfs.IsDir(p)
	case r.size > a.lim.maxEntrySize:
		return record{}, vfs.NewError(vfs.KindOther, p, fmt.Errorf("the entry is %d bytes, over this mount's max-entry-size=%d (raise it with ?max-entry-size=BYTES)", r.size, a.lim.maxEntrySize))
	case a.ix.format == fmtZip && a.lim.maxRatio > 0 && r.size > ratioFloor && r.size > r.csize*a.lim.maxRatio:
		return record{}, vfs.NewError(vfs.KindOther, p, fmt.Errorf("the entry expands %d bytes to %d, over this mount's max-ratio=%d (raise it with ?max-ratio=N, 0 for no limit)", r.csize, r.size, a.lim.maxRatio))
	case a.ix.format == fmtZip && r.method == methodEncrypted:
		return record{}, vfs.NewError(vfs.KindOther, p, errors.New("the entry is encrypted"))
	case a.ix.format == fmtZip && r.method != 0 && r.method != 8:
		return record{}, vfs.NewError(vfs.KindOther, p, fmt.Errorf("the entry's compression method %d is not supported (only store and deflate)", r.method))
	}
	return r, nil
}

// open returns a stream of r's contents from its start.
func (a *archiveFS) open(r record) sequential.Opener {
	return func(ctx context.Context) (io.ReadCloser, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		switch a.ix.format {
		case fmtTar:
			return io.NopCloser(io.NewSectionReader(a.f, r.off, r.size)), nil
		case fmtTgz:
			zr, err := gzip.NewReader(bufio.NewReaderSize(io.NewSectionReader(a.f, 0, 1<<62), 256<<10))
			if err != nil {
				return nil, vfs.NewError(vfs.KindOther, r.path, err)
			}
			if _, err := io.CopyN(io.Discard, zr, r.off); err != nil {
				return nil, vfs.NewError(vfs.KindOther, r.path, err)
			}
			return io.NopCloser(io.LimitReader(zr, r.size)), nil
		}
		raw := io.NewSectionReader(a.f, r.off, r.csize)
		var rc io.ReadCloser = io.NopCloser(raw)
		if r.method == 8 {
			rc = flate.NewReader(bufio.NewReaderSize(raw, 64<<10))
		}
		return &checked{rc: rc, left: r.size, crc: crc32.NewIEEE(), want: r.crc, path: r.path}, nil
	}
}

// checked reads a zip entry's declared size, then checks that the stream
// ends there (an entry that expands past its declared size is refused)
// and that the checksum matches.
type checked struct {
	rc   io.ReadCloser
	left int64
	crc  hash.Hash32
	want uint32
	path string
}

func (c *checked) Read(p []byte) (int, error) {
	if c.left == 0 {
		var one [1]byte
		if n, _ := io.ReadFull(c.rc, one[:]); n > 0 {
			return 0, errors.New("the entry expands past its declared size")
		}
		if c.crc.Sum32() != c.want {
			return 0, errors.New("the entry's checksum does not match (a damaged archive)")
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.rc.Read(p)
	c.crc.Write(p[:n])
	c.left -= int64(n)
	if err == io.EOF && c.left > 0 {
		err = io.ErrUnexpectedEOF
	}
	if err == io.EOF {
		err = nil
	}
	return n, err
}

func (c *checked) Close() error { return c.rc.Close() }

// MaxRead is the size over which a whole Read is refused
// (plugins.ReadLimiter).
func (a *archiveFS) MaxRead() int64 { return a.lim.maxRead }

func (a *archiveFS) Read(ctx context.Context, path string) ([]byte, error) {
	p := vfs.Clean(path)
	r, err := a.file(ctx, p)
	if err != nil {
		return nil, err
	}
	if r.size > a.lim.maxRead {
		return nil, vfs.NewError(vfs.KindOther, p, fmt.Errorf("the entry is %d bytes, over this mount's max-read=%d for a whole read (read it in ranges, as julyfs cat does, or raise it with ?max-read=BYTES)", r.size, a.lim.maxRead))
	}
	rc, err := a.open(r)(ctx)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	buf := make([]byte, r.size)
	if _, err := io.ReadFull(rc, buf); err != nil {
		return nil, vfs.NewError(vfs.KindOther, p, err)
	}
	if _, err := rc.Read(nil); err != nil && err != io.EOF {
		return nil, vfs.NewError(vfs.KindOther, p, err)
	}
	return buf, nil
}

// ReadAt reads a range of an entry: at its offset in a tar, continuing
// the inflating stream of the last read when it ended where this one
// starts in a zip or tar.gz (vfs.RangeReader).
func (a *archiveFS) ReadAt(ctx context.Context, path string, buf []byte, off int64) (int, error) {
	p := vfs.Clean(path)
	if off < 0 {
		return 0, vfs.NewError(vfs.KindOther, p, errors.New("negative offset"))
	}
	r, err := a.file(ctx, p)
	if err != nil {
		return 0, err
	}
	n, err := a.streams.ReadAt(ctx, p, r.size, a.open(r), buf, off)
	if err != nil && err != io.EOF {
		err = vfs.NewError(vfs.KindOther, p, err)
	}
	return n, err
}

// OpenFile opens an entry for ranged reads (vfs.FileOpener).
func (a *archiveFS) OpenFile(ctx context.Context, path string) (vfs.FileReader, error) {
	p := vfs.Clean(path)
	r, err := a.file(ctx, p)
	if err != nil {
		return nil, err
	}
	return a.streams.Open(ctx, p, r.size, a.open(r)), nil
}

// Grep streams each entry through the grep engine; it passes over
// entries the limits refuse.
func (a *archiveFS) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	file := func(p string) grepscan.File {
		return grepscan.File{Path: p, Open: func(ctx context.Context) (io.ReadCloser, int64, error) {
			r, err := a.file(ctx, p)
			if err != nil {
				if ctx.Err() == nil && vfs.KindOf(err) != vfs.KindNotFound {
					// Passed over, as a binary file is, but said.
					plugins.Logger().Warn("grep passes over a file", "path", p, "reason", err.Error())
				}
				if ctx.Err() == nil {
					err = fmt.Errorf("%w: %v", grepscan.SkipFile, err)
				}
				return nil, 0, err
			}
			rc, err := a.open(r)(ctx)
			return rc, r.size, err
		}}
	}
	return vfs.GrepTree(ctx, q, vfs.GrepSource{
		Stat: a.Stat,
		File: file,
		Dir:  vfs.WalkGrepFiles(a.List, file),
	})
}

func (a *archiveFS) Write(_ context.Context, path string, _ []byte) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

func (a *archiveFS) Delete(_ context.Context, path string) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

func (a *archiveFS) Search(context.Context, vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return vfs.Empty[vfs.SearchResult]()
}

var (
	_ vfs.FileSystem  = (*archiveFS)(nil)
	_ vfs.RangeReader = (*archiveFS)(nil)
	_ vfs.FileOpener  = (*archiveFS)(nil)
)
