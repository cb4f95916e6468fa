package fusemount

import (
	"context"
	"errors"
	"hash/fnv"
	iofs "io/fs"
	"log"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/julyfs/julyfs/vfs"
)

// mount is the state of one mounted tree: the vfs.FileSystem it serves and
// what the mount holds that the contract cannot store (directories made by
// mkdir with nothing under them yet, permission bits, owners and explicit
// timestamps).
type mount struct {
	fsys vfs.FileSystem
	opts Options
	log  *log.Logger
	// ctx is passed to every backend call. FUSE interrupts are not
	// honoured (a Go client is interrupted by every SIGURG), so an
	// operation runs to completion; ctx is cancelled when the mount is torn
	// down.
	ctx      context.Context
	uid, gid uint32
	start    time.Time
	gen      atomic.Uint64 // last StableAttr.Gen handed out

	mu sync.Mutex
	// pending holds directories made by mkdir, by parent then name, with
	// their creation time. A pending directory shows in Stat and List
	// merged with the tree, and stays until rmdir (or rename) even once
	// files are written under it, so that emptying it does not make it
	// vanish.
	pending map[string]map[string]time.Time
	// hidden holds directories the tree still reports (a host directory
	// with nothing in it) that rmdir removed; they stay hidden while empty.
	hidden map[string]bool
	// meta holds attributes set by chmod, chown and utimes, by path.
	meta map[string]meta
	// dirty holds the file nodes with writes not yet committed.
	dirty map[*node]bool
	// self counts writes and deletes the mount itself has in flight, by
	// path, so their change notifications do not invalidate what the
	// kernel already knows.
	self map[string]int
	// selfTrees counts the mount's own renames in flight, by the paths
	// of what moves: every path under them is the mount's own change.
	selfTrees map[string]int
	// inv sends kernel invalidations; nil until the mount is live.
	inv *invalidator
	// watched says the tree reports its changes (vfs.Notifier).
	watched atomic.Bool
	// displaced holds the inode numbers of live nodes that no longer sit
	// at the path their number hashes (moved by a rename, or unlinked
	// while open), so a new file at that path gets another number: two
	// live files never share an st_ino (mv and cp -r would take them for
	// one file).
	displaced map[uint64]bool

	ptState
}

// meta is what the mount holds for a path where the tree cannot: the
// mode asked at create or mkdir on a tree without modes (or of a directory
// only the mount holds), owners set by chown on a tree without owners (or
// shown to the caller under AllowOther), and access times. It lives in
// memory for the mount's lifetime. Modes and modification times set by
// chmod and utimes go to the tree (vfs.ModeSetter, vfs.TimeSetter).
type meta struct {
	mode     uint32 // permission bits; 0 means the default
	uid, gid uint32
	hasOwner bool
	atime    time.Time // zero means the modification time
}

func newMount(ctx context.Context, fsys vfs.FileSystem, opts Options) *mount {
	return &mount{
		fsys:    fsys,
		opts:    opts,
		log:     opts.logger(),
		ctx:     ctx,
		uid:     uint32(syscall.Getuid()),
		gid:     uint32(syscall.Getgid()),
		start:   time.Now(),
		pending: map[string]map[string]time.Time{},
		hidden:  map[string]bool{},
		meta:    map[string]meta{},
		dirty:   map[*node]bool{},
		self:    map[string]int{},

		selfTrees: map[string]int{},
		displaced: map[uint64]bool{},
		ptState:   ptState{ptReleasing: map[<-chan struct{}]*node{}},
	}
}

// errno converts err for op on path; see toErrno.
func (m *mount) errno(op, path string, err error) syscall.Errno {
	return toErrno(m.log, op, path, err)
}

// inoOf is the inode number of path: a hash of the path, so a path keeps its
// number for the life of the mount and paths under different mounts of a
// union never share one. A node the kernel already knows keeps its number
// across renames (see child).
func inoOf(path string) uint64 {
	if path == "/" {
		return fuse.FUSE_ROOT_ID
	}
	h := fnv.New64a()
	h.Write([]byte(path))
	ino := h.Sum64() &^ (1 << 63) // go-fuse numbers its own inodes from 2^63
	if ino <= fuse.FUSE_ROOT_ID {
		ino += 2
	}
	return ino
}

// observed reports whether every change to what fi describes reaches the
// mount, so the kernel may cache it for ObservedTimeout: the tree reports
// its changes (vfs.Notifier), the entry is not a host file or directory
// (no host mode: another program cannot change it behind the tree), and
// the timeouts were left at their defaults.
func (m *mount) observed(fi vfs.FileInfo) bool {
	return !fi.HasMode && !fi.Link && m.watched.Load() && m.opts.EntryTimeout == 0 && m.opts.AttrTimeout == 0
}

// inoFor is the inode number of a new node at path p: inoOf(p) unless a
// live node displaced from p holds that number, else a hash of p and a
// counter.
func (m *mount) inoFor(p string) uint64 {
	ino := inoOf(p)
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := 0; m.displaced[ino]; i++ {
		ino = inoOf(p + "\x00" + strconv.Itoa(i))
	}
	return ino
}

// displace records that the node in and every node the kernel knows under
// it keep their numbers at other paths (or none).
func (m *mount) displace(in *fs.Inode) {
	// Collected before taking m.mu: Children takes the inodes' locks.
	var inos []uint64
	var walk func(*fs.Inode)
	walk = func(in *fs.Inode) {
		inos = append(inos, in.StableAttr().Ino)
		for _, ch := range in.Children() {
			walk(ch)
		}
	}
	walk(in)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ino := range inos {
		m.displaced[ino] = true
	}
}

// releaseIno forgets a displaced number once its node is gone.
func (m *mount) releaseIno(ino uint64) {
	m.mu.Lock()
	delete(m.displaced, ino)
	m.mu.Unlock()
}

// stat answers Stat for path, merged with what the mount holds: pending
// directories show, hidden ones do not, and the root is always a directory.
func (m *mount) stat(p string) (vfs.FileInfo, error) {
	fi, err := m.fsys.Stat(m.ctx, p)
	if err != nil {
		return fi, err
	}
	switch fi.Kind {
	case vfs.KindMissing:
		if p == "/" {
			return vfs.FileInfo{Path: p, Kind: vfs.KindDir}, nil
		}
		m.mu.Lock()
		t, ok := m.pending[vfs.Parent(p)][vfs.Base(p)]
		m.mu.Unlock()
		if ok {
			return vfs.FileInfo{Path: p, Kind: vfs.KindDir, ModTime: t}, nil
		}
	case vfs.KindDir:
		if m.isHidden(p) {
			return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}, nil
		}
	}
	return fi, nil
}

// isHidden reports whether p is a directory rmdir removed that is still
// empty (nothing under it but hidden directories); once something is under
// it again it is no longer hidden.
func (m *mount) isHidden(p string) bool {
	m.mu.Lock()
	h := m.hidden[p]
	m.mu.Unlock()
	if !h {
		return false
	}
	entries, err := m.list(p)
	if err != nil || len(entries) == 0 {
		return true
	}
	m.mu.Lock()
	delete(m.hidden, p)
	m.mu.Unlock()
	return false
}

// list returns the children of directory p: the tree's List merged with the
// pending directories under p, without hidden ones, sorted by path.
func (m *mount) list(p string) ([]vfs.DirEntry, error) {
	var entries []vfs.DirEntry
	for e, err := range m.fsys.List(m.ctx, p) {
		if err != nil {
			return nil, err
		}
		if e.Kind == vfs.KindDir && m.isHidden(e.Path) {
			continue
		}
		entries = append(entries, e)
	}
	m.mu.Lock()
	names := slices.Sorted(maps.Keys(m.pending[p]))
	m.mu.Unlock()
	if len(names) == 0 {
		return entries, nil
	}
	extra := make([]vfs.DirEntry, 0, len(names))
	for _, name := range names {
		extra = append(extra, vfs.DirEntry{Path: vfs.Join(p, name), Kind: vfs.KindDir})
	}
	return mergeEntries(entries, extra), nil
}

// mergeEntries merges two sorted entry lists; on equal paths a is kept.
func mergeEntries(a, b []vfs.DirEntry) []vfs.DirEntry {
	out := make([]vfs.DirEntry, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		switch c := vfs.CompareDirEntries(a[0], b[0]); {
		case c < 0:
			out, a = append(out, a[0]), a[1:]
		case c > 0:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, a[0]), a[1:], b[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}

// addPending records p as a directory held by the mount.
func (m *mount) addPending(p string, t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, name := vfs.Parent(p), vfs.Base(p)
	if m.pending[dir] == nil {
		m.pending[dir] = map[string]time.Time{}
	}
	m.pending[dir][name] = t
	delete(m.hidden, p)
}

// removePending forgets p as a pending directory.
func (m *mount) removePending(p string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, name := vfs.Parent(p), vfs.Base(p)
	delete(m.pending[dir], name)
	if len(m.pending[dir]) == 0 {
		delete(m.pending, dir)
	}
}

// invalidate has the kernel drop what it caches of the file at p, from the
// invalidator's goroutine (never from inside a request).
func (m *mount) invalidate(p string) {
	m.mu.Lock()
	iv := m.inv
	m.mu.Unlock()
	if iv != nil {
		iv.queueChange(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	}
}

// holdParents keeps the directories above p visible after the mount deleted
// p: a tree without directories of its own (temp:) drops a directory with
// its last file, but a directory emptied through the mount stays until
// rmdir, as on any other filesystem. Where the tree has directories of its
// own (vfs.DirMaker: local:, or that part of a union) a parent that is
// missing now was removed or replaced on the host (a directory swapped for
// a symbolic link out of the root, say): the mount does not hold it, or it
// would show a phantom empty directory the tree does not have.
func (m *mount) holdParents(p string) {
	now := time.Now()
	for d := vfs.Parent(p); d != "/"; d = vfs.Parent(d) {
		fi, err := m.stat(d)
		if err != nil || fi.Kind != vfs.KindMissing {
			return
		}
		if !m.dropsDirs(d) {
			return
		}
		m.addPending(d, now)
	}
}

// dropsDirs reports whether the part of the tree at the missing directory
// d has no directories of its own (its MakeDir is unsupported), so the
// mount must hold d itself. It asks MakeDir of the nearest ancestor that
// is a directory (a no-op there), never of d.
func (m *mount) dropsDirs(d string) bool {
	if _, ok := m.fsys.(vfs.DirMaker); !ok {
		return true
	}
	a := vfs.Parent(d)
	for a != "/" {
		if fi, err := m.fsys.Stat(m.ctx, a); err == nil && fi.Kind == vfs.KindDir {
			break
		}
		a = vfs.Parent(a)
	}
	return errors.Is(vfs.MakeDir(m.ctx, m.fsys, a), errors.ErrUnsupported)
}

// rebase moves everything the mount holds about paths at or under src to
// dst: pending directories, hidden ones and metadata.
func (m *mount) rebase(src, dst string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	move := func(p string) string {
		rel, _ := vfs.Rel(p, src)
		return vfs.Join(dst, rel)
	}
	for dir, names := range m.pending {
		for name, t := range names {
			p := vfs.Join(dir, name)
			if !vfs.HasPrefix(p, src) {
				continue
			}
			delete(names, name)
			q := move(p)
			if m.pending[vfs.Parent(q)] == nil {
				m.pending[vfs.Parent(q)] = map[string]time.Time{}
			}
			m.pending[vfs.Parent(q)][vfs.Base(q)] = t
		}
		if len(names) == 0 {
			delete(m.pending, dir)
		}
	}
	for p := range m.hidden {
		if vfs.HasPrefix(p, src) {
			delete(m.hidden, p)
		}
	}
	for p, md := range m.meta {
		if vfs.HasPrefix(p, src) {
			delete(m.meta, p)
			m.meta[move(p)] = md
		}
	}
}

// forget drops what the mount holds about paths at or under p.
func (m *mount) forget(p string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for q := range m.meta {
		if vfs.HasPrefix(q, p) {
			delete(m.meta, q)
		}
	}
}

func (m *mount) getMeta(p string) meta {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.meta[p]
}

func (m *mount) setMeta(p string, fn func(*meta)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	md := m.meta[p]
	fn(&md)
	if md == (meta{}) {
		delete(m.meta, p)
		return
	}
	m.meta[p] = md
}

// ownByCaller records the process that made p through the mount as its
// owner, when other users may use the mount: the daemon makes files as
// itself (root, typically), and the kernel's permission checks would
// otherwise keep a user out of the directory they just made. The tree's
// file keeps the daemon's owner; the mount shows the caller's while it
// runs.
func (m *mount) ownByCaller(ctx context.Context, p string) {
	if !m.opts.AllowOther {
		return
	}
	caller, ok := fuse.FromContext(ctx)
	if !ok || caller.Uid == m.uid && caller.Gid == m.gid {
		return
	}
	m.setMeta(p, func(md *meta) { md.uid, md.gid, md.hasOwner = caller.Uid, caller.Gid, true })
}

// beginSelf and endSelf bracket a change the mount makes itself.
func (m *mount) beginSelf(p string) {
	m.mu.Lock()
	m.self[p]++
	m.mu.Unlock()
}

func (m *mount) endSelf(p string) {
	m.mu.Lock()
	if m.self[p]--; m.self[p] <= 0 {
		delete(m.self, p)
	}
	m.mu.Unlock()
}

func (m *mount) isSelf(p string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.self[p] > 0 {
		return true
	}
	for t := range m.selfTrees {
		if vfs.HasPrefix(p, t) {
			return true
		}
	}
	return false
}

// beginSelfTree and endSelfTree bracket a rename the mount makes of p and
// everything under it.
func (m *mount) beginSelfTree(p string) {
	m.mu.Lock()
	m.selfTrees[p]++
	m.mu.Unlock()
}

func (m *mount) endSelfTree(p string) {
	m.mu.Lock()
	if m.selfTrees[p]--; m.selfTrees[p] <= 0 {
		delete(m.selfTrees, p)
	}
	m.mu.Unlock()
}

// write commits data to path through the tree.
func (m *mount) write(p string, data []byte) error {
	m.beginSelf(p)
	defer m.endSelf(p)
	return m.fsys.Write(m.ctx, p, data)
}

// create writes an empty file at p unless something is there; it fails with
// KindConflict when something is.
func (m *mount) create(p string) error {
	m.beginSelf(p)
	defer m.endSelf(p)
	_, err := vfs.WriteIf(m.ctx, m.fsys, p, nil, vfs.Precondition{IfNoneMatch: true})
	return err
}

// remove deletes the file at p through the tree.
func (m *mount) remove(p string) error {
	m.beginSelf(p)
	defer m.endSelf(p)
	return m.fsys.Delete(m.ctx, p)
}

func (m *mount) setDirty(n *node, dirty bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if dirty {
		m.dirty[n] = true
	} else {
		delete(m.dirty, n)
	}
}

// dirtyNodes returns the nodes with uncommitted writes.
func (m *mount) dirtyNodes() []*node {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Collect(maps.Keys(m.dirty))
}

// modeBits is the permission, setuid, setgid and sticky bits of mode as
// the kernel has them.
func modeBits(mode iofs.FileMode) uint32 {
	bits := uint32(mode.Perm())
	if mode&iofs.ModeSetuid != 0 {
		bits |= syscall.S_ISUID
	}
	if mode&iofs.ModeSetgid != 0 {
		bits |= syscall.S_ISGID
	}
	if mode&iofs.ModeSticky != 0 {
		bits |= syscall.S_ISVTX
	}
	return bits
}

// isPending reports whether p is a directory the mount holds (mkdir).
func (m *mount) isPending(p string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.pending[vfs.Parent(p)][vfs.Base(p)]
	return ok
}

// attr fills out from fi and what the mount holds for its path.
func (m *mount) attr(fi vfs.FileInfo, out *fuse.Attr) {
	mt := fi.ModTime
	if mt.IsZero() {
		mt = m.start
	}
	at := mt
	switch fi.Kind {
	case vfs.KindDir:
		out.Mode = syscall.S_IFDIR | 0o755
		out.Nlink = 2
		out.Size = 4096
	default:
		out.Mode = syscall.S_IFREG | 0o644
		out.Nlink = 1
		out.Size = uint64(fi.Size)
	}
	out.Uid, out.Gid = m.uid, m.gid
	if fi.HasMode || fi.Mode != 0 {
		// The tree's own bits (the host's on local:; what SetMode set
		// on temp:).
		out.Mode = out.Mode&syscall.S_IFMT | modeBits(fi.Mode)
	}
	if fi.HasMode {
		// The host's owner: with --allow-other the kernel checks access
		// against it and the bits (default_permissions).
		out.Uid, out.Gid = fi.UID, fi.GID
	}
	if fi.Link {
		// A link's own: the kernel follows it and checks its target.
		out.Mode, out.Nlink, out.Size = syscall.S_IFLNK|0o777, 1, uint64(fi.Size)
		if !fi.LinkModTime.IsZero() {
			mt, at = fi.LinkModTime, fi.LinkModTime // lstat's, not the target's
		}
	}
	if md := m.getMeta(fi.Path); md != (meta{}) && !fi.Link {
		if md.mode != 0 {
			out.Mode = out.Mode&syscall.S_IFMT | md.mode&0o7777
		}
		if md.hasOwner {
			out.Uid, out.Gid = md.uid, md.gid
		}
		if !md.atime.IsZero() {
			at = md.atime
		}
	}
	if m.opts.ReadOnly {
		out.Mode &^= 0o222
	}
	out.SetTimes(&at, &mt, &mt)
	out.Blksize = 4096
	out.Blocks = (out.Size + 511) / 512
}
