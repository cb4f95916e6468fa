package fusemount

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/julyfs/julyfs/third_party/go-fuse/fs"
	"github.com/julyfs/julyfs/third_party/go-fuse/fuse"
	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
)

// node is a file or directory of the mount. Its path is where go-fuse's tree
// places it (Inode.Path), so a rename moves it with everything open on it.
//
// A file node holds a staging of the file (vfs.Stage) from its first write
// (or truncate) until the commit: every handle on the node reads and writes
// that one staging, and commit publishes it whole (StagedFile.Commit).
type node struct {
	fs.Inode
	m *mount

	mu      sync.Mutex
	stage   vfs.StagedFile   // the file's next version, from the first write to the commit
	dirty   bool             // stage has writes not yet committed
	mtime   time.Time        // of the last write into stage
	opens   int              // open handles
	writers int              // open handles that may write
	handles map[*handle]bool // the open handles
	base    vfs.Precondition // the tree's version stage started from; the commit requires it
	poison  syscall.Errno    // a write into stage failed: flush discards stage and returns this
	deleted bool             // unlinked or replaced by a rename: Nlink 0, commits dropped
	// renamedOver counts the renames through the mount that put another
	// file at one of the node's names (see renameVictim).
	renamedOver atomic.Uint32
	last        fuse.Attr   // attributes last reported, for fstat of a deleted file
	version     fileVersion // of the tree's file when last opened (for FOPEN_KEEP_CACHE)
	// kpages says the kernel may hold pages of the file: false for a
	// node the kernel has just got (a new inode) and after an open
	// replied without FOPEN_KEEP_CACHE while no handle was open in
	// cached mode (the kernel drops every page of the inode then), true
	// from the first handle in cached mode on. A reader's open of a
	// node whose pages the kernel does not hold stores the file in the
	// kernel's page cache (see storePages).
	kpages bool
	// unlinking counts the UNLINKs of the node's names through the
	// mount in flight (beginUnlink): a writer's check that its file is
	// still at its name waits for them (publishInPlace), rather than take
	// the name's going for another writer's replace.
	unlinking int
	unlinkC   *sync.Cond // signalled when unlinking drops to 0 (unlinkCond)

	// Passthrough (see passthrough.go).
	cached       int            // open handles in cached mode (not passing through)
	ptMode       ptMode         // what the kernel's backing of the node is
	ptOpen       int            // passthrough handles not yet released
	ptLive       int            // passthrough handles go-fuse may still hold the backing for
	ptFile       vfs.FileReader // ptRead: the host file the backing is
	ptStage      vfs.StagedFile // ptStage: the staging the backing is
	ptCreated    bool           // ptStage: of a file created empty, dirty once not empty
	ptCommitted  bool           // ptStage: the staging was committed (it is the tree's file)
	ptChecked    bool           // ptInPlace: a file created in place or one that held no data, its writes checked and reported at each flush (see createInPlace)
	ptPub        vfs.FileInfo   // ptChecked: the file as its writes were last reported (its size and time)
	ptUnwritten  bool           // ptStage: a copy given ptUnwrittenTime, the kernel not known to have written it (ptMarkUnwritten)
	ptSharedFile bool           // ptInPlace: the host file readers or a committed staging passed through to, shared by writers (ptShareWriter, ptCommitShared)
	ptStaleTo    uint32         // ptInPlace: the caller (thread id) an open or truncate of n answered ESTALE to, its name holding another file (ptStale); valid with ptStaleSet
	ptStaleSet   bool
	ptOwn        hostStamp // ptInPlace through the daemon: the host file after the daemon's last write (see ownWrite)
	ptNoReader   bool      // in a tree of several mounts: the file's readers have no host descriptor
	ptNoStage    bool      // in a tree of several mounts: the file's stagings have no host descriptor

	// changes counts changes to the node's path made through the tree's
	// API; a handle's whole-file copy is stale once it moves on.
	changes atomic.Uint64

	// statFI is what the tree's Stat last said of the file (at statAt,
	// when changes was statGen); open reuses it within the attribute
	// timeout instead of asking again right after a lookup.
	statFI  vfs.FileInfo
	statAt  time.Time
	statGen uint64
	// statLong says statFI was handed to the kernel for ObservedTimeout
	// (every change of it is heard, and bumps changes): open reuses it
	// for as long.
	statLong bool

	// realDirs caches hasRealDirs: 0 unknown, 1 yes, 2 no.
	realDirs atomic.Int32

	// subdirs caches a directory's subdirectory count (for Nlink) and
	// when it was counted.
	subdirs   uint32
	subdirsAt time.Time

	// negs are the names a lookup in this directory answered missing
	// with a long timeout (negative.go). Guarded by mu.
	negs map[string]struct{}
}

var (
	_ fs.InodeEmbedder   = (*node)(nil)
	_ fs.NodeLookuper    = (*node)(nil)
	_ fs.NodeGetattrer   = (*node)(nil)
	_ fs.NodeSetattrer   = (*node)(nil)
	_ fs.NodeReaddirer   = (*node)(nil)
	_ fs.NodeMkdirer     = (*node)(nil)
	_ fs.NodeRmdirer     = (*node)(nil)
	_ fs.NodeUnlinker    = (*node)(nil)
	_ fs.NodeRenamer     = (*node)(nil)
	_ fs.NodeCreater     = (*node)(nil)
	_ fs.NodeOpener      = (*node)(nil)
	_ fs.NodeStatfser    = (*node)(nil)
	_ fs.NodeLseeker     = (*node)(nil)
	_ fs.NodeOnForgetter = (*node)(nil)
	_ fs.NodeSymlinker   = (*node)(nil)
	_ fs.NodeReadlinker  = (*node)(nil)
	_ fs.NodeLinker      = (*node)(nil)
)

// path is the node's absolute path in the tree, for messages and for
// matching against other paths; a node cut loose from the root (see
// livePath) has the path "", which is no path of the tree. Anything that
// asks the tree about the node uses livePath.
func (n *node) path() string {
	p, _ := n.livePath()
	return p
}

// livePath is the node's absolute path in the tree, walking the names
// go-fuse's tree holds up to the root. A node cut loose from the root (the
// name it had, or one of its parents', was replaced by a rename or
// removed) has no path: ESTALE, so the kernel looks the name up again.
// go-fuse's Inode.Path(nil) would give such a node "" and it would be
// taken for the root directory.
func (n *node) livePath() (string, syscall.Errno) {
	// Names from n up, on the stack for a path of up to 16 names; the
	// path is then built in one allocation (every request asks it).
	var buf [16]string
	segs, size := buf[:0], 0
	for in := n.EmbeddedInode(); !in.IsRoot(); {
		name, parent := in.Parent()
		if parent == nil {
			return "", syscall.ESTALE
		}
		segs = append(segs, name)
		size += 1 + len(name)
		in = parent
	}
	if len(segs) == 0 {
		return "/", 0
	}
	var b strings.Builder
	b.Grow(size)
	for i := len(segs) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(segs[i])
	}
	return b.String(), 0
}

// settledPath is called when the tree has nothing at p, n's path: a
// rename through the mount may be moving n or a directory above it (the
// tree has renamed, go-fuse's nodes are not moved yet: an OPEN or a
// GETATTR by node, such as a reopen of /proc/self/fd/N, can arrive in
// between). It waits for the renames in flight (settleNames) and returns
// n's path after them, the count of renames and unlinks done (namesGen),
// and whether to try again: the path differs from p, or a rename or an
// unlink ended since gen (taken before the try that found nothing),
// which may have moved n away and back.
func (n *node) settledPath(p string, gen uint64) (string, uint64, bool) {
	n.m.settleNames()
	g := n.m.namesGen.Load()
	q, stale := n.livePath()
	return q, g, stale == 0 && (q != p || g != gen)
}

// followRenames is called when a try at p, n's path, found nothing, gen
// being namesGen taken before that path was: while a rename through the
// mount moved n meanwhile (settledPath), it tries again at n's new path,
// up to settleTries times, until try (which reports whether it found
// nothing again) does not. It returns the path of the last try.
func (n *node) followRenames(p string, gen uint64, try func(p string) (missing bool)) string {
	for range settleTries {
		q, g, moved := n.settledPath(p, gen)
		if !moved {
			break
		}
		p, gen = q, g
		if !try(p) {
			break
		}
	}
	return p
}

// settleTries bounds how often a request that found nothing at a node's
// path tries again at the path a rename gave it: each try follows one
// rename through the mount that moved the node meanwhile.
const settleTries = 8

// settleNames waits for the renames through the mount in flight: each
// holds m.names for writing through go-fuse's whole request, its move of
// the nodes included (an unlink moves no node: it holds m.names for
// reading). Only a request that found nothing waits; callers hold
// neither a node's mu nor m.names.
func (m *mount) settleNames() {
	m.names.RLock()
	m.names.RUnlock()
}

func (n *node) isDeleted() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.deleted
}

// markDeleted records that the node's name is gone: fstat reports Nlink 0
// and uncommitted writes are dropped, as for an unlinked file on disk.
func (n *node) markDeleted() {
	n.m.displace(n.EmbeddedInode())
	n.mu.Lock()
	defer n.mu.Unlock()
	n.deleted = true
	n.last.Nlink = 0
	if n.dirty {
		n.dirty = false
		n.m.setDirty(n, false)
	}
}

// nameGone records that the child name of n no longer names its file
// (unlinked, or replaced by a rename): a node of a host file with other
// names (see child) lives on through them, any other is deleted (see
// markDeleted). The other names' Nlink moved.
func (n *node) nameGone(name string) {
	ch := n.GetChild(name)
	if ch == nil {
		return
	}
	cn, ok := ch.Operations().(*node)
	if !ok {
		return
	}
	if cn.hostLinked() {
		cn.changes.Add(1)
		n.m.dropLinkedAttrs()
		return
	}
	cn.markDeleted()
	if _, was := n.m.linkedNodes.LoadAndDelete(cn); was {
		n.m.dropLinkedAttrs()
	}
}

// beginUnlink marks the child name of n, when the kernel knows it, as
// having a name removed through the mount until endUnlink, which
// rawFS.Unlink calls once go-fuse has dropped the name too (see
// unlinking). UNLINKs run side by side (rawFS.Unlink holds the mount's
// names for reading only): this is what orders one against a writer's
// check of the same file, and nothing else.
func (n *node) beginUnlink(name string) *node {
	ch := n.GetChild(name)
	if ch == nil {
		return nil
	}
	cn, ok := ch.Operations().(*node)
	if !ok {
		return nil
	}
	cn.mu.Lock()
	cn.unlinking++
	cn.mu.Unlock()
	return cn
}

// endUnlink ends beginUnlink's mark; cn may be nil.
func (cn *node) endUnlink() {
	if cn == nil {
		return
	}
	cn.mu.Lock()
	cn.unlinking--
	if cn.unlinking == 0 && cn.unlinkC != nil {
		cn.unlinkC.Broadcast()
	}
	cn.mu.Unlock()
}

// unlinkCond is n's condition for unlinking; n.mu is held.
func (n *node) unlinkCond() *sync.Cond {
	if n.unlinkC == nil {
		n.unlinkC = sync.NewCond(&n.mu)
	}
	return n.unlinkC
}

// preserve stages the child name of n, if it is open and not staged yet,
// before its path is deleted or replaced: its open handles keep reading and
// writing that private copy, as a file unlinked while open on disk. A
// node of a host file with other names needs none: the file lives on.
func (n *node) preserve(name string) {
	ch := n.GetChild(name)
	if ch == nil {
		return
	}
	cn, ok := ch.Operations().(*node)
	if !ok || cn.hostLinked() {
		return
	}
	cn.mu.Lock()
	defer cn.mu.Unlock()
	cn.preserveLocked()
}

// preserveLocked is preserve for node n, a file with no other names.
// Callers hold n.mu.
func (cn *node) preserveLocked() {
	if cn.opens > 0 && cn.stage == nil && !cn.deleted && cn.ptMode != ptInPlace {
		// (A file written in place keeps its host file, unlinked, as
		// on disk: its handles go on with it.)
		if cn.load() == 0 {
			// A copy, not a change: keep the times last reported.
			cn.mtime = time.Unix(int64(cn.last.Mtime), int64(cn.last.Mtimensec))
		}
	}
}

// OnForget drops what the node holds once the kernel forgot it.
func (n *node) OnForget() {
	n.m.releaseIno(n.StableAttr().Ino)
	n.m.dropHostNode(n.EmbeddedInode())
	n.m.linkedNodes.Delete(n)
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.dirty {
		n.dropStage()
	}
}

// typeOf is the file type the mount shows for what fi describes: a link
// as a link (the kernel follows it), else a directory or a file.
func typeOf(fi vfs.FileInfo) uint32 {
	switch {
	case fi.Link:
		return syscall.S_IFLNK
	case fi.Kind == vfs.KindDir:
		return syscall.S_IFDIR
	case fi.Special != 0:
		return specialType(fi)
	}
	return syscall.S_IFREG
}

// child returns the inode for the entry name of n at path p of type mode
// (typeOf), which fi describes: the one the kernel knows when there is
// one (so an inode keeps its number across a rename), else a new one. On
// a tree with host inode numbers (see hostIno) the number is the host's,
// and another name of a host file the kernel knows (a hard link) is that
// file's node; a file node the host replaced (a new inode at the name)
// with nothing open on it is replaced too, so its number follows, and
// so is one whose open handles only pass through to, or write in place,
// the host file the name held before (ptReplaced): they keep reading
// (and writing) it, as on disk, and the name opens the new one.
func (n *node) child(ctx context.Context, name, p string, mode uint32, fi vfs.FileInfo) *fs.Inode {
	n.mu.Lock()
	delete(n.negs, name) // the name is there now
	n.mu.Unlock()
	ino, host := n.m.hostIno(fi)
	if ch := n.GetChild(name); ch != nil && ch.StableAttr().Mode == mode {
		if cn, ok := ch.Operations().(*node); ok && !cn.isDeleted() &&
			(!host || ch.StableAttr().Ino == ino || mode == syscall.S_IFDIR || cn.busy() && !cn.ptReplaced(fi)) {
			return ch
		}
	}
	if !host {
		return n.NewInode(ctx, &node{m: n.m}, fs.StableAttr{Mode: mode, Ino: n.m.inoFor(p), Gen: n.m.gen.Add(1)})
	}
	if mode == syscall.S_IFDIR {
		return n.NewInode(ctx, &node{m: n.m}, fs.StableAttr{Mode: mode, Ino: ino, Gen: n.m.gen.Add(1)})
	}
	if fi.Nlink > 1 && !fi.Link {
		if ch := n.m.hostNode(ino, mode); ch != nil && n.m.sameHostFile(ch, ino) {
			return ch
		}
	}
	in := n.NewInode(ctx, &node{m: n.m}, fs.StableAttr{Mode: mode, Ino: ino, Gen: n.m.gen.Add(1)})
	n.m.setHostNode(ino, in)
	return in
}

// hostLinked says node n is a host file with several names, as the
// tree last said: one node for all of them (see child).
func (n *node) hostLinked() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return linked(n.statFI) && n.statFI.Ino != 0
}

// busy says file node n has something open on it or writes not yet
// committed: it stays the node of its name.
func (n *node) busy() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.opens > 0 || n.stage != nil || n.ptLive > 0
}

// sameHostFile says the live node in is still, at its path, the host file
// numbered ino (its name may have been given to another file since).
func (m *mount) sameHostFile(in *fs.Inode, ino uint64) bool {
	cn, ok := in.Operations().(*node)
	if !ok || cn.isDeleted() {
		return false
	}
	p, stale := cn.livePath()
	if stale != 0 {
		return false
	}
	fi, err := m.stat(p)
	if err != nil {
		return false
	}
	got, ok := m.hostIno(fi)
	return ok && got == ino
}

// fill reports the attributes of the node given what the tree says of its
// path: a file being written reports its buffer, a directory its Nlink.
func (n *node) fill(fi vfs.FileInfo, out *fuse.Attr) {
	if fi.Link {
		// A link's size is its target's length, as lstat says.
		target, err := vfs.Readlink(n.m.ctx, n.m.fsys, fi.Path)
		if err != nil {
			target = ""
		}
		fi.Size = int64(len(target))
	}
	n.mu.Lock()
	if n.stage != nil && fi.Kind != vfs.KindDir && !fi.Link && !n.ptEmptyCreated() && !n.ptUnwrittenNow() {
		fi.Kind = vfs.KindFile
		fi.Size = n.stage.Size()
		fi.ModTime = n.mtime
		if size, mtime, ok := n.ptStat(); ok {
			// The kernel writes the staging: its own size and time.
			fi.Size, fi.ModTime = size, mtime
		}
	}
	if !fi.HasMode && fi.Mode == 0 && (n.statFI.HasMode || n.statFI.Mode != 0) && n.statFI.Kind == fi.Kind {
		// A file being written keeps the mode and owner the tree last
		// reported.
		fi.Mode, fi.UID, fi.GID, fi.HasMode = n.statFI.Mode, n.statFI.UID, n.statFI.GID, n.statFI.HasMode
	}
	n.mu.Unlock()
	n.m.attr(fi, out)
	if fi.Kind == vfs.KindDir && !fi.Link {
		out.Nlink = 2 + n.subdirCount(fi.Path)
	}
	n.mu.Lock()
	n.last = *out
	n.mu.Unlock()
}

// subdirCount is the number of subdirectories of directory p, counted by
// List and cached for the attribute timeout.
func (n *node) subdirCount(p string) uint32 {
	n.mu.Lock()
	if !n.subdirsAt.IsZero() && time.Since(n.subdirsAt) < n.m.opts.attrTimeout() {
		c := n.subdirs
		n.mu.Unlock()
		return c
	}
	n.mu.Unlock()
	entries, err := n.m.list(p)
	if err != nil {
		return 0
	}
	n.countSubdirs(entries)
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.subdirs
}

// forgetSubdirs drops the cached subdirectory count, after an operation
// through the mount that adds or removes a subdirectory of n, so the next
// Getattr counts again (the kernel drops the parent's attributes then).
func (n *node) forgetSubdirs() {
	n.mu.Lock()
	n.subdirsAt = time.Time{}
	n.mu.Unlock()
}

func (n *node) countSubdirs(entries []vfs.DirEntry) {
	var c uint32
	for _, e := range entries {
		if e.Kind == vfs.KindDir && !e.Link {
			c++
		}
	}
	n.mu.Lock()
	n.subdirs, n.subdirsAt = c, time.Now()
	n.mu.Unlock()
}

// maxNameLen is the longest name the mount looks up (NAME_MAX).
const maxNameLen = 255

// Lookup finds the child name of directory n; a name longer than
// NAME_MAX is ENAMETOOLONG.
func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if len(name) > maxNameLen {
		return nil, syscall.ENAMETOOLONG // as a disk says, not ENOENT
	}
	dir, stale := n.livePath()
	if stale != 0 {
		return nil, stale
	}
	p := vfs.Join(dir, name)
	gen := n.m.hostGen.Load()
	fi, err := n.m.stat(p)
	if err != nil {
		return nil, n.m.errno("lookup", p, err)
	}
	if fi.Kind == vfs.KindMissing && !fi.Link && fi.Special == 0 {
		n.longNegative(name, p, gen, out)
		return nil, syscall.ENOENT
	}
	return n.lookedUp(ctx, name, p, fi, gen, out), 0
}

// lookedUp answers a lookup of name (at p) in directory n with fi, what
// the tree has there, asked after m.hostGen was gen: the child's inode,
// its attributes and timeouts in out.
func (n *node) lookedUp(ctx context.Context, name, p string, fi vfs.FileInfo, gen uint64, out *fuse.EntryOut) *fs.Inode {
	ch := n.child(ctx, name, p, typeOf(fi), fi)
	cn := ch.Operations().(*node)
	cn.remember(fi)
	cn.fill(fi, &out.Attr)
	cn.entryTimeouts(fi, gen, out)
	return ch
}

// entryTimeouts sets out's timeouts, for node n, to ObservedTimeout when
// every change of fi is heard (see observed); gen is m.hostGen from
// before fi was asked.
func (n *node) entryTimeouts(fi vfs.FileInfo, gen uint64, out *fuse.EntryOut) {
	if linked(fi) {
		out.SetAttrTimeout(linkedTimeout)
		return
	}
	if n.m.observed(fi, gen) {
		out.SetEntryTimeout(ObservedTimeout)
		out.SetAttrTimeout(ObservedTimeout)
		n.setLong()
	}
}

// setLong records that the attributes last remembered were handed to the
// kernel for ObservedTimeout.
func (n *node) setLong() {
	n.mu.Lock()
	n.statLong = true
	n.mu.Unlock()
}

// remember records fi, just answered by the tree's Stat, for recent.
func (n *node) remember(fi vfs.FileInfo) {
	if linked(fi) {
		n.m.linkedNodes.Store(n, struct{}{})
	} else {
		n.m.linkedNodes.Delete(n)
	}
	gen := n.changes.Load()
	n.mu.Lock()
	n.statFI, n.statAt, n.statGen, n.statLong = fi, time.Now(), gen, false
	n.mu.Unlock()
}

// recent returns what the tree's Stat said of file n if that was within
// the attribute timeout (the kernel trusts attributes that long anyway),
// or the kernel was given it for ObservedTimeout (statLong), and no change
// of the path was reported since.
func (n *node) recent() (vfs.FileInfo, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.statAt.IsZero() || n.statFI.Kind != vfs.KindFile || n.statGen != n.changes.Load() ||
		!n.statLong && time.Since(n.statAt) >= n.m.opts.attrTimeout() {
		return vfs.FileInfo{}, false
	}
	return n.statFI, true
}

// Getattr reports the node's attributes. A deleted file that is still open
// reports what it last reported, with Nlink 0.
func (n *node) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.mu.Lock()
	if n.deleted {
		out.Attr = n.last
		if fd, ok := n.ptInPlaceFd(); ok {
			// Written in place: the host file, unlinked, is the file.
			var st unix.Stat_t
			if unix.Fstat(fd, &st) == nil {
				out.Size, out.Blocks = uint64(st.Size), uint64(st.Blocks)
				mtime := time.Unix(st.Mtim.Unix())
				out.SetTimes(nil, &mtime, &mtime)
			}
			n.mu.Unlock()
			return 0
		}
		if n.stage != nil {
			// Still open and written to after the unlink.
			out.Size = uint64(n.stage.Size())
			out.Blocks = (out.Size + 511) / 512
			out.SetTimes(nil, &n.mtime, &n.mtime)
		}
		n.mu.Unlock()
		return 0
	}
	if n.stage != nil && !n.ptEmptyCreated() && !n.ptUnwrittenNow() {
		n.mu.Unlock()
		n.fill(vfs.FileInfo{Path: n.path(), Kind: vfs.KindFile}, &out.Attr)
		return 0
	}
	n.mu.Unlock()
	ngen := n.m.namesGen.Load() // before the path: see settledPath
	p, stale := n.livePath()
	if stale != 0 {
		return stale
	}
	gen := n.m.hostGen.Load()
	fi, err := n.m.stat(p)
	missing := func() bool { return err == nil && fi.Kind == vfs.KindMissing && !fi.Link && fi.Special == 0 }
	if missing() {
		p = n.followRenames(p, ngen, func(p string) bool {
			fi, err = n.m.stat(p)
			return missing()
		})
	}
	if err != nil {
		return n.m.errno("getattr", p, err)
	}
	if missing() {
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.opens > 0 {
			out.Attr = n.last
			out.Nlink = 0
			return 0
		}
		return syscall.ENOENT
	}
	n.remember(fi)
	n.fill(fi, &out.Attr)
	if linked(fi) {
		out.SetTimeout(linkedTimeout)
	}
	if n.m.observed(fi, gen) {
		out.SetTimeout(ObservedTimeout)
		n.setLong()
	}
	return 0
}

// Setattr truncates, and sets the mode and the modification time through
// the tree (vfs.ModeSetter, vfs.TimeSetter: on the host for local:, in
// memory for temp:), so they persist as the tree's own; a tree without
// them answers ENOTSUP, never a change only the mount would remember.
// chown to the owner shown changes nothing and succeeds; to another owner
// it goes to the tree (vfs.OwnerSetter, vfs.LinkOwnerSetter: fchownat on
// the host for local:, after the kernel checked the caller may), is
// ENOTSUP for a host file of a tree that cannot, and is held by the mount
// on a tree with no owners, as is an access time (no tree keeps one).
func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	errno := n.setattr(ctx, f, in, out)
	// go-fuse leaves the reply's inode number to the node: without it
	// the kernel takes 0 as the number after chmod, chown or utimes.
	out.Ino = n.StableAttr().Ino
	return errno
}

func (n *node) setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if n.m.opts.ReadOnly {
		return syscall.EROFS
	}
	if n.isDeleted() {
		return n.setattrDeleted(ctx, f, in, out)
	}
	p, stale := n.livePath()
	if stale != 0 {
		return stale
	}
	link := n.StableAttr().Mode == syscall.S_IFLNK
	kill, chown := setattrKills(in)
	if size, ok := in.GetSize(); ok {
		if n.IsDir() {
			return syscall.EISDIR
		}
		if errno := n.truncate(int64(size), asHandle(f), in.Caller.Pid); errno != 0 {
			return errno
		}
	}
	if mode, ok := in.GetMode(); ok && !link { // Linux has no lchmod
		if errno := n.setMode(p, mode); errno != 0 {
			return errno
		}
	}
	if mtime, ok := in.GetMTime(); ok {
		set := vfs.SetModTime
		if link {
			set = vfs.SetLinkModTime // lutimes: the link's own time
		}
		// Writes staged before the utimes land first, else their
		// commit would give the file a new time (cp -p sets it on the
		// open file before closing it).
		if errno := n.commit(); errno != 0 {
			return errno
		}
		op := n.metaReport(link)
		n.m.beginSelf(p, op)
		err := set(n.m.ctx, n.m.fsys, p, mtime)
		n.m.endSelf(p, op, err == nil)
		switch {
		case errors.Is(err, errors.ErrUnsupported):
			return syscall.ENOTSUP
		case err != nil:
			return n.m.errno("utimes", p, err)
		}
		n.changes.Add(1) // a copy read at the old version is stale
	}
	uid, hasUID := in.GetUID()
	gid, hasGID := in.GetGID()
	atime, hasAtime := in.GetATime()
	gid0, hasGid0 := uint32(0), false // the group before a chown
	if hasUID || hasGID || hasAtime {
		var cur fuse.AttrOut
		if errno := n.Getattr(ctx, f, &cur); errno != 0 {
			return errno
		}
		gid0, hasGid0 = cur.Gid, true
		if hasUID && uid == cur.Uid {
			hasUID = false
		}
		if hasGID && gid == cur.Gid {
			hasGID = false
		}
		held := false // the owner is held by the mount (a tree without owners)
		if hasUID || hasGID {
			if errno := n.setOwner(p, link, hasUID, uid, hasGID, gid); errno == syscall.ENOTSUP {
				if fi, err := n.m.fsys.Stat(n.m.ctx, p); err == nil && (fi.HasMode || fi.Link) {
					return syscall.ENOTSUP
				}
				held = true
			} else if errno != 0 {
				return errno
			}
		}
		n.m.setMeta(p, func(md *meta) {
			if held {
				if !md.hasOwner {
					md.uid, md.gid, md.hasOwner = cur.Uid, cur.Gid, true
				}
				if hasUID {
					md.uid = uid
				}
				if hasGID {
					md.gid = gid
				}
			}
			if hasAtime {
				md.atime = atime
			}
		})
	}
	if errno := n.Getattr(ctx, f, out); errno != 0 || !kill {
		return errno
	}
	if !hasGid0 {
		gid0 = out.Gid
	}
	return n.killPrivs(ctx, f, p, out, chown, gid0)
}

// setOwner gives p (a link itself when link) the owner uid and the
// group gid through the tree (vfs.OwnerSetter, vfs.LinkOwnerSetter: on
// the host for local:), those whose has flag is set; the kernel already
// checked that the caller may (default_permissions). ENOTSUP when the
// tree cannot. An owner the mount held for p is dropped: the tree's is
// now the one shown.
func (n *node) setOwner(p string, link, hasUID bool, uid uint32, hasGID bool, gid uint32) syscall.Errno {
	u, g := -1, -1
	if hasUID {
		u = int(uid)
	}
	if hasGID {
		g = int(gid)
	}
	set := vfs.SetOwner
	if link {
		set = vfs.SetLinkOwner
	}
	op := n.metaReport(link)
	n.m.beginSelf(p, op)
	err := set(n.m.ctx, n.m.fsys, p, u, g)
	n.m.endSelf(p, op, err == nil)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return syscall.ENOTSUP
	case err != nil:
		return n.m.errno("chown", p, err)
	}
	n.m.setMeta(p, func(md *meta) { md.uid, md.gid, md.hasOwner = 0, 0, false })
	n.changes.Add(1)
	if fi, err := n.m.fsys.Stat(n.m.ctx, p); err == nil {
		n.remember(fi)
	}
	return 0
}

// setattrDeleted is Setattr on a file whose name is gone (unlinked or
// replaced by a rename) while it is still open: as on disk, ftruncate,
// fchmod, futimes and fchown keep working on the open file. Its data lives
// in the node's private staging and its attributes in the node, neither of
// which reaches the tree again.
func (n *node) setattrDeleted(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if size, ok := in.GetSize(); ok {
		if n.IsDir() {
			return syscall.EISDIR
		}
		if errno := n.truncate(int64(size), asHandle(f), in.Caller.Pid); errno != 0 {
			return errno
		}
	}
	n.mu.Lock()
	if mode, ok := in.GetMode(); ok && n.StableAttr().Mode != syscall.S_IFLNK {
		n.last.Mode = n.last.Mode&syscall.S_IFMT | mode&0o7777
	}
	if mtime, ok := in.GetMTime(); ok {
		n.mtime = mtime
		n.last.SetTimes(nil, &mtime, nil)
		if fd, ok := n.ptInPlaceFd(); ok {
			unix.Futimes(fd, []unix.Timeval{unix.NsecToTimeval(time.Now().UnixNano()), unix.NsecToTimeval(mtime.UnixNano())})
		}
	}
	if atime, ok := in.GetATime(); ok {
		n.last.SetTimes(&atime, nil, nil)
	}
	if kill, chown := setattrKills(in); kill && killable(n.last.Mode&syscall.S_IFMT, chown) {
		n.killLast(ctx, chown) // with the group before a chown, as Linux
	}
	if uid, ok := in.GetUID(); ok {
		n.last.Uid = uid
	}
	if gid, ok := in.GetGID(); ok {
		n.last.Gid = gid
	}
	n.mu.Unlock()
	return n.Getattr(context.Background(), f, out)
}

// metaReport is the report the tree makes of a chmod, utimes or chown of
// n (link: of a link's own time or owner): a write of a file; nothing for
// a directory, a link itself or a special file (local:, temp:).
func (n *node) metaReport(link bool) vfs.ChangeOp {
	if !link && n.StableAttr().Mode&syscall.S_IFMT == syscall.S_IFREG {
		return vfs.ChangeWrite
	}
	return 0
}

// setMode sets the mode of p through the tree (vfs.ModeSetter), so the
// change outlives the mount and holds for every program: ENOTSUP when the
// tree cannot. A directory only the mount holds (mkdir on a tree without
// directories) keeps its mode in the mount with it.
func (n *node) setMode(p string, mode uint32) syscall.Errno {
	if n.m.isPending(p) {
		if tf, err := n.m.fsys.Stat(n.m.ctx, p); err == nil && tf.Kind == vfs.KindMissing {
			n.m.setMeta(p, func(md *meta) { md.mode = mode & 0o7777 })
			return 0
		}
	}
	op := n.metaReport(false)
	n.m.beginSelf(p, op)
	err := vfs.SetMode(n.m.ctx, n.m.fsys, p, vfs.FileModeOf(mode))
	n.m.endSelf(p, op, err == nil)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return syscall.ENOTSUP
	case err != nil:
		return n.m.errno("chmod", p, err)
	}
	n.m.setMeta(p, func(md *meta) { md.mode = 0 })
	if fi, err := n.m.fsys.Stat(n.m.ctx, p); err == nil {
		n.remember(fi) // a file being written shows the new mode too
	}
	return 0
}

// createMode gives p, just made through the mount by a caller asking for
// perm, that mode: through the tree when the tree gave it another
// (vfs.ModeSetter); a tree without modes, or a directory only the mount
// holds, gets it held by the mount (see the package doc). def is the
// mode shown when the tree reports none.
//
// It returns what the tree's Stat said of p when the mode was already
// right (ok), so a caller need not ask again.
func (n *node) createMode(p string, perm, def uint32) (fi vfs.FileInfo, ok bool) {
	cur := def
	fi, err := n.m.fsys.Stat(n.m.ctx, p)
	if err == nil && (fi.HasMode || fi.Mode != 0) {
		cur = vfs.ModeBits(fi.Mode)
	}
	if perm == cur {
		return fi, err == nil
	}
	err = vfs.SetMode(n.m.ctx, n.m.fsys, p, vfs.FileModeOf(perm))
	if err == nil {
		return vfs.FileInfo{}, false
	}
	if !errors.Is(err, errors.ErrUnsupported) && !errors.Is(err, vfs.ErrNotFound) {
		n.m.log.Printf("chmod %s at create: %v; the mount holds the mode", p, err)
	}
	n.m.setMeta(p, func(md *meta) { md.mode = perm })
	return vfs.FileInfo{}, false
}

// Symlink makes a link through the tree (vfs.Symlinker: on the host for
// local:, in memory for temp:); ENOTSUP where the tree has no links.
func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if n.m.opts.ReadOnly {
		return nil, syscall.EROFS
	}
	dir, stale := n.livePath()
	if stale != 0 {
		return nil, stale
	}
	p := vfs.Join(dir, name)
	n.m.beginSelf(p, vfs.ChangeWrite)
	err := vfs.Symlink(n.m.ctx, n.m.fsys, target, p)
	n.m.endSelf(p, vfs.ChangeWrite, err == nil)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return nil, syscall.ENOTSUP
	case err != nil:
		return nil, n.m.errno("symlink", p, err)
	}
	n.m.forget(p)
	gen := n.m.hostGen.Load()
	fi, err := n.m.stat(p)
	if err != nil {
		return nil, n.m.errno("symlink", p, err)
	}
	fi.Link = true
	ch := n.child(ctx, name, p, syscall.S_IFLNK, fi)
	cn := ch.Operations().(*node)
	cn.remember(fi)
	cn.fill(fi, &out.Attr)
	cn.entryTimeouts(fi, gen, out)
	return ch, 0
}

// Readlink answers a link's target through the tree (vfs.Symlinker). The
// kernel follows it itself, as for a link on disk, with the caller's own
// rights; the tree's verbs never follow one out of its root.
func (n *node) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	p, stale := n.livePath()
	if stale != 0 {
		return nil, stale
	}
	target, err := vfs.Readlink(n.m.ctx, n.m.fsys, p)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return nil, syscall.EINVAL
	case err != nil:
		return nil, n.m.errno("readlink", p, err)
	}
	return []byte(target), 0
}

// Readdir lists directory n as the tree's List yields it, after "." and
// "..": links (DirEntry.Link) as links, whatever they lead to.
func (n *node) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	p, stale := n.livePath()
	if stale != 0 {
		return nil, stale
	}
	entries, err := n.m.list(p)
	if err != nil {
		return nil, n.m.errno("readdir", p, err)
	}
	n.countSubdirs(entries)
	parentIno := uint64(fuse.FUSE_ROOT_ID)
	if _, parent := n.Parent(); parent != nil {
		parentIno = parent.StableAttr().Ino
	}
	host := n.hostEntries(p)
	out := make([]fuse.DirEntry, 0, len(entries)+2)
	out = append(out,
		fuse.DirEntry{Name: ".", Mode: syscall.S_IFDIR, Ino: n.StableAttr().Ino},
		fuse.DirEntry{Name: "..", Mode: syscall.S_IFDIR, Ino: parentIno})
	for _, e := range entries {
		name := vfs.Base(e.Path)
		mode := uint32(syscall.S_IFREG)
		switch {
		case e.Link:
			// Every link, whatever it leads to (a directory, nothing,
			// outside the root), as on disk: ls -l shows it, find
			// lists it, rm and cp -a see it.
			mode = syscall.S_IFLNK
		case e.Kind == vfs.KindDir:
			mode = syscall.S_IFDIR
		}
		out = append(out, n.dirEntry(name, e.Path, mode, host[name]))
		delete(host, name)
	}
	if len(host) > 0 {
		// What List leaves out: the special files (vfs.HostLister:
		// FIFOs, sockets and devices on the host for local:), listed
		// with their types in name order, as ls shows them on disk.
		for name, fi := range host {
			if t := specialType(fi); t != 0 {
				out = append(out, n.dirEntry(name, fi.Path, t, fi))
			}
		}
		slices.SortStableFunc(out[2:], func(a, b fuse.DirEntry) int { return strings.Compare(a.Name, b.Name) })
	}
	return fs.NewListDirStream(out), 0
}

// hostEntries is directory p as the host has it (vfs.HostLister), by
// name; nil for a tree of no host files.
func (n *node) hostEntries(p string) map[string]vfs.FileInfo {
	list, err := vfs.ListHost(n.m.ctx, n.m.fsys, p)
	if err != nil || len(list) == 0 {
		return nil
	}
	host := make(map[string]vfs.FileInfo, len(list))
	for _, fi := range list {
		host[vfs.Base(fi.Path)] = fi
	}
	return host
}

// dirEntry is the listing's entry for the child name of n at p, of type
// mode, which the host lists as fi (if it does): the number of the node
// the kernel knows there, else the one a lookup would give it (the
// host's, see hostIno; else p's hash).
func (n *node) dirEntry(name, p string, mode uint32, fi vfs.FileInfo) fuse.DirEntry {
	if ch := n.GetChild(name); ch != nil && ch.StableAttr().Mode == mode {
		return fuse.DirEntry{Name: name, Mode: mode, Ino: ch.StableAttr().Ino}
	}
	if ino, ok := n.m.hostIno(fi); ok {
		return fuse.DirEntry{Name: name, Mode: mode, Ino: ino}
	}
	return fuse.DirEntry{Name: name, Mode: mode, Ino: inoOf(p)}
}

// Mkdir makes an empty directory: in the tree when it can (vfs.DirMaker:
// a local: mount makes it on the host at once); otherwise the mount holds
// it until rmdir, as the contract has no mkdir and the tree learns of the
// directory only when a file is written under it.
func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if n.m.opts.ReadOnly {
		return nil, syscall.EROFS
	}
	dir, stale := n.livePath()
	if stale != 0 {
		return nil, stale
	}
	p := vfs.Join(dir, name)
	fi, err := n.m.stat(p)
	if err != nil {
		return nil, n.m.errno("mkdir", p, err)
	}
	if fi.Kind != vfs.KindMissing {
		return nil, syscall.EEXIST
	}
	now := time.Now()
	// The host watch's report of the directory is the mount's own when
	// the watch holds the directory before the reply (watchMade).
	n.m.expectEntry(p, true)
	switch err := vfs.MakeDir(n.m.ctx, n.m.fsys, p); {
	case errors.Is(err, errors.ErrUnsupported):
		n.m.unexpectEntry(p, true)
		n.m.addPending(p, now)
	case err != nil:
		n.m.doneEntry(p, true, false)
		return nil, n.m.errno("mkdir", p, err)
	case !n.m.watchMade(p):
		n.m.unexpectEntry(p, true)
	}
	n.forgetSubdirs()
	n.createMode(p, mode&0o7777, 0o755)
	n.m.ownByCaller(ctx, p)
	fi = vfs.FileInfo{Path: p, Kind: vfs.KindDir, ModTime: now}
	gen := n.m.hostGen.Load()
	known := false
	if tf, err := n.m.stat(p); err == nil && tf.Kind == vfs.KindDir {
		fi, known = tf, true
	}
	ch := n.child(ctx, name, p, syscall.S_IFDIR, fi)
	cn := ch.Operations().(*node)
	cn.remember(fi)
	cn.fill(fi, &out.Attr)
	if known {
		cn.entryTimeouts(fi, gen, out)
	}
	return ch, 0
}

// Rmdir removes an empty directory: from the tree when it can
// (vfs.DirRemover: a local: mount removes it from the host); otherwise one
// the mount holds is dropped, and one the tree still reports (an empty
// directory of a tree that cannot remove it) is hidden while it stays
// empty.
func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	if n.m.opts.ReadOnly {
		return syscall.EROFS
	}
	dir, stale := n.livePath()
	if stale != 0 {
		return stale
	}
	p := vfs.Join(dir, name)
	if n.hasRealDirs() {
		// The tree's own rmdir decides (ENOTEMPTY, ENOTDIR, not found).
		err := n.m.entryChange(p, false, func() error { return vfs.RemoveDir(n.m.ctx, n.m.fsys, p) })
		switch {
		case err == nil:
			n.m.removePending(p)
			n.m.forget(p)
			n.forgetSubdirs()
			return 0
		case errors.Is(err, syscall.ENOTEMPTY):
			return syscall.ENOTEMPTY
		case errors.Is(err, syscall.ENOTDIR):
			return syscall.ENOTDIR
		case !errors.Is(err, errors.ErrUnsupported):
			return n.m.errno("rmdir", p, err)
		}
	}
	fi, err := n.m.stat(p)
	if err != nil {
		return n.m.errno("rmdir", p, err)
	}
	switch fi.Kind {
	case vfs.KindMissing:
		// Gone already: the tree dropped it with its last file.
		return 0
	case vfs.KindFile:
		return syscall.ENOTDIR
	}
	entries, err := n.m.list(p)
	if err != nil {
		return n.m.errno("rmdir", p, err)
	}
	if len(entries) > 0 {
		return syscall.ENOTEMPTY
	}
	n.m.removePending(p)
	if tf, err := n.m.fsys.Stat(n.m.ctx, p); err == nil && tf.Kind == vfs.KindDir {
		switch err := vfs.RemoveDir(n.m.ctx, n.m.fsys, p); {
		case errors.Is(err, errors.ErrUnsupported):
			n.m.hide(p)
		case err != nil:
			return n.m.errno("rmdir", p, err)
		}
	}
	n.m.forget(p)
	n.m.holdParents(p)
	n.forgetSubdirs()
	return 0
}

// Unlink deletes a file through the tree.
func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	if n.m.opts.ReadOnly {
		return syscall.EROFS
	}
	dir, stale := n.livePath()
	if stale != 0 {
		return stale
	}
	p := vfs.Join(dir, name)
	cn := n.beginUnlink(name)
	if c := cancelOf(ctx); cn == nil || c == nil || !n.m.unlinkEnding.put(c, cn) {
		defer cn.endUnlink()
	} // else ended by rawFS.Unlink, after go-fuse drops the name
	n.preserve(name)
	if err := n.m.entryChange(p, false, func() error { return n.m.remove(p) }); err != nil {
		return n.m.errno("unlink", p, err)
	}
	n.nameGone(name)
	n.m.forget(p)
	if !n.hasRealDirs() {
		n.m.holdParents(p)
	}
	return 0
}

// hasRealDirs reports whether the tree has directories of its own at
// directory n (vfs.MakeDir of n, which is there, succeeds: local:), so
// that a directory stays when its last file goes and the mount need not
// hold it. The answer is cached on the node; one that cannot be had (n
// vanished or was swapped on the host) is not.
func (n *node) hasRealDirs() bool {
	switch n.realDirs.Load() {
	case 1:
		return true
	case 2:
		return false
	}
	if _, ok := n.m.fsys.(vfs.DirMaker); !ok {
		n.realDirs.Store(2)
		return false
	}
	p, stale := n.livePath()
	if stale != 0 {
		return false // asked again next time
	}
	switch err := vfs.MakeDir(n.m.ctx, n.m.fsys, p); {
	case err == nil:
		n.realDirs.Store(1)
		return true
	case errors.Is(err, errors.ErrUnsupported):
		n.realDirs.Store(2)
	}
	return false
}

// Create makes an empty file through the tree (unless one appeared there
// meanwhile, which is then opened) and opens it.
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if n.m.opts.ReadOnly {
		return nil, nil, 0, syscall.EROFS
	}
	dir, stale := n.livePath()
	if stale != 0 {
		return nil, nil, 0, stale
	}
	p := vfs.Join(dir, name)
	gen0 := n.m.hostGen.Load()
	var err error
	switch ch, h, fi, made := n.createInPlace(ctx, name, p, flags, mode&0o7777); {
	case h != nil:
		cn := ch.Operations().(*node)
		cn.remember(fi)
		cn.fill(fi, &out.Attr)
		cn.entryTimeouts(fi, gen0, out)
		// No FLUSH at its closes (FOPEN_NOFLUSH): the kernel or the
		// daemon wrote the host file as the writes came, so a close has
		// nothing to commit; the release checks and reports them
		// (publishInPlace). One request fewer for every file a tar, a
		// git checkout or a compiler makes.
		return ch, h, fuse.FOPEN_NOFLUSH, 0
	case !made:
		// Not created in place: through the tree (which may find
		// the name taken).
		err = n.m.entryChange(p, true, func() error { return n.m.create(p) })
	}
	created := err == nil
	if err != nil {
		if vfs.KindOf(err) != vfs.KindConflict {
			return nil, nil, 0, n.m.errno("create", p, err)
		}
		if flags&syscall.O_EXCL != 0 {
			return nil, nil, 0, syscall.EEXIST
		}
		fi, err := n.m.stat(p)
		if err != nil {
			return nil, nil, 0, n.m.errno("create", p, err)
		}
		if fi.Kind == vfs.KindDir {
			return nil, nil, 0, syscall.EISDIR
		}
	}
	gen := n.m.hostGen.Load()
	var fi vfs.FileInfo
	known := false // fi is the tree's Stat of the file just created
	if created {
		n.m.forget(p)
		// The owner first: a chown on the host clears the setuid and
		// setgid bits the mode then sets, and the Stat createMode
		// answers shows the owner.
		n.m.ownByCaller(ctx, p)
		fi, known = n.createMode(p, mode&0o7777, 0o644)
		known = known && fi.Kind == vfs.KindFile
	}
	hint := fi // for the node's inode number
	if !known {
		hint, _ = n.m.stat(p)
	}
	ch := n.child(ctx, name, p, syscall.S_IFREG, hint)
	cn := ch.Operations().(*node)
	at := ""
	if created {
		at = p
	}
	h, errno := cn.open(flags, at, callerPid(ctx))
	if errno != 0 {
		return nil, nil, 0, errno
	}
	if !created {
		cn.killAsked(ctx) // O_TRUNC of the file found there
	}
	if !known {
		gen = n.m.hostGen.Load()
		if fi, err = n.m.stat(p); err != nil {
			return nil, nil, 0, n.m.errno("create", p, err)
		}
	}
	cn.remember(fi)
	cn.fill(fi, &out.Attr)
	cn.entryTimeouts(fi, gen, out)
	return ch, h.fuseHandle(), 0, 0
}

// Statfs reports fixed, non-zero capacity figures: a tree has no notion of
// blocks or free space, and tools divide by the block size.
func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	const blocks = 1 << 30 // 4 TiB of 4 KiB blocks
	out.Bsize = 4096
	out.Frsize = 4096
	out.Blocks = blocks
	out.Bfree = blocks / 2
	out.Bavail = blocks / 2
	out.Files = 1 << 24
	out.Ffree = 1 << 23
	out.NameLen = 255
	return 0
}

// Lseek answers SEEK_DATA and SEEK_HOLE: files have no holes, so data is
// everywhere before the end and the only hole is at the end.
func (n *node) Lseek(ctx context.Context, f fs.FileHandle, off uint64, whence uint32) (uint64, syscall.Errno) {
	var a fuse.AttrOut
	if errno := n.Getattr(ctx, f, &a); errno != 0 {
		return 0, errno
	}
	size := a.Size
	switch whence {
	case unixSeekData:
		if off >= size {
			return 0, syscall.ENXIO
		}
		return off, 0
	case unixSeekHole:
		if off > size {
			return 0, syscall.ENXIO
		}
		return size, 0
	}
	return 0, syscall.EINVAL
}

// SEEK_DATA and SEEK_HOLE (linux/fs.h).
const (
	unixSeekData = 3
	unixSeekHole = 4
)
