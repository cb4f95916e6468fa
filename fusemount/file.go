package fusemount

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/julyfs/julyfs/third_party/go-fuse/fs"
	"github.com/julyfs/julyfs/third_party/go-fuse/fuse"
	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
)

// handle is an open file. A handle opened for reading on a small file keeps
// a whole copy read at open (data); a larger one reads through a reader
// opened once (vfs.OpenFile) and reopened when the file changes. While the
// node has a staging (the file is being written), every handle reads and
// writes that.
type handle struct {
	n      *node
	write  bool
	append bool

	// wrote says the handle changed the node's current staging; err is
	// the error that staging ended with when it was discarded (a failed
	// write, a lost compare-and-swap) before this handle's flush could
	// report it. Both are guarded by n.mu.
	wrote bool
	err   syscall.Errno

	data    []byte // whole-file copy, when hasData
	hasData bool
	gen     uint64 // n.changes when data was read

	mu   sync.RWMutex   // guards r and rgen; held for reading during a read through r
	r    vfs.FileReader // opened at the first read by range, nil before
	rgen uint64         // n.changes when r was opened

	pt bool // the handle passes through (ptHandle): the kernel does its I/O
}

var (
	_ fs.FileReader   = (*handle)(nil)
	_ fs.FileWriter   = (*handle)(nil)
	_ fs.FileFlusher  = (*handle)(nil)
	_ fs.FileFsyncer  = (*handle)(nil)
	_ fs.FileReleaser = (*handle)(nil)
)

// fileVersion identifies the contents of a tree's file: its etag, size and
// mtime. The zero value is no version: it matches no file.
type fileVersion struct {
	etag  string
	size  int64
	mtime int64
	known bool
}

// version is the version of the tree's file described by fi (compared at
// every open, so made without an allocation).
func version(fi vfs.FileInfo) fileVersion {
	return fileVersion{etag: fi.ETag, size: fi.Size, mtime: fi.ModTime.UnixNano(), known: true}
}

// Open opens file n. On a read-only mount it answers ENOSYS instead: the
// kernel then stops sending OPEN and RELEASE for the whole mount (no-open),
// keeps file pages across opens, and reads come without a handle (Read of
// the node, by path).
func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if n.IsDir() {
		return nil, 0, syscall.EISDIR
	}
	if n.m.opts.ReadOnly && flags&syscall.O_ACCMODE == syscall.O_RDONLY && flags&syscall.O_TRUNC == 0 {
		return nil, 0, syscall.ENOSYS
	}
	ngen := n.m.namesGen.Load()
	h, errno := n.open(flags, "", callerPid(ctx))
	if errno == syscall.ENOENT {
		// Nothing at n's path: a rename through the mount may be
		// moving n. Once it is done, again at n's new path (the path
		// is taken only now: a rename between the try and here
		// shows in namesGen).
		p, _ := n.livePath()
		n.followRenames(p, ngen, func(string) bool {
			h, errno = n.open(flags, "", callerPid(ctx))
			return errno == syscall.ENOENT
		})
	}
	if errno != 0 {
		return nil, 0, errno
	}
	n.killAsked(ctx) // O_TRUNC by an unprivileged caller
	var fuseFlags uint32
	if h.keepCache {
		fuseFlags |= fuse.FOPEN_KEEP_CACHE
	}
	if !h.write && !h.wrote {
		// A reader has nothing to commit (its Flush is a no-op: only
		// a writer's close publishes a staging), so the kernel need not
		// send FLUSH at each close (FOPEN_NOFLUSH, Linux 5.16+; older
		// kernels ignore it). An open with O_TRUNC wrote (it emptied
		// the staging) and keeps its flush.
		fuseFlags |= fuse.FOPEN_NOFLUSH
	}
	return h.fuseHandle(), fuseFlags, 0
}

// openStatHook, when set (by tests), is called by open between its stat
// of the file and its hold of the node's lock.
var openStatHook atomic.Pointer[func(p string)]

type opened struct {
	*handle
	keepCache bool
	ptFd      int // the descriptor the handle passes through to, when h.pt
}

// fuseHandle is the handle to give go-fuse: one that passes through
// (fs.FilePassthroughFder) or not.
func (o opened) fuseHandle() fs.FileHandle {
	if o.pt {
		return &ptHandle{handle: o.handle, fd: o.ptFd}
	}
	return o.handle
}

// open makes a handle on file n for flags; created, when not "", is the
// path at which n was just created empty by this mount. pid is the
// caller's (see ptStale).
func (n *node) open(flags uint32, created string, pid uint32) (opened, syscall.Errno) {
	m := n.m
	write := flags&syscall.O_ACCMODE != syscall.O_RDONLY
	trunc := flags&syscall.O_TRUNC != 0
	if m.opts.ReadOnly && (write || trunc) {
		return opened{}, syscall.EROFS
	}
	h := &handle{n: n, write: write, append: flags&syscall.O_APPEND != 0}
	// A node just created is not in go-fuse's tree until Create
	// returns: it has no path yet, and needs none to open empty.
	over := n.renamedOver.Load() // before the path is taken
	p, stale := n.livePath()
	n.mu.Lock()
	staged, deleted := n.stage != nil, n.deleted
	n.mu.Unlock()
	if created != "" {
		p = created
	} else if stale != 0 || deleted {
		// The name the kernel looked up was replaced (a rename over it)
		// or removed between its lookup and this open: ESTALE makes the
		// kernel look the name up again and open what is there now.
		return opened{}, syscall.ESTALE
	}
	var fi vfs.FileInfo
	if !staged && created == "" {
		var err error
		var ok bool
		if fi, ok = n.recent(); !ok {
			fi, err = m.stat(p)
		}
		if err != nil {
			return opened{}, m.errno("open", p, err)
		}
		if hook := openStatHook.Load(); hook != nil {
			(*hook)(p)
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
	pt, errno := n.ptChoose(write || trunc, p, pid)
	if errno != 0 {
		return opened{}, errno
	}
	if created == "" && (n.deleted || n.renamedOver.Load() != over) {
		// Renamed over since the check above (renameVictim): the
		// name may hold another file, which must not be read as n's.
		return opened{}, syscall.ESTALE
	}
	keep := false
	ptFd, ptNew := 0, false // the backing set up for a first reader
	switch {
	case trunc && n.ptMode == ptInPlace:
		// Written in place by another handle: truncated in place.
		fd, _ := n.ptInPlaceFd()
		if err := unix.Ftruncate(fd, 0); err != nil {
			return opened{}, m.errno("truncate", p, err)
		}
		n.version = fileVersion{}
	case trunc && created == "":
		if errno := n.stageEmpty(); errno != 0 {
			return opened{}, errno
		}
		n.touch()
		h.wrote = true
		n.version = fileVersion{} // the kernel's cache may hold pages of an older version
	case created != "" || n.stage != nil || n.ptMode == ptInPlace:
		// (Written in place: its handles read the host file.)
		n.version = fileVersion{}
	default:
		v := version(fi)
		keep = v == n.version
		n.version = v
		if pt == -1 && !write {
			// A first reader passes through to the host file, unless
			// the kernel keeps this version's pages (a cached open
			// serves them with no read at all), the file is small
			// enough to be read whole (the next open of this
			// version is then served from the kernel's pages: no
			// read, and no atime refresh, which a passthrough read
			// costs the next fstat) or the tree gives no descriptor:
			// then it reads as without passthrough.
			pt = ptNone
			if limit := m.opts.wholeFileLimit(); !keep && (limit < 0 || fi.Size > limit) {
				if fd, ok := n.ptSetup(false, p, false, fi); ok {
					pt, ptFd, ptNew = ptRead, fd, true
				}
			}
		}
		// A small file is read whole now, unless the kernel keeps its
		// pages of this very version: then it will hardly ask, and the
		// rare read goes through a reader opened on demand.
		if limit := m.opts.wholeFileLimit(); !write && !keep && pt == ptNone && limit >= 0 && fi.Size <= limit {
			gen := n.changes.Load()
			data, err := m.fsys.Read(m.ctx, p)
			if err != nil {
				n.version = fileVersion{} // no page of v reached the kernel
				return opened{}, m.errno("open", p, err)
			}
			h.data, h.hasData, h.gen = data, true, gen
		}
	}
	o := opened{handle: h, keepCache: keep}
	switch {
	case ptNew:
		o.ptFd, h.pt = ptFd, true
	case pt == -1 && (write || trunc): // the node's first handle: a staging
		o.ptFd, h.pt = n.ptFirst(p, created, fi.Size)
	case pt == -1: // a reader of a staged file: the daemon serves it
	case pt == ptNone && write && !trunc && created == "":
		// Without passthrough, a writer of a file that holds no data
		// (fio's layout) writes it in place through the daemon, as a
		// file the mount creates: no copy into a staging.
		if _, ok := n.ptDatalessSetup(p, false); ok {
			o.keepCache, n.version = false, fileVersion{}
		}
	case pt == ptRead:
		fd, _ := vfs.Fd(n.ptFile)
		o.ptFd, h.pt = int(fd), true
	case pt == ptStage:
		fd, _ := vfs.Fd(n.ptStage)
		o.ptFd, h.pt = int(fd), true
	case pt == ptInPlace:
		o.ptFd, h.pt = n.ptInPlaceFd()
	}
	if h.pt {
		n.ptOpen++
		n.ptLive++
		o.keepCache = false
		// The kernel's page cache of the node gets no pages from a
		// passthrough handle: a later cached open must not count on it.
		n.version = fileVersion{}
		if n.cached == 0 {
			// Replied without FOPEN_KEEP_CACHE, and no handle in
			// cached mode maps or fills a page: the kernel drops
			// the inode's pages at this open.
			n.kpages = false
		}
	} else {
		if !o.keepCache && h.hasData && !n.kpages && n.toldVersion(fi) {
			o.keepCache = n.storePages(p, h.data)
		}
		n.kpages = true
		n.cached++
	}
	n.opens++
	if write {
		n.writers++
	}
	if n.handles == nil {
		n.handles = map[*handle]bool{}
	}
	n.handles[h] = true
	return o, 0
}

// storePages puts data, the whole file n opens at p, in the kernel's page
// cache of n before the open is answered (FUSE_NOTIFY_STORE), and reports
// whether it did: the open is then answered with FOPEN_KEEP_CACHE, and
// the reader reads the file with no READ request, where it would
// otherwise wait for one round trip per read. Open stores only where the
// kernel holds no page of n (n.kpages false: no page of another version
// survives beside data, an open without FOPEN_KEEP_CACHE having dropped
// them all) and was last told the size and time of the version data is
// (toldVersion: the kernel drops a file's pages when an answer brings it
// another time or size, AUTO_INVAL_DATA, as the first GETATTR after a
// write through the mount would). Callers hold n.mu.
func (n *node) storePages(p string, data []byte) bool {
	if len(data) == 0 {
		return true
	}
	errno := n.WriteCache(0, data)
	if errno != 0 {
		n.m.debugf("open %s: storing %d bytes in the kernel's cache: %v", p, len(data), errno)
		return false
	}
	return true
}

// toldVersion reports whether the attributes the kernel was last given
// for n (n.last) have the size and modification time of fi. Callers hold
// n.mu.
func (n *node) toldVersion(fi vfs.FileInfo) bool {
	mt := n.m.mtime(fi)
	return n.last.Size == uint64(fi.Size) && int64(n.last.Mtime) == mt.Unix() && int64(n.last.Mtimensec) == int64(mt.Nanosecond())
}

// ptFirst sets up the passthrough backing of n's first handle, a writer
// (see passthrough.go): the staging, made now (empty for a file just
// created at created, else a copy of the file of size size) unless the
// open made one already. It returns the descriptor, and false when the
// handle does not pass through. Callers hold n.mu.
func (n *node) ptFirst(p, created string, size int64) (int, bool) {
	if created == "" {
		// A file that holds no data first: written in place with
		// its writes checked and reported, with or without the
		// opt-in of Options.WriteInPlace, which writes any file in
		// place unchecked.
		if fd, ok := n.ptDatalessSetup(p, true); ok {
			return fd, true
		}
		if fd, ok := n.ptInPlaceSetup(p); ok {
			return fd, true
		}
	}
	fresh := false
	if n.stage == nil {
		if _, ok := n.m.fsys.(vfs.Stager); !ok || n.ptNoFd(true) || (created == "" && size > ptMaxCopy) {
			return 0, false
		}
		var errno syscall.Errno
		if created != "" {
			errno = n.stageEmptyAt(created)
		} else {
			errno = n.load()
		}
		if errno != 0 {
			return 0, false // the first write stages again and reports it
		}
		fresh = true
	}
	fd, ok := n.ptSetup(true, p, created != "", vfs.FileInfo{})
	if !ok && fresh && !n.dirty {
		n.dropStage()
	}
	if ok && fresh && created == "" {
		n.ptMarkUnwritten(fd)
	}
	return fd, ok
}

// load makes n.stage hold the file, staged from the tree's current file (a
// file deleted behind the mount stages empty and is written back on
// commit). Callers hold n.mu.
func (n *node) load() syscall.Errno {
	if n.stage != nil {
		return 0
	}
	if n.deleted {
		// The file's name is gone: its later writes go to a private,
		// empty buffer that is never committed.
		n.stage, n.base = &privateStage{}, vfs.Precondition{}
		n.mtime = time.Now()
		return 0
	}
	fsys := n.m.fsys
	p, stale := n.livePath()
	if stale != 0 {
		return stale
	}
	// The version the staging starts from, asked before the copy: if the
	// file changes in between, the commit fails rather than overwrite a
	// version it never saw.
	base, errno := n.baseOf(fsys, p)
	if errno != 0 {
		return errno
	}
	st, err := vfs.Stage(n.m.ctx, fsys, p, true)
	if err != nil {
		return n.m.errno("write", p, err)
	}
	n.stage, n.base = st, stagedBase(st, base)
	n.mtime = time.Now()
	return 0
}

// baseOf is the precondition a staging of the file at p starts from: the
// tree's etag of the file now, or "no file" when there is none.
func (n *node) baseOf(fsys vfs.FileSystem, p string) (vfs.Precondition, syscall.Errno) {
	fi, err := fsys.Stat(n.m.ctx, p)
	if err != nil {
		return vfs.Precondition{}, n.m.errno("write", p, err)
	}
	switch fi.Kind {
	case vfs.KindDir:
		return vfs.Precondition{}, syscall.EISDIR
	case vfs.KindMissing:
		return vfs.Precondition{IfNoneMatch: true}, 0
	}
	return vfs.Precondition{IfMatch: fi.ETag}, 0
}

// stagedBase is the precondition of a commit of st: the version the
// staging itself says it started from (vfs.ConditionalCommitter: taken
// with the copy), else pre, asked of the tree before the staging. An
// empty BaseETag is not trusted: a union or index staging forwards to one
// that may have none.
func stagedBase(st vfs.StagedFile, pre vfs.Precondition) vfs.Precondition {
	if e := vfs.BaseETag(st); e != "" {
		return vfs.Precondition{IfMatch: e}
	}
	return pre
}

// stageEmpty makes n.stage hold an empty file. Callers hold n.mu.
func (n *node) stageEmpty() syscall.Errno {
	if n.stage != nil {
		if err := n.stage.Truncate(0); err != nil {
			return n.m.errno("truncate", n.path(), err)
		}
		return 0
	}
	if n.deleted {
		return n.load() // a private, empty buffer
	}
	p, stale := n.livePath()
	if stale != 0 {
		return stale
	}
	return n.stageEmptyAt(p)
}

// stageEmptyAt makes n.stage, nil before, an empty staging of the file at
// p. Callers hold n.mu.
//
// The staging is made first: a staging that says what it replaces
// (vfs.BaseETag: local:) needs no Stat of the file (an empty staging
// copies nothing, so there is no copy for a change to slip past).
func (n *node) stageEmptyAt(p string) syscall.Errno {
	st, err := vfs.Stage(n.m.ctx, n.m.fsys, p, false)
	if err != nil {
		return n.m.errno("truncate", p, err)
	}
	var base vfs.Precondition
	if vfs.BaseETag(st) == "" {
		var errno syscall.Errno
		if base, errno = n.baseOf(n.m.fsys, p); errno != 0 {
			st.Abort()
			return errno
		}
	}
	n.stage, n.base = st, stagedBase(st, base)
	n.mtime = time.Now()
	return 0
}

// dropStage aborts n's staging, if any. Callers hold n.mu.
func (n *node) dropStage() {
	if n.stage != nil {
		n.stage.Abort()
		n.stage = nil
	}
}

// fail records errno, a failed write into n's staging: the staging no
// longer holds what the writer meant, so every later write fails with it
// until the next flush, fsync or release reports it and discards the
// staging (the tree keeps its file). Callers hold n.mu.
func (n *node) fail(errno syscall.Errno) syscall.Errno {
	if n.poison == 0 && !n.deleted {
		n.poison = errno
		n.m.log.Printf("write %s: %v; the writes since the last commit will be discarded at close", n.path(), errno)
	}
	return errno
}

// discard drops n's staging and its uncommitted writes, for errno: every
// open handle that wrote into it reports errno at its next flush. The
// kernel's cached pages of the writes are invalidated (from the
// invalidator's goroutine: this runs inside a request). Callers hold n.mu.
func (n *node) discard(errno syscall.Errno) {
	for h := range n.handles {
		if h.wrote || (h.pt && h.write && n.stage != nil && n.stage == n.ptStage) {
			// (A writer passing through may have written: the kernel
			// wrote for it.)
			h.wrote = false
			if h.err == 0 {
				h.err = errno
			}
		}
	}
	n.dropStage()
	n.poison = 0
	n.version = fileVersion{}
	if n.dirty {
		n.dirty = false
		n.m.setDirty(n, false)
	}
	n.changes.Add(1)
	if p, stale := n.livePath(); stale == 0 {
		n.m.invalidate(p)
	}
}

// Read reads from the node's staging while the file is being written, else
// from the handle's whole copy, else by range through the handle's reader.
func (h *handle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n := h.n
	n.m.fileReads.Add(1)
	n.mu.Lock()
	if fd, ok := n.ptInPlaceFd(); ok {
		// Written in place through the daemon: the host file is the
		// file.
		defer n.mu.Unlock()
		k, err := unix.Pread(fd, dest, off)
		if err != nil {
			return nil, n.m.errno("read", n.path(), err)
		}
		return fuse.ReadResultData(dest[:k]), 0
	}
	if n.stage != nil {
		defer n.mu.Unlock()
		k, err := n.stage.ReadAt(dest, off)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, n.m.errno("read", n.path(), err)
		}
		return fuse.ReadResultData(dest[:k]), 0
	}
	n.mu.Unlock()
	gen := n.changes.Load()
	if h.hasData && h.gen == gen {
		if off >= int64(len(h.data)) {
			return fuse.ReadResultData(nil), 0
		}
		end := min(off+int64(len(dest)), int64(len(h.data)))
		return fuse.ReadResultData(h.data[off:end]), 0
	}
	h.mu.RLock()
	if h.r == nil || h.rgen != gen {
		h.mu.RUnlock()
		if errno := h.reopen(gen); errno != 0 {
			return nil, errno
		}
		h.mu.RLock()
	}
	defer h.mu.RUnlock()
	k, err := h.r.ReadAt(dest, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, n.m.errno("read", n.path(), err)
	}
	return fuse.ReadResultData(dest[:k]), 0
}

// Read serves a read: through the handle when there is one, else (no-open
// on a read-only mount) by range from the tree's file as it is now
// (vfs.ReadAt).
func (n *node) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if h := asHandle(f); h != nil {
		return h.Read(ctx, dest, off)
	}
	p, stale := n.livePath()
	if stale != 0 {
		return nil, stale
	}
	k, err := vfs.ReadAt(n.m.ctx, n.m.fsys, p, dest, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, n.m.errno("read", p, err)
	}
	return fuse.ReadResultData(dest[:k]), 0
}

var _ fs.NodeReader = (*node)(nil)

// reopen opens the handle's reader on the file as it is now (changes
// generation gen), closing a stale one.
func (h *handle) reopen(gen uint64) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.r != nil && h.rgen == gen {
		return 0
	}
	p, stale := h.n.livePath()
	if stale != 0 {
		return stale
	}
	ngen := h.n.m.namesGen.Load()
	r, err := vfs.OpenFile(h.n.m.ctx, h.n.m.fsys, p)
	if vfs.KindOf(err) == vfs.KindNotFound { // a rename moving the file: its new path
		p = h.n.followRenames(p, ngen, func(p string) bool {
			r, err = vfs.OpenFile(h.n.m.ctx, h.n.m.fsys, p)
			return vfs.KindOf(err) == vfs.KindNotFound
		})
	}
	if err != nil {
		return h.n.m.errno("read", p, err)
	}
	if h.r != nil {
		h.r.Close()
	}
	h.r, h.rgen = r, gen
	return 0
}

// Write writes into the node's staging, staging the file first if needed,
// or into the host file of a file written in place. With O_APPEND the data
// goes at the end whatever the offset.
func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	n := h.n
	n.killAsked(ctx) // a write by an unprivileged caller
	n.mu.Lock()
	defer n.mu.Unlock()
	h.wrote = true
	if fd, ok := n.ptInPlaceFd(); ok {
		return n.writeInPlace(fd, data, off, h.append)
	}
	if n.poison != 0 {
		return 0, n.poison
	}
	if errno := n.load(); errno != 0 {
		return 0, n.fail(errno)
	}
	if h.append {
		off = n.stage.Size()
	}
	if off+int64(len(data)) > n.m.opts.maxFileSize() {
		return 0, syscall.EFBIG
	}
	k, err := n.stage.WriteAt(data, off)
	if k > 0 {
		n.touch()
	}
	if err != nil {
		return uint32(k), n.fail(n.m.errno("write", n.path(), err))
	}
	return uint32(k), 0
}

// writeInPlace writes data at off (at the end: append) into fd, the host
// file n is written in place through; a failed write is the writer's
// error, as on disk, and poisons nothing. Callers hold n.mu.
func (n *node) writeInPlace(fd int, data []byte, off int64, append bool) (uint32, syscall.Errno) {
	if append {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return 0, n.m.errno("write", n.path(), err)
		}
		off = st.Size
	}
	if off+int64(len(data)) > n.m.opts.maxFileSize() {
		return 0, syscall.EFBIG
	}
	k, err := unix.Pwrite(fd, data, off)
	n.ptOwn = stampOf(fd)
	if err != nil {
		return uint32(max(k, 0)), n.m.errno("write", n.path(), err)
	}
	return uint32(k), 0
}

// hostStamp is the size and modification time of a host file, as fstat
// gave them; the zero value matches nothing.
type hostStamp struct {
	size, mtime int64
	ok          bool
}

// stampOf is the stamp of the open host file fd.
func stampOf(fd int) hostStamp {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return hostStamp{}
	}
	return hostStamp{size: st.Size, mtime: st.Mtim.Nano(), ok: true}
}

// ownWrite reports whether fi, what the host has at n's path now, is the
// file the daemon is writing in place with its last write, stamped
// after it (writeInPlace): the host watch hears every such write
// (inotify IN_MODIFY), and dropping the kernel's pages of the file then
// would throw away what the daemon just wrote through them (the kernel
// writes through its pages in cached mode), and cost an invalidation
// per write of a sequential writer. Any other stamp (another program's
// write, even one racing with the daemon's) drops them as before.
// Callers hold n.mu.
func (n *node) ownWrite(fi vfs.FileInfo) bool {
	if _, ok := n.ptInPlaceFd(); !ok || n.ptLive > 0 || !n.ptOwn.ok || fi.Kind != vfs.KindFile {
		return false
	}
	return fi.Size == n.ptOwn.size && fi.ModTime.UnixNano() == n.ptOwn.mtime
}

// touch marks n's staging changed. Callers hold n.mu.
func (n *node) touch() {
	n.mtime = time.Now()
	n.ptUnwritten = false
	if !n.dirty && !n.deleted {
		n.dirty = true
		n.m.setDirty(n, true)
	}
}

// truncate sets the file's size in its staging. onHandle says the
// request came with a file handle (ftruncate(2)); without one it is
// truncate(2) on a path or the kernel's truncation of an open(O_TRUNC)
// when atomic O_TRUNC is not in use. The staging is committed at once only
// when no descriptor has the file open for writing: otherwise the writer's
// next flush (its close) commits it, so a rewrite with O_TRUNC leaves the
// tree's file whole until the new contents are complete.
func (n *node) truncate(size int64, h *handle, pid uint32) syscall.Errno {
	if size > n.m.opts.maxFileSize() {
		return syscall.EFBIG
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if fd, ok := n.ptInPlaceFd(); ok {
		p := n.path()
		if h == nil {
			if stale, _ := n.ptStale(p, pid); stale {
				// truncate(2) of a name that holds another file now:
				// the kernel looks the name up again (ESTALE) and
				// truncates that file, not the one n's handles write.
				return syscall.ESTALE
			}
		}
		return n.m.errno("truncate", p, unix.Ftruncate(fd, size))
	}
	onHandle := h != nil
	if onHandle {
		h.wrote = true
	}
	if n.poison != 0 {
		return n.poison
	}
	var errno syscall.Errno
	if size == 0 {
		errno = n.stageEmpty()
	} else {
		errno = n.load()
	}
	if errno != 0 {
		if n.writers > 0 {
			return n.fail(errno)
		}
		return errno
	}
	if err := n.stage.Truncate(size); err != nil {
		errno := n.m.errno("truncate", n.path(), err)
		if n.writers > 0 {
			return n.fail(errno)
		}
		n.discard(errno)
		return errno
	}
	n.touch()
	if onHandle || n.writers > 0 {
		return 0
	}
	errno = n.commitLocked()
	if n.opens == 0 && !n.dirty {
		n.dropStage()
	}
	return errno
}

// commit publishes n's staging if it has uncommitted writes. It returns
// only once the tree took the data.
func (n *node) commit() syscall.Errno {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.commitLocked()
}

// commitLocked publishes n's staging, on the condition that the tree's
// file is still the version the staging started from (n.base): a file
// another writer replaced meanwhile (the API, another process, another
// mount) is not overwritten, the staging is discarded and the writer gets
// EIO, never a silent lost update. A staging poisoned by a failed write is
// discarded and its error returned. Callers hold n.mu.
func (n *node) commitLocked() syscall.Errno {
	if n.ptCheck() {
		return 0
	}
	if n.poison != 0 {
		errno := n.poison
		n.discard(errno)
		return errno
	}
	if !n.dirty || n.deleted {
		return 0
	}
	p, stale := n.livePath()
	if stale != 0 {
		return stale
	}
	dup := n.ptStageDup() // the staging's descriptor, which the commit closes
	n.m.beginSelf(p, vfs.ChangeWrite)
	err := commitStage(n.m.ctx, n.m.fsys, p, n.stage, n.base)
	n.m.endSelf(p, vfs.ChangeWrite, err == nil)
	if err != nil && dup != nil {
		dup.Close()
	}
	if vfs.KindOf(err) == vfs.KindConflict {
		n.m.log.Printf("write %s: the file changed since this writer staged it (another writer); its writes are discarded (EIO)", p)
		n.discard(syscall.EIO)
		return syscall.EIO
	}
	if err != nil {
		return n.m.errno("write", p, err)
	}
	for h := range n.handles {
		h.wrote = false // their writes are in
	}
	// The staging ended with the commit; a later write stages anew.
	committed := n.stage
	n.stage = nil
	n.dirty = false
	n.m.setDirty(n, false)
	// Handles reading a copy or a reader of the previous version reopen.
	n.changes.Add(1)
	if committed == n.ptStage {
		n.ptCommitted = true
		n.ptCommitShared(dup, p)
	}
	return 0
}

// casInMemoryLimit is the largest staging commitStage reads whole to
// commit it with one vfs.WriteIf when the staging is no
// vfs.ConditionalCommitter.
const casInMemoryLimit = 64 << 20

// commitStage publishes st at p through the tree's compare-and-swap when
// cond holds: through the staging's own CommitIf where it has one
// (vfs.ConditionalCommitter: local:, and unions of it), else
// (up to casInMemoryLimit) by one vfs.WriteIf of the staged bytes read
// whole, else by a check of the etag followed by the staging's Commit,
// which keeps memory bounded but leaves a window between the check and the
// commit (see docs/mount.md). On success the staging has ended; on
// failure it is still there.
func commitStage(ctx context.Context, fsys vfs.FileSystem, p string, st vfs.StagedFile, cond vfs.Precondition) error {
	if err := vfs.CommitIf(ctx, st, cond); !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	if size := st.Size(); size > casInMemoryLimit {
		fi, err := fsys.Stat(ctx, p)
		if err != nil {
			return err
		}
		if (cond.IfNoneMatch && fi.Kind != vfs.KindMissing) ||
			(cond.IfMatch != "" && (fi.Kind != vfs.KindFile || fi.ETag != cond.IfMatch)) {
			return vfs.NewError(vfs.KindConflict, p, nil)
		}
		return st.Commit(ctx)
	}
	data := make([]byte, st.Size())
	if k, err := st.ReadAt(data, 0); err != nil && !(errors.Is(err, io.EOF) && k == len(data)) {
		return err
	}
	if _, err := vfs.WriteIf(ctx, fsys, p, data, cond); err != nil {
		return err
	}
	st.Abort()
	return nil
}

// Flush commits on every close(2) of a descriptor that may have written
// (a reader's close commits nothing: a writer's half-written staging is
// not published by someone else's cat). It reports the error a staging
// this handle wrote into was discarded with, even when another handle's
// flush found it.
func (h *handle) Flush(ctx context.Context) syscall.Errno {
	n := h.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if h.err != 0 {
		errno := h.err
		h.err = 0
		return errno
	}
	if h.write && n.ptChecked {
		return n.publishInPlace(h) // written in place: checked and reported
	}
	if !h.write && !h.wrote {
		return 0
	}
	errno := n.commitLocked()
	h.err = 0 // reported now
	return errno
}

// Fsync commits; it succeeds only once the tree has the data. A file
// written in place is synced on the host.
func (h *handle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	n := h.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if h.err != 0 {
		errno := h.err
		h.err = 0
		return errno
	}
	if fd, ok := n.ptInPlaceFd(); ok {
		if err := unix.Fsync(fd); err != nil {
			return n.m.errno("fsync", n.path(), err)
		}
		return n.publishInPlace(h)
	}
	errno := n.commitLocked()
	h.err = 0
	return errno
}

// Release closes the handle's reader and, with the last handle of the node
// gone, commits what is left (writes no flush committed) and drops the
// staging. The kernel ignores release errors: a commit the tree refused
// for good (read-only, no space) is logged and dropped, one that failed
// with EIO is kept for a later commit (at unmount).
func (h *handle) Release(ctx context.Context) syscall.Errno {
	h.mu.Lock()
	if h.r != nil {
		h.r.Close()
		h.r = nil
	}
	h.mu.Unlock()
	n := h.n
	if h.write {
		// A writer's release may check that the name still holds a
		// file written in place (publishInPlace): a creator's writes
		// are checked only here (its close sends no FLUSH), a moment
		// after its close, when the program may well have renamed or
		// removed the file through the mount. The mount's names are
		// held for reading, so such a rename (rawFS.Rename) is either
		// done, go-fuse's nodes moved with it, or not begun; for an
		// unlink of one of the file's names in flight the check waits
		// (beginUnlink). Readers, most releases, do not wait.
		n.m.names.RLock()
		defer n.m.names.RUnlock()
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.handles, h)
	var errno syscall.Errno
	if h.write && n.ptChecked {
		// Writes after the last close's flush (through a mapping).
		if errno := n.publishInPlace(h); errno != 0 {
			n.m.log.Printf("release %s: %v", n.path(), errno)
		}
	}
	if len(n.handles) == 0 {
		errno = n.commitLocked()
		if errno != 0 && errno != syscall.EIO && n.dirty {
			// The tree refused the data (read-only, no mount, full):
			// the close already reported it; retrying cannot help.
			n.m.log.Printf("release %s: dropping uncommitted writes: %v", n.path(), errno)
			n.discard(errno)
		}
	}
	n.opens--
	if h.write {
		n.writers--
	}
	if h.pt {
		n.ptRelease(ctx)
	} else {
		n.cached--
		if n.opens == 0 && n.ptMode == ptInPlace && n.ptLive == 0 {
			n.ptDrop() // written in place through the daemon: done with
		}
	}
	if n.opens == 0 && !n.dirty {
		n.dropStage()
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

// Allocate answers fallocate. A staging with a host descriptor (local:)
// reserves the space on the host; elsewhere files have no preallocation,
// so reserving space is growing the file (or nothing, with KEEP_SIZE).
// Punching a hole or zeroing a range writes zeros.
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
	if fd, ok := n.ptInPlaceFd(); ok {
		return n.m.errno("fallocate", n.path(), unix.Fallocate(fd, mode, int64(off), int64(size)))
	}
	h.wrote = true
	if n.poison != 0 {
		return n.poison
	}
	if errno := n.load(); errno != 0 {
		return n.fail(errno)
	}
	p := n.path()
	if mode&(fallocPunchHole|fallocZeroRange) == 0 {
		// Reserving space: on a staging with a host descriptor (local:)
		// the host reserves it, so the writes that follow, by the daemon
		// or by the kernel passing through, do not run out of space
		// (nor allocate as they go), and the commit keeps it (copyFile
		// copies a file's reservation with it).
		if fd, ok := vfs.Fd(n.stage); ok {
			err := unix.Fallocate(int(fd), mode, int64(off), int64(size))
			if err == nil {
				n.touch()
				return 0
			}
			if err != unix.EOPNOTSUPP && err != unix.ENOSYS {
				return n.fail(n.m.errno("fallocate", p, err))
			}
		}
	}
	cur := n.stage.Size()
	if mode&fallocKeepSize == 0 && end > cur {
		if err := n.stage.Truncate(end); err != nil {
			return n.fail(n.m.errno("fallocate", p, err))
		}
		n.touch()
		cur = end
	}
	if mode&(fallocPunchHole|fallocZeroRange) != 0 && int64(off) < cur {
		zeros := make([]byte, min(min(end, cur)-int64(off), 1<<20))
		for o := int64(off); o < min(end, cur); o += int64(len(zeros)) {
			if _, err := n.stage.WriteAt(zeros[:min(int64(len(zeros)), min(end, cur)-o)], o); err != nil {
				return n.fail(n.m.errno("fallocate", p, err))
			}
		}
		n.touch()
	}
	return 0
}

var _ fs.FileAllocater = (*handle)(nil)
