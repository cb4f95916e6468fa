package fusemount

import (
	"context"
	"errors"
	"io"
	"strconv"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/julyfs/julyfs/vfs"
)

// handle is an open file. A handle opened for reading on a small file keeps
// a whole copy read at open (data); a larger file is read range by range.
// Writes go to the node's shared buffer.
type handle struct {
	n      *node
	write  bool
	append bool

	data    []byte // whole-file copy, when hasData
	hasData bool
	gen     uint64 // n.changes when data was read
}

var (
	_ fs.FileReader   = (*handle)(nil)
	_ fs.FileWriter   = (*handle)(nil)
	_ fs.FileFlusher  = (*handle)(nil)
	_ fs.FileFsyncer  = (*handle)(nil)
	_ fs.FileReleaser = (*handle)(nil)
)

// version identifies the contents of the tree's file described by fi.
func version(fi vfs.FileInfo) string {
	return fi.ETag + "/" + strconv.FormatInt(fi.Size, 10) + "/" + strconv.FormatInt(fi.ModTime.UnixNano(), 10)
}

// Open opens file n.
func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if n.IsDir() {
		return nil, 0, syscall.EISDIR
	}
	h, errno := n.open(flags, false)
	if errno != 0 {
		return nil, 0, errno
	}
	var fuseFlags uint32
	if h.keepCache {
		fuseFlags |= fuse.FOPEN_KEEP_CACHE
	}
	return h.handle, fuseFlags, 0
}

type opened struct {
	*handle
	keepCache bool
}

// open makes a handle on file n for flags; created says n was just created
// empty by this mount.
func (n *node) open(flags uint32, created bool) (opened, syscall.Errno) {
	m := n.m
	write := flags&syscall.O_ACCMODE != syscall.O_RDONLY
	trunc := flags&syscall.O_TRUNC != 0
	if m.opts.ReadOnly && (write || trunc) {
		return opened{}, syscall.EROFS
	}
	h := &handle{n: n, write: write, append: flags&syscall.O_APPEND != 0}
	p := n.path()

	n.mu.Lock()
	loaded := n.loaded
	n.mu.Unlock()
	var fi vfs.FileInfo
	if !loaded && !created {
		var err error
		fi, err = m.stat(p)
		if err != nil {
			return opened{}, m.errno("open", p, err)
		}
		switch fi.Kind {
		case vfs.KindMissing:
			return opened{}, syscall.ENOENT
		case vfs.KindDir:
			return opened{}, syscall.EISDIR
		}
	}

	n.mu.Lock()
	defer n.mu.Unlock()
	n.opens++
	switch {
	case created || trunc:
		n.buf, n.loaded = n.buf[:0], true
		n.mtime = time.Now()
		if trunc && !created {
			n.touch()
		}
	}
	keep := false
	if !n.loaded {
		v := version(fi)
		keep = v == n.version
		n.version = v
		if limit := m.opts.wholeFileLimit(); !write && limit >= 0 && fi.Size <= limit {
			gen := n.changes.Load()
			data, err := m.fsys.Read(m.ctx, p)
			if err != nil {
				n.opens--
				return opened{}, m.errno("open", p, err)
			}
			h.data, h.hasData, h.gen = data, true, gen
		}
	} else {
		// The kernel's cache may hold pages of an older version.
		n.version = ""
	}
	return opened{handle: h, keepCache: keep}, 0
}

// load makes n.buf hold the whole file, reading it from the tree when it
// is not there yet. A file deleted behind the mount reads as empty and is
// written back on commit. Callers hold n.mu.
func (n *node) load() syscall.Errno {
	if n.loaded {
		return 0
	}
	p := n.path()
	data, err := n.m.fsys.Read(n.m.ctx, p)
	if err != nil && vfs.KindOf(err) != vfs.KindNotFound {
		return n.m.errno("read", p, err)
	}
	n.buf, n.loaded = data, true
	n.mtime = time.Now()
	return 0
}

// Read reads from the node's buffer while the file is being written, else
// from the handle's whole copy, else by range from the tree.
func (h *handle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n := h.n
	n.mu.Lock()
	if n.loaded {
		defer n.mu.Unlock()
		if off >= int64(len(n.buf)) {
			return fuse.ReadResultData(nil), 0
		}
		k := copy(dest, n.buf[off:])
		return fuse.ReadResultData(dest[:k]), 0
	}
	n.mu.Unlock()
	if h.hasData && h.gen == n.changes.Load() {
		if off >= int64(len(h.data)) {
			return fuse.ReadResultData(nil), 0
		}
		end := min(off+int64(len(dest)), int64(len(h.data)))
		return fuse.ReadResultData(h.data[off:end]), 0
	}
	p := n.path()
	k, err := vfs.ReadAt(n.m.ctx, n.m.fsys, p, dest, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, n.m.errno("read", p, err)
	}
	return fuse.ReadResultData(dest[:k]), 0
}

// Write writes into the node's buffer, loading the file first if needed.
// With O_APPEND the data goes at the end whatever the offset.
func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	n := h.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if errno := n.load(); errno != 0 {
		return 0, errno
	}
	if h.append {
		off = int64(len(n.buf))
	}
	end := off + int64(len(data))
	if end > n.m.opts.maxFileSize() {
		return 0, syscall.EFBIG
	}
	if end > int64(len(n.buf)) {
		n.resize(end)
	}
	copy(n.buf[off:], data)
	n.touch()
	return uint32(len(data)), 0
}

// resize sets the length of n.buf, zero-filling growth. Callers hold n.mu.
func (n *node) resize(size int64) {
	if size <= int64(len(n.buf)) {
		n.buf = n.buf[:size]
		return
	}
	if size <= int64(cap(n.buf)) {
		old := len(n.buf)
		n.buf = n.buf[:size]
		clear(n.buf[old:])
		return
	}
	grown := make([]byte, size, max(size, 2*int64(cap(n.buf))))
	copy(grown, n.buf)
	n.buf = grown
}

// touch marks n's buffer changed. Callers hold n.mu.
func (n *node) touch() {
	n.mtime = time.Now()
	if !n.dirty && !n.deleted {
		n.dirty = true
		n.m.setDirty(n, true)
		// New contents: an mtime set by utimes no longer describes
		// them (one set after this write, as cp -p does, stays).
		n.m.setMeta(n.path(), func(md *meta) { md.mtime = time.Time{} })
	}
}

// truncate sets the file's size; commitNow commits at once (truncate(2) on
// a path), else the next flush does (ftruncate(2) on a handle).
func (n *node) truncate(size int64, commitNow bool) syscall.Errno {
	if size > n.m.opts.maxFileSize() {
		return syscall.EFBIG
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if size == 0 {
		n.buf, n.loaded = n.buf[:0], true
	} else if errno := n.load(); errno != 0 {
		return errno
	}
	n.resize(size)
	n.touch()
	if !commitNow {
		return 0
	}
	errno := n.commitLocked()
	if n.opens == 0 && !n.dirty {
		n.buf, n.loaded = nil, false
	}
	return errno
}

// commit writes n's buffer through the tree's Write if it has uncommitted
// writes. It returns only once the tree took the data.
func (n *node) commit() syscall.Errno {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.commitLocked()
}

func (n *node) commitLocked() syscall.Errno {
	if !n.dirty || n.deleted {
		return 0
	}
	p := n.path()
	if err := n.m.write(p, n.buf); err != nil {
		return n.m.errno("write", p, err)
	}
	n.dirty = false
	n.m.setDirty(n, false)
	return 0
}

// Flush commits on every close(2) of a descriptor.
func (h *handle) Flush(ctx context.Context) syscall.Errno { return h.n.commit() }

// Fsync commits; it succeeds only once the tree has the data.
func (h *handle) Fsync(ctx context.Context, flags uint32) syscall.Errno { return h.n.commit() }

// Release commits what is left and, with the last handle gone, drops the
// node's buffer. The kernel ignores release errors: a commit the tree
// refused for good (read-only, no space) is logged and dropped, one that
// failed with EIO is kept for a later commit (at unmount).
func (h *handle) Release(ctx context.Context) syscall.Errno {
	n := h.n
	n.mu.Lock()
	defer n.mu.Unlock()
	errno := n.commitLocked()
	if errno != 0 && errno != syscall.EIO {
		// The tree refused the data (read-only, no mount, full): the
		// close already reported it; retrying cannot help.
		n.m.log.Printf("release %s: dropping uncommitted writes: %v", n.path(), errno)
		n.dirty = false
		n.m.setDirty(n, false)
	}
	n.opens--
	if n.opens == 0 && !n.dirty {
		n.buf, n.loaded = nil, false
	}
	return errno
}

// Getattr answers fstat on the handle's node.
func (h *handle) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return h.n.Getattr(ctx, h, out)
}

var _ fs.FileGetattrer = (*handle)(nil)

// fallocate(2) modes (linux/falloc.h).
const (
	fallocKeepSize  = 0x01
	fallocPunchHole = 0x02
	fallocZeroRange = 0x10
)

// Allocate answers fallocate. Files have no holes and no preallocation, so
// reserving space is growing the file (or nothing, with KEEP_SIZE), and
// punching a hole or zeroing a range writes zeros.
func (h *handle) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	if mode&^(fallocKeepSize|fallocPunchHole|fallocZeroRange) != 0 {
		return syscall.EOPNOTSUPP
	}
	end := int64(off + size)
	if end < 0 || end > h.n.m.opts.maxFileSize() && mode&fallocKeepSize == 0 {
		return syscall.EFBIG
	}
	n := h.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if errno := n.load(); errno != 0 {
		return errno
	}
	cur := int64(len(n.buf))
	if mode&fallocKeepSize == 0 && end > cur {
		n.resize(end)
		n.touch()
	}
	if mode&(fallocPunchHole|fallocZeroRange) != 0 && int64(off) < int64(len(n.buf)) {
		clear(n.buf[off:min(end, int64(len(n.buf)))])
		n.touch()
	}
	return 0
}

var _ fs.FileAllocater = (*handle)(nil)
