package fusemount

import (
	"context"
	iofs "io/fs"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/julyfs/julyfs/third_party/go-fuse/fs"
	"github.com/julyfs/julyfs/third_party/go-fuse/fuse"
	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/union"
)

// FUSE passthrough: a handle whose file is one host descriptor (a
// local: tree's reader, or its staging) hands that descriptor to the
// kernel, which then reads and writes the host file itself; the daemon
// sees the open, flush, fsync and release, not the data.
//
// The kernel has one backing file per inode at a time, and refuses an
// open in passthrough while the inode has opens in cached mode and the
// other way round; go-fuse keeps the backing it registered for a node
// until the node's last passthrough handle is released, and hands it to
// every open meanwhile. So a node is in one passthrough mode at a time,
// chosen by the open that finds it with no handle:
//
//   - ptRead: a reader opened the host file (a descriptor of the
//     version then current, open for reading and writing where the tree
//     writes in place, else read-only); readers opening meanwhile share
//     it.
//   - ptStage: a writer staged the file (vfs.Stage) and writes into the
//     staging's descriptor; every handle opening meanwhile, reader or
//     writer, reads and writes that staging, as without passthrough.
//     Flush, fsync and release commit it (a rename, compare-and-swap on
//     the version the staging started from); a writer may have written,
//     as the daemon cannot tell, so the staging is dirty from the open.
//   - ptInPlace: the host file is written in place (a file created in
//     place, one that held no data, Options.WriteInPlace, or a host file
//     a writer shares: ptShareWriter, ptCommitShared).
//
// A writer arriving while readers read the host file, or once the
// staging was committed under handles still open, shares the host file
// where the tree writes in place (see "Shared writes" below); a writer
// of a name whose host file was replaced meanwhile gets ESTALE, so that
// the kernel looks the name up again and gets a node of its own for the
// new file (ptReplaced), and so does any open, and a truncate(2), of a
// name whose file written in place was replaced (ptInPlaceReplaced). An
// open that cannot share the node's backing
// otherwise (the staging was discarded under open handles; on a tree
// that cannot write in place, a writer while readers read the host
// file) waits up to ptWait for those handles to be released (a program
// that just closed them: the kernel's RELEASE is on its way), then fails
// with ETXTBSY. A node with handles open in cached mode (no passthrough)
// gets cached handles until they are gone.

// ptMode is a node's passthrough mode.
type ptMode int8

const (
	ptNone ptMode = iota
	ptRead
	ptStage
	ptInPlace
)

// ptWait bounds how long an open waits for the passthrough handles that
// keep it from sharing a node's backing to be released.
const ptWait = 5 * time.Second

// ptMinFree is the free space below which a writer does not pass through:
// the daemon cannot see a write the kernel made fail (ENOSPC), so a disk
// near full is written through the daemon, which poisons the staging on a
// failed write. At commit, a passthrough staging on a disk with no free
// block left is taken for one a write failed on (see ptCheck).
const ptMinFree = 64 << 20

// lowDisk reports whether the filesystem of the open file fd has less
// than ptMinFree free (or cannot say): its writers do not pass through.
func lowDisk(fd int) bool {
	var st unix.Statfs_t
	return unix.Fstatfs(fd, &st) != nil || st.Bfree*uint64(st.Bsize) < ptMinFree
}

// ptMaxCopy is the largest file a writer opening it without O_TRUNC passes
// through: such an open stages a copy of the file at once (the kernel
// needs the staging's descriptor at open), where without passthrough the
// copy waits for the first write (and an open that never writes costs
// none).
const ptMaxCopy = DefaultMaxFileSize

// ptHandle is a handle that passes through to fd (fs.FilePassthroughFder).
type ptHandle struct {
	*handle
	fd int
}

var _ fs.FilePassthroughFder = (*ptHandle)(nil)

// PassthroughFd is called by go-fuse at open when the node has no backing
// registered yet.
func (h *ptHandle) PassthroughFd() (int, bool) {
	h.n.m.ptFds.Add(1)
	return h.fd, true
}

// asHandle is the *handle behind a go-fuse file handle, or nil.
func asHandle(f fs.FileHandle) *handle {
	switch h := f.(type) {
	case *handle:
		return h
	case *ptHandle:
		return h.handle
	}
	return nil
}

// probePassthrough reports whether the kernel takes backing descriptors on
// srv's connection (Linux 6.9+, CAP_SYS_ADMIN), trying with a temporary
// file, and why not.
func probePassthrough(srv *fuse.Server) (bool, string) {
	if srv.KernelSettings().Flags64()&fuse.CAP_PASSTHROUGH == 0 {
		return false, "the kernel did not offer it (Linux 6.9+ with CONFIG_FUSE_PASSTHROUGH)"
	}
	f, err := os.CreateTemp("", "julyfs-passthrough-probe")
	if err != nil {
		return false, err.Error()
	}
	defer os.Remove(f.Name())
	defer f.Close()
	id, errno := srv.RegisterBackingFd(&fuse.BackingMap{Fd: int32(f.Fd())})
	if errno != 0 {
		return false, "registering a backing file: " + errno.Error() + " (needs root)"
	}
	srv.UnregisterBackingFd(id)
	return true, ""
}

// ptChoose decides whether a handle opened for writing (write) or reading
// passes through, and in which mode: ptNone (cached, through the daemon),
// the node's current mode (share its backing), or, when the node has no
// handle, -1: the caller sets a backing up. p is the file's path. A
// writer of a node whose backing is a host file no longer at p gets
// ESTALE (see ptReplaced), and so does any open of a node written in
// place whose host file the name no longer holds (ptInPlaceReplaced). It
// may wait (see ptWait), unlocking n.mu meanwhile. Callers hold n.mu.
func (n *node) ptChoose(write bool, p string, pid uint32) (ptMode, syscall.Errno) {
	select {
	case <-n.m.ptDecided:
	default:
		// An open that came as soon as the directory was mounted, while
		// Mount still probes the kernel: it waits for the answer, so
		// the first handles pass through (and write in place) as later
		// ones do.
		n.mu.Unlock()
		<-n.m.ptDecided
		n.mu.Lock()
	}
	stale, own := n.ptStale(p, pid) // own: the kernel's second try, through a descriptor of n's file
	if stale {
		// The kernel still has the name at this node (a file replaced
		// by a file keeps its dentry): ESTALE makes it look the name
		// up again, and child gives it a node of its own.
		return ptNone, syscall.ESTALE
	}
	if !n.m.pt.Load() || n.deleted {
		return ptNone, 0
	}
	deadline := time.Now().Add(ptWait)
	pause := 200 * time.Microsecond
	for {
		switch {
		case n.cached > 0:
			return ptNone, 0
		case n.ptOpen > 0 && (own || n.ptShareable(write, p)):
			return n.ptMode, 0
		case n.ptLive == 0:
			return -1, 0
		}
		if write && n.ptOpen > 0 && n.ptBackingReplaced(p) {
			// The name holds another file now: the kernel looks it up
			// again and gets a node of its own for it (child).
			return ptNone, syscall.ESTALE
		}
		if time.Now().After(deadline) {
			n.m.log.Printf("open %s: busy: open in passthrough (%s) by another program; ETXTBSY", n.path(), n.ptMode)
			return ptNone, syscall.ETXTBSY
		}
		n.mu.Unlock()
		time.Sleep(pause)
		pause = min(2*pause, 20*time.Millisecond)
		n.mu.Lock()
	}
}

func (m ptMode) String() string {
	switch m {
	case ptRead:
		return "reading the host file"
	case ptStage:
		return "writing a staging"
	case ptInPlace:
		return "writing the host file in place"
	}
	return "none"
}

// ptShareable reports whether a new handle (a writer: write) may use the
// node's backing: a reader always (the host file it reads, the staging
// everyone reads while the file is written, or that staging committed), a
// writer a staging not yet committed or discarded, or a host file the
// tree lets it write in place (ptShareWriter), or a host file written in
// place (created, holding no data, shared) that is still the file at p.
// Writing into a committed staging or a host file otherwise would land
// in the tree's file unchecked, where a concurrent change through the API
// may have replaced it (a lost update reported as done), or in a file
// that is no longer the tree's. Callers hold n.mu.
func (n *node) ptShareable(write bool, p string) bool {
	switch n.ptMode {
	case ptInPlace:
		if !write {
			return true // (ptChoose checked the name holds it)
		}
		if !n.ptCurrent(p) {
			return false
		}
		if n.ptSharedFile {
			n.m.ptShared.Add(1)
		}
		return true
	case ptRead:
		return !write || n.ptShareWriter(p)
	case ptStage:
		if n.stage != nil && n.stage == n.ptStage {
			return true
		}
		return n.ptCommitted && !write
	}
	return false
}

// Shared writes. While an inode has a handle in passthrough, the kernel
// lets every other open of it pass through to the same backing file only
// (another backing is EBUSY, an open without passthrough EINVAL), so a
// writer arriving while readers read the host file, or after the staging
// they share was committed (it is the host file now), can only write
// that host file. On a tree that writes in place (ptShare: local:
// mounted alone) it does: when the host file is still the file at the
// path (same device and inode: ptCurrent), the node becomes ptInPlace
// with its writes checked and reported at each close, as a file created
// in place (ptChecked, publishInPlace). A host file replaced at the path
// meanwhile is not written: the writer gets ESTALE (ptChoose; a reader
// too once writers write it in place), and the kernel's second lookup of
// the name a new node for the new file, as child gives one for a name
// whose node's handles only pass through to, or write in place, the file
// it held before (ptReplaced). Readers pass through only on a backing a writer can share:
// opened for reading and writing (ptReaderFile).

// ptShareWriter turns n, whose handles read the host file (ptRead), into
// a file written in place that a writer shares, if it can: the backing is
// open for writing and still the file at p. Callers hold n.mu.
func (n *node) ptShareWriter(p string) bool {
	hf, ok := n.ptFile.(hostFile)
	if !ok || !n.m.ptShare || n.deleted {
		return false
	}
	n.ptSharedFile = true // (for ptCurrent)
	n.ptMode = ptInPlace
	if !n.ptCurrent(p) {
		n.ptMode, n.ptSharedFile = ptRead, false
		return false
	}
	n.ptChecked = true
	n.ptPub = stampInfo(hf.f)
	n.m.ptShared.Add(1)
	return true
}

// ptCommitShared makes f, a duplicate of the descriptor of n's staging
// just committed at p while handles pass through to it, the host file n
// is written in place through: the handles still open, and writers
// opening meanwhile, write the file the commit published, checked and
// reported at each close. f is closed when that cannot be (the tree
// does not write in place, the commit copied the staging elsewhere).
// Callers hold n.mu.
func (n *node) ptCommitShared(f *os.File, p string) {
	if f == nil {
		return
	}
	old := n.ptFile
	n.ptFile, n.ptSharedFile = hostFile{f}, true
	n.ptMode = ptInPlace
	if !n.m.ptShare || !n.ptCurrent(p) {
		n.ptFile, n.ptSharedFile, n.ptMode = old, false, ptStage
		f.Close()
		return
	}
	if old != nil {
		old.Close()
	}
	n.ptStage, n.ptCreated, n.ptCommitted = nil, false, false
	n.ptChecked = true
	n.ptPub = stampInfo(f)
}

// ptReplaced reports whether n's handles use a host file (readers
// passing through, ptRead; handles writing it in place, ptInPlace: a file
// created in place, one that held no data, a shared one, with
// passthrough or through the daemon) that is not the file fi describes,
// the one now at n's name, and n has no staging: the name is then given
// a new node (child), which opens the file at the name, where n's backing
// could not be written (ptChoose) and is no longer the tree's. Callers do
// not hold n.mu.
func (n *node) ptReplaced(fi vfs.FileInfo) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ptReplacedLocked(fi.Dev, fi.Ino)
}

// ptReplacedLocked is ptReplaced for the host file dev, ino. Callers hold
// n.mu.
func (n *node) ptReplacedLocked(dev, ino uint64) bool {
	if ino == 0 || n.stage != nil || !(n.ptMode == ptRead && n.ptOpen > 0 || n.ptMode == ptInPlace) {
		return false
	}
	hf, ok := n.ptFile.(hostFile)
	if !ok {
		return false
	}
	var st unix.Stat_t
	if unix.Fstat(int(hf.f.Fd()), &st) != nil {
		return false
	}
	return st.Ino != ino || dev != 0 && uint64(st.Dev) != dev
}

// ptStale decides an open or truncate of n at p by the caller pid (a
// thread id): stale, answer ESTALE, when n's name holds another file
// (ptInPlaceReplaced). The kernel then tries once more, looking the name
// up again first, and gets a node of its own for the file there; a try
// that reaches n again from the same caller came through a descriptor of
// n's own file (/proc/self/fd/N, /dev/fd/N, which lead to n whatever the
// name holds): own, it opens or truncates that file, as on a local disk.
// Callers hold n.mu.
func (n *node) ptStale(p string, pid uint32) (stale, own bool) {
	if n.ptStaleSet && n.ptStaleTo == pid {
		n.ptStaleSet = false
		return false, true
	}
	if !n.ptInPlaceReplaced(p) {
		return false, false
	}
	n.ptStaleTo, n.ptStaleSet = pid, true
	return true, false
}

// callerPid is the thread id of the process whose request ctx is, or 0.
func callerPid(ctx context.Context) uint32 {
	if c, ok := fuse.FromContext(ctx); ok {
		return c.Pid
	}
	return 0
}

// ptInPlaceReplaced reports whether n is written in place (ptInPlace:
// created in place, holding no data, shared; with passthrough or through
// the daemon) and its host file is no longer the file at p: another file
// was put at the name (a compare-and-swap commit through the API, a
// program's rename on the host). Its handles keep their file, as on a
// local disk; a new open, or a truncate(2), of the name must reach the
// file now there. Callers hold n.mu.
func (n *node) ptInPlaceReplaced(p string) bool {
	return n.ptMode == ptInPlace && n.ptBackingReplaced(p)
}

// ptBackingReplaced reports whether the host file n's handles pass
// through to is not the file at p, which is there. Callers hold n.mu.
func (n *node) ptBackingReplaced(p string) bool {
	if _, ok := n.ptFile.(hostFile); !ok || n.deleted {
		return false
	}
	r, err := vfs.OpenFile(n.m.ctx, n.m.fsys, p)
	if err != nil {
		return false
	}
	defer r.Close()
	fd, ok := vfs.Fd(r)
	var st unix.Stat_t
	if !ok || unix.Fstat(int(fd), &st) != nil {
		return false
	}
	return n.ptReplacedLocked(uint64(st.Dev), st.Ino)
}

// ptCurrent reports whether the host file n is written in place through
// is the file at p now (same device and inode). Callers hold n.mu.
func (n *node) ptCurrent(p string) bool {
	hf, ok := n.ptFile.(hostFile)
	if !ok || n.deleted {
		return false
	}
	have, err := hf.f.Stat()
	if err != nil {
		return false
	}
	r, err := vfs.OpenFile(n.m.ctx, n.m.fsys, p)
	if err != nil {
		return false
	}
	defer r.Close()
	fd, ok := vfs.Fd(r)
	if !ok {
		return false
	}
	var st unix.Stat_t
	if unix.Fstat(int(fd), &st) != nil {
		return false
	}
	want, ok := have.Sys().(*syscall.Stat_t)
	return ok && uint64(want.Dev) == uint64(st.Dev) && uint64(want.Ino) == uint64(st.Ino)
}

// stampInfo is f's size and modification time as a FileInfo, what
// publishInPlace compares with (ptPub).
func stampInfo(f *os.File) vfs.FileInfo {
	fi, err := f.Stat()
	if err != nil {
		return vfs.FileInfo{}
	}
	return vfs.FileInfo{Kind: vfs.KindFile, Size: fi.Size(), ModTime: fi.ModTime()}
}

// ptStageDup is a duplicate of the descriptor of n's staging when handles
// pass through to it on a tree that writes in place, taken before a
// commit closes the staging (see ptCommitShared); nil otherwise. Callers
// hold n.mu.
func (n *node) ptStageDup() *os.File {
	if !n.m.ptShare || n.ptStage == nil || n.stage != n.ptStage || n.ptOpen == 0 {
		return nil
	}
	fd, ok := vfs.Fd(n.stage)
	if !ok {
		return nil
	}
	d, err := unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(d), n.path())
}

// ptSetup makes n's backing for a first handle, for writing (stage, the
// staging is set up by the caller already) or reading (the host file at p,
// opened now; fi is what the tree said of it), and returns its
// descriptor; ok false means the handle does not pass through. Callers
// hold n.mu.
func (n *node) ptSetup(write bool, p string, created bool, fi vfs.FileInfo) (int, bool) {
	if write {
		fd, ok := vfs.Fd(n.stage)
		if !ok {
			n.ptMissFd(true)
			return 0, false
		}
		if lowDisk(int(fd)) {
			return 0, false
		}
		n.ptMode, n.ptStage = ptStage, n.stage
		// The kernel writes it; the daemon cannot tell whether it did.
		// A staging of a file just created (the tree has it empty) is
		// committed only if it is not empty (ptCheck).
		n.ptCreated = created
		n.touch()
		return int(fd), true
	}
	if _, ok := n.m.fsys.(vfs.FileOpener); !ok || n.ptNoFd(false) {
		return 0, false
	}
	if n.m.ptShare {
		return n.ptReaderFile(p, fi)
	}
	r, err := vfs.OpenFile(n.m.ctx, n.m.fsys, p)
	if err != nil {
		return 0, false // the handle reads through the daemon, which reports the error
	}
	fd, ok := vfs.Fd(r)
	if !ok {
		n.ptMissFd(false)
		r.Close()
		return 0, false
	}
	n.ptMode, n.ptFile = ptRead, r
	return int(fd), true
}

// ptReaderFile makes n's backing for a first reader on a tree that
// writes in place (ptShare) the host file at p opened for reading and
// writing, so that a writer arriving while it is open can share it
// (ptShareWriter). An executable (fi has an execute bit) is not opened so
// (a host file open for writing cannot be executed: ETXTBSY), nor a file
// the host refuses to open so (a read-only filesystem, one being
// executed): the reader reads through the daemon (ok false), and a writer
// arriving meanwhile opens as it would without passthrough. Callers hold
// n.mu.
func (n *node) ptReaderFile(p string, fi vfs.FileInfo) (int, bool) {
	o, ok := n.m.fsys.(inPlaceOpener)
	if !ok || fi.Mode&0o111 != 0 {
		return 0, false
	}
	f, err := o.OpenInPlace(n.m.ctx, p)
	if err != nil {
		return 0, false
	}
	n.ptMode, n.ptFile = ptRead, hostFile{f}
	return int(f.Fd()), true
}

// inPlaceOpener is a tree that opens its files for writing in place
// (local:).
type inPlaceOpener interface {
	OpenInPlace(ctx context.Context, path string) (*os.File, error)
}

// hostFile is a host file a node writes in place (ptInPlace), as n.ptFile.
type hostFile struct{ f *os.File }

func (h hostFile) ReadAt(b []byte, off int64) (int, error) { return h.f.ReadAt(b, off) }
func (h hostFile) Fd() uintptr                             { return h.f.Fd() }
func (h hostFile) Close() error                            { return h.f.Close() }
func (h hostFile) Size() int64 {
	fi, err := h.f.Stat()
	if err != nil {
		return 0
	}
	return fi.Size()
}

// ptInPlaceSetup makes n's backing the host file at p opened for writing
// in place, for a writer opening it without O_TRUNC with no other handle
// open (Options.WriteInPlace): no staging, no copy, no commit. ok false
// means the writer stages as usual. Callers hold n.mu.
func (n *node) ptInPlaceSetup(p string) (int, bool) {
	o, ok := n.m.fsys.(inPlaceOpener)
	if !ok || !n.m.opts.WriteInPlace || n.stage != nil || n.opens > 0 {
		return 0, false
	}
	f, err := o.OpenInPlace(n.m.ctx, p)
	if err != nil {
		return 0, false // staged as usual, which reports the error
	}
	n.ptMode, n.ptFile = ptInPlace, hostFile{f}
	return int(f.Fd()), true
}

// ptDatalessSetup makes n's backing the host file at p opened for writing
// in place when it holds no data (see "New files written in place"
// below), for a writer opening it without O_TRUNC while no other handle
// has it open: written by the kernel (kernel: the handle passes through)
// or by the daemon. ok false means the writer stages as usual: the file
// holds data, the tree cannot (not local: mounted alone), the disk is
// nearly full (kernel only: the daemon sees its own writes fail), or the
// open failed (the staging reports why). Callers hold n.mu.
func (n *node) ptDatalessSetup(p string, kernel bool) (int, bool) {
	c, ok := n.m.fsys.(inPlaceCreator)
	if !ok || n.stage != nil || n.opens > 0 || n.deleted || n.ptNoFd(true) {
		return 0, false
	}
	f, fi, ok, err := c.OpenDatalessInPlace(n.m.ctx, p)
	if err != nil || !ok {
		return 0, false
	}
	fd := int(f.Fd())
	if kernel && lowDisk(fd) {
		f.Close() // a disk nearly full: the daemon must see the writes
		return 0, false
	}
	n.ptMode, n.ptFile, n.ptChecked, n.ptPub = ptInPlace, hostFile{f}, true, fi
	n.m.ptDataless.Add(1)
	return fd, true
}

// ptInPlaceFd is the host descriptor n is written through in place, if
// it is. Callers hold n.mu.
func (n *node) ptInPlaceFd() (int, bool) {
	if n.ptMode != ptInPlace || n.ptFile == nil {
		return 0, false
	}
	fd, ok := vfs.Fd(n.ptFile)
	return int(fd), ok
}

// ptCheck is called before a commit of n's staging while the kernel
// writes it; skip says there is nothing to commit now. A staging of a
// file just created that is still empty has nothing to commit. A staging on a disk with no free block left is taken for one
// a write failed on (the kernel returned ENOSPC to the writer, which the
// daemon never sees), and poisoned. Callers hold n.mu.
func (n *node) ptCheck() (skip bool) {
	if n.ptStage == nil || n.stage != n.ptStage || n.poison != 0 {
		return false
	}
	fd, ok := vfs.Fd(n.stage)
	if !ok || !n.dirty {
		return false
	}
	if n.ptCreated {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) == nil && st.Size == 0 {
			// Still the empty file the tree has: nothing to commit
			// yet (a writer may write on: a shell's > closes a
			// duplicate first), nothing at all once every handle is
			// gone.
			if len(n.handles) == 0 {
				n.dirty = false
				n.m.setDirty(n, false)
			}
			return true
		}
	}
	if n.ptUnwrittenNow() {
		// A copy nobody wrote: nothing to commit (the tree's file stays
		// the file, with its inode and links), nothing at all once
		// every handle is gone.
		if len(n.handles) == 0 {
			n.dirty = false
			n.m.setDirty(n, false)
		}
		return true
	}
	var st unix.Statfs_t
	if unix.Fstatfs(int(fd), &st) == nil && st.Bfree == 0 {
		n.fail(syscall.ENOSPC)
	}
	return false
}

// ptUnwrittenTime is the modification time a staging copied for a
// writer that passes through is given at open (ptMarkUnwritten): the
// kernel's first write through it, of any size, at any time, sets the
// time to the clock's, so a staging that still has it was not written.
var ptUnwrittenTime = unix.NsecToTimespec(1)

// ptMarkUnwritten gives fd, the descriptor of n's staging just copied
// for a writer that passes through, ptUnwrittenTime, so that a commit
// can tell whether the kernel wrote it (ptUnwrittenNow): a writer that
// opens a file and writes nothing (touch, an editor's check, a program's
// O_RDWR open that only reads) then leaves the tree's file as it was,
// its inode and hard links included, as it does without passthrough.
// Callers hold n.mu.
func (n *node) ptMarkUnwritten(fd int) {
	ts := [2]unix.Timespec{{Nsec: unix.UTIME_OMIT}, ptUnwrittenTime}
	if unix.UtimesNanoAt(fd, "", ts[:], unix.AT_EMPTY_PATH) == nil {
		n.ptUnwritten = true
	}
}

// ptUnwrittenNow reports whether n's staging, copied for a writer that
// passes through, is still as copied: not written by the kernel (its
// time is still ptUnwrittenTime) nor changed through the daemon (touch
// clears ptUnwritten). Callers hold n.mu.
func (n *node) ptUnwrittenNow() bool {
	if !n.ptUnwritten || n.stage == nil || n.stage != n.ptStage {
		return false
	}
	fd, ok := vfs.Fd(n.stage)
	var st unix.Stat_t
	if !ok || unix.Fstat(int(fd), &st) != nil || st.Mtim != ptUnwrittenTime {
		n.ptUnwritten = false
		return false
	}
	return true
}

// ptEmptyCreated reports whether n's staging is the passthrough staging
// of a file just created that is still empty: the tree's file (empty too)
// is what n is, its times included. Callers hold n.mu.
func (n *node) ptEmptyCreated() bool {
	if !n.ptCreated || n.stage == nil || n.stage != n.ptStage {
		return false
	}
	size, _, ok := n.ptStat()
	return ok && size == 0
}

// ptStat reports the size and modification time of n's staging from its
// descriptor when the kernel writes it, else ok false. Callers hold n.mu.
func (n *node) ptStat() (size int64, mtime time.Time, ok bool) {
	if n.ptStage == nil || n.stage != n.ptStage {
		return 0, time.Time{}, false
	}
	fd, ok := vfs.Fd(n.stage)
	if !ok {
		return 0, time.Time{}, false
	}
	var st unix.Stat_t
	if unix.Fstat(int(fd), &st) != nil {
		return 0, time.Time{}, false
	}
	return st.Size, time.Unix(st.Mtim.Unix()), true
}

// ptReleased ends a passthrough handle's hold on n's backing, once go-fuse
// has dropped its reference (see rawFS.Release). Callers hold n.mu.
func (n *node) ptReleased() {
	n.ptLive--
	if n.ptLive > 0 {
		return
	}
	n.ptLive = 0
	n.ptDrop()
}

// ptDrop closes n's backing and ends its mode, once no handle uses it.
// Callers hold n.mu.
func (n *node) ptDrop() {
	if n.ptFile != nil {
		n.ptFile.Close()
		n.ptFile = nil
	}
	n.ptMode, n.ptStage, n.ptCreated, n.ptCommitted, n.ptChecked, n.ptSharedFile, n.ptUnwritten, n.ptStaleSet = ptNone, nil, false, false, false, false, false, false
	n.ptOwn = hostStamp{}
}

// links is the link count of the host file st describes (1 if unknown).
func links(st os.FileInfo) uint64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Nlink)
	}
	return 1
}

// rawFS is go-fuse's bridge with a hook after each RELEASE: go-fuse drops
// a node's backing registration after the handle's own Release returns,
// and a node's next open must not pick a new backing before that (go-fuse
// would hand it the old one).
type rawFS struct {
	fuse.RawFileSystem
	m *mount
}

// Flush answers ENOSYS on a read-only mount, which never has anything to
// flush: the kernel then stops sending FLUSH at every close (no-flush);
// its no-open (see Open) leaves it no OPEN reply to carry FOPEN_NOFLUSH.
func (r *rawFS) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	if r.m.opts.ReadOnly {
		return fuse.ENOSYS
	}
	return r.RawFileSystem.Flush(cancel, in)
}

func (r *rawFS) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	r.RawFileSystem.Release(cancel, in)
	if n, ok := r.m.ptReleasing.take(cancel); ok {
		n.mu.Lock()
		n.ptReleased()
		n.mu.Unlock()
	}
}

// Rename holds the mount's names for writing until go-fuse has moved its
// nodes (see handle.Release).
func (r *rawFS) Rename(cancel <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	r.m.names.Lock()
	defer r.m.names.Unlock()
	defer r.m.namesGen.Add(1)
	return r.RawFileSystem.Rename(cancel, in, oldName, newName)
}

// Unlink holds the mount's names for reading until go-fuse has dropped
// the name: UNLINKs run side by side (rm -rf of several trees at once),
// and not while a RENAME moves names. A writer's release of the file
// being unlinked knows by the node (beginUnlink), not by this lock.
func (r *rawFS) Unlink(cancel <-chan struct{}, header *fuse.InHeader, name string) fuse.Status {
	r.m.names.RLock()
	defer r.m.names.RUnlock()
	defer r.m.namesGen.Add(1)
	st := r.RawFileSystem.Unlink(cancel, header, name)
	if cn, ok := r.m.unlinkEnding.take(cancel); ok {
		cn.endUnlink()
	}
	return st
}

// ptRelease records that pt handle h of n is being released in the
// request of ctx: the backing hold ends once go-fuse is done with the
// request (rawFS.Release), or now when ctx is no request's. Callers hold
// n.mu.
func (n *node) ptRelease(ctx context.Context) {
	n.ptOpen--
	if c := cancelOf(ctx); c != nil && n.m.ptReleasing.put(c, n) {
		return
	}
	n.ptReleased()
}

// ptNoFd reports whether the tree's readers (write: stagings) of n's file
// are known to come without a host descriptor. Callers hold n.mu.
func (n *node) ptNoFd(write bool) bool {
	if write {
		return n.m.ptNoStageFd.Load() || n.ptNoStage
	}
	return n.m.ptNoReaderFd.Load() || n.ptNoReader
}

// ptMissFd records that a reader (write: a staging) of n's file came
// without a host descriptor: for the whole tree, or for n alone in a tree
// of several mounts. Callers hold n.mu.
func (n *node) ptMissFd(write bool) {
	switch {
	case n.m.ptMixed.Load() && write:
		n.ptNoStage = true
	case n.m.ptMixed.Load():
		n.ptNoReader = true
	case write:
		n.m.ptNoStageFd.Store(true)
	default:
		n.m.ptNoReaderFd.Store(true)
	}
}

// multiMount is a tree of several mounts (vfs/union's), some of which may
// have host descriptors and others not.
type multiMount interface{ Mounts() []union.Mount }

// ptState is the passthrough state of a mount.
type ptState struct {
	pt atomic.Bool // handles may pass through
	// ptDecided is closed once Mount has probed the kernel and set pt.
	ptDecided chan struct{}
	ptFds     atomic.Int64 // descriptors handed to go-fuse to register (PassthroughFd)
	// The tree's readers (stagings) came without a descriptor once: it
	// is not asked again (temp: has none), as a writer's open would stage
	// a copy of the file for nothing. In a tree of several mounts
	// (ptMixed: a union, whose files of local: mounts have descriptors
	// and of others not) that is remembered per node instead.
	ptNoReaderFd, ptNoStageFd atomic.Bool
	ptMixed                   atomic.Bool
	// ptShare says a writer may share the host file handles pass
	// through to (the tree writes in place: a local: tree mounted
	// alone); set before ptDecided is closed.
	ptShare bool
	// ptShared counts the writers that opened onto a host file other
	// handles passed through to (ptShareWriter, ptCommitShared).
	ptShared atomic.Int64
	// ptDataless counts the existing files opened for writing in place
	// because they held no data (ptDatalessSetup).
	ptDataless atomic.Int64
	// fileReads counts the reads served by the daemon through a handle
	// (the ones the kernel's pages did not answer).
	fileReads    atomic.Int64
	ptReleasing  requests[*node] // by RELEASE request: see rawFS
	unlinkEnding requests[*node] // by UNLINK request: endUnlink after go-fuse's RmChild
}

// debugf logs a line when Options.Debug is set.
func (m *mount) debugf(format string, args ...any) {
	if m.opts.Debug {
		m.log.Printf(format, args...)
	}
}

// New files written in place. A file the mount creates (CREATE: nothing
// at the name, an exclusive create on the host) has no older version a
// staging would protect, so on a tree that can (inPlaceCreator: local:
// mounted alone) it is made on the host open for writing and written
// there directly (ptInPlace, ptChecked): by the kernel with passthrough,
// else by the daemon (pwrite on that descriptor; the node's other
// handles read and write it too): no staging, no copy, no rename at
// close. An existing file that holds no
// data (empty, or only holes and space reserved with fallocate: fio's
// layout) has no older contents either: a writer opening it without
// O_TRUNC while the mount has no other handle on it writes it in place
// the same way (ptDatalessSetup; checked on the descriptor written
// through, after its open). What a program's close commits
// through a staging elsewhere is here a report: the flush checks that the
// name still holds the file (a rename over it or an unlink by another
// writer meanwhile is EIO, as a lost compare-and-swap is) and tells the
// tree's watchers of the writes (vfs.ChangeWrite). The creator's close
// sends no flush (FOPEN_NOFLUSH in the CREATE reply): its release does
// the same, under the mount's names (handle.Release), so the program's
// own rename or unlink right after the close is not taken for another
// writer's; nor is a file only moved (still linked), by anyone. Once the name holds
// another file, the name is that file's, as on a disk: an open or a
// truncate(2) of it through the node the kernel still has there gets
// ESTALE (ptInPlaceReplaced), and the kernel's second lookup a node of
// its own (ptReplaced), while the node's handles keep writing theirs.
// docs/mount.md ("Data safety") says what a reader and a crash see.

// inPlaceCreator is a tree that creates new files open for writing in
// place, opens existing ones that hold no data in place, and reports
// their writes (local:).
type inPlaceCreator interface {
	CreateInPlace(ctx context.Context, path string, perm iofs.FileMode) (*os.File, vfs.FileInfo, error)
	OpenDatalessInPlace(ctx context.Context, path string) (*os.File, vfs.FileInfo, bool, error)
	WroteInPlace(ctx context.Context, path string, f *os.File, since vfs.FileInfo) (vfs.FileInfo, bool, error)
}

// createInPlace creates the file name of directory n at p in place (see
// above) and opens it with flags, giving it the permission bits perm: h
// nil means it did not (passthrough undecided, a tree that cannot, with
// passthrough a disk nearly full, a node the kernel still has open under
// that name);
// made then says the file was created on the host all the same (empty),
// for the caller to open the usual way.
func (n *node) createInPlace(ctx context.Context, name, p string, flags, perm uint32) (ch *fs.Inode, h fs.FileHandle, fi vfs.FileInfo, made bool) {
	m := n.m
	c, ok := m.fsys.(inPlaceCreator)
	if !ok {
		return nil, nil, vfs.FileInfo{}, false
	}
	select {
	case <-m.ptDecided:
	default:
		return nil, nil, vfs.FileInfo{}, false // an open right at mount: staged
	}
	pt := m.pt.Load()
	if pt && n.ptNoFd(true) {
		return nil, nil, vfs.FileInfo{}, false
	}
	m.beginSelf(p, vfs.ChangeWrite)
	var f *os.File
	err := m.entryChange(p, true, func() (err error) {
		f, fi, err = c.CreateInPlace(m.ctx, p, vfs.FileModeOf(perm))
		return err
	})
	m.endSelf(p, vfs.ChangeWrite, err == nil)
	if err != nil {
		return nil, nil, vfs.FileInfo{}, false // the tree's create says why
	}
	m.forget(p)
	if m.ownByCaller(ctx, p) {
		// Given to its maker on the host: the reply shows that owner.
		fi.UID, fi.GID = caller(ctx)
	}
	if vfs.ModeBits(fi.Mode) != perm {
		// The host kept other bits (no fchmod there): the mount holds
		// the mode asked for, as for any create.
		f.Close()
		return nil, nil, vfs.FileInfo{}, true
	}
	fd := int(f.Fd())
	if pt && lowDisk(fd) {
		// A disk nearly full: the daemon must see the writes (see
		// ptMinFree), so they go through a staging.
		f.Close()
		return nil, nil, vfs.FileInfo{}, true
	}
	ch = n.child(ctx, name, p, syscall.S_IFREG, fi)
	cn := ch.Operations().(*node)
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.opens > 0 || cn.ptLive > 0 || cn.stage != nil || cn.deleted {
		// A node the kernel still holds under this name, busy: opened
		// the usual way.
		f.Close()
		return nil, nil, vfs.FileInfo{}, true
	}
	write := flags&syscall.O_ACCMODE != syscall.O_RDONLY
	hd := &handle{n: cn, write: write, append: flags&syscall.O_APPEND != 0, pt: pt}
	cn.ptMode, cn.ptFile, cn.ptChecked, cn.ptPub = ptInPlace, hostFile{f}, true, fi
	cn.version = fileVersion{}
	if pt {
		cn.ptOpen++
		cn.ptLive++
		cn.kpages = false // no other handle, and no FOPEN_KEEP_CACHE
	} else {
		cn.cached++
		cn.kpages = true
	}
	cn.opens++
	if write {
		cn.writers++
	}
	if cn.handles == nil {
		cn.handles = map[*handle]bool{}
	}
	cn.handles[hd] = true
	if !pt {
		return ch, hd, fi, true
	}
	return ch, &ptHandle{handle: hd, fd: fd}, fi, true
}

// publishInPlace reports the writes made to n, a file created in place,
// since the last report: nothing when its size and time did not move;
// EIO when the name no longer holds the file (another writer replaced or
// removed it: the writes are not in the tree). The writes since the
// last report may be any writer's (they share the file, and the kernel
// writes for them unseen), so a refusal is reported to every other open
// writer too, at its next flush, as a discarded staging is (discard):
// none of them can take the refused writes for its own and close
// cleanly. A file unlinked through the mount has nothing to report. self
// is the handle flushing (nil when none). Callers hold n.mu.
func (n *node) publishInPlace(self *handle) syscall.Errno {
	for n.unlinking > 0 {
		// An UNLINK of one of its names through the mount: once it
		// is done (go-fuse's name dropped too), the check sees the
		// file deleted, or at the names it has left.
		n.unlinkCond().Wait()
	}
	if n.ptMode != ptInPlace || !n.ptChecked || n.deleted {
		return 0
	}
	hf, ok := n.ptFile.(hostFile)
	if !ok {
		return 0
	}
	p, stale := n.livePath()
	if stale != 0 {
		return 0 // cut loose by a rename or unlink through the mount
	}
	m := n.m
	m.beginSelf(p, vfs.ChangeWrite)
	fi, wrote, err := m.fsys.(inPlaceCreator).WroteInPlace(m.ctx, p, hf.f, n.ptPub)
	m.endSelf(p, vfs.ChangeWrite, err == nil && wrote)
	if vfs.KindOf(err) == vfs.KindConflict {
		if st, serr := hf.f.Stat(); serr == nil && links(st) > 0 {
			// Not at the name, yet still linked: moved (a rename of it
			// or of a directory above it, through the API, on the host,
			// or through the mount while this check ran), not replaced
			// or removed. Its writes are in the file wherever it went,
			// as on a disk, and the rename reported the file there.
			n.ptPub.Size, n.ptPub.ModTime = st.Size(), st.ModTime()
			return 0
		}
	}
	switch {
	case err == nil && !wrote:
		return 0
	case err == nil:
		n.ptPub = fi
	case vfs.KindOf(err) == vfs.KindConflict:
		// Refused, these writes are done with all the same: a later
		// flush (the release's) reports only what comes after them.
		if hfi, serr := hf.f.Stat(); serr == nil {
			n.ptPub.Size, n.ptPub.ModTime = hfi.Size(), hfi.ModTime()
		}
	}
	// Any other error (the check could not be made: no descriptor left,
	// say) leaves n.ptPub: the next flush, this writer's or another's,
	// checks these writes again rather than taking them for reported.
	if vfs.KindOf(err) == vfs.KindConflict {
		m.log.Printf("write %s: the file was replaced or removed on the host while this writer wrote it in place; its writes are not in the tree (EIO)", p)
		for h := range n.handles {
			if h != self && h.write && h.err == 0 {
				h.err = syscall.EIO
			}
		}
		return syscall.EIO
	}
	if err != nil {
		return m.errno("write", p, err)
	}
	// What the tree says now: an open reuses it, and the host watch's
	// report of these writes then drops nothing (unchanged).
	n.changes.Add(1)
	n.statFI, n.statAt, n.statGen, n.statLong = fi, time.Now(), n.changes.Load(), false
	return 0
}
