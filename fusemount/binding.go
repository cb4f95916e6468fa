package fusemount

import (
	"context"
	"encoding/binary"
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

	"github.com/julyfs/julyfs/third_party/go-fuse/fs"
	"github.com/julyfs/julyfs/third_party/go-fuse/fuse"
	"github.com/julyfs/julyfs/vfs"
)

// mount is what the go-fuse nodes of one mounted tree share: the mount's
// state (state.go: the tree and what the mount holds beside it), and what
// only the kernel binding needs: inode numbers, the files with writes not
// yet committed, the invalidator and the attributes handed to the kernel.
type mount struct {
	state
	// linkedNodes holds the nodes whose file has several names (see
	// linked), whose attributes an unlink of another name makes stale.
	linkedNodes sync.Map // *node -> struct{}
	opts        Options
	log         *log.Logger
	uid, gid    uint32
	start       time.Time
	gen         atomic.Uint64 // last StableAttr.Gen handed out
	// names is held for writing through each RENAME request, go-fuse's
	// move of its nodes included, and for reading through each UNLINK
	// (which run side by side) and each writer's RELEASE: a release
	// checking that a name still holds a file written in place
	// (publishInPlace) sees every rename the mount itself made as done or
	// not begun, and an unlink of its own name in flight by its node
	// (beginUnlink), not as another writer's replace (rawFS,
	// handle.Release). A request that found nothing at a node's path
	// waits on it for the renames in flight (settledPath).
	names sync.RWMutex
	// namesGen counts the renames and unlinks done under names (see
	// settledPath).
	namesGen atomic.Uint64

	// mu guards dirty, inv and displaced (the embedded state has its own
	// lock).
	mu sync.Mutex
	// dirty holds the file nodes with writes not yet committed.
	dirty map[*node]bool
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
	// hostDev is the host device whose inode numbers the mount shows as
	// they are (the first it met; see hostIno).
	hostDev atomic.Uint64
	// hostNodes holds, by inode number, the live nodes of host files with
	// several names (see hostChild), so every name of one is one node.
	hostNodes map[uint64]*fs.Inode

	ptState
	hostState
	killState
}

func newMount(ctx context.Context, fsys vfs.FileSystem, opts Options) *mount {
	return &mount{
		state:     newState(ctx, fsys),
		opts:      opts,
		log:       opts.logger(),
		uid:       uint32(syscall.Getuid()),
		gid:       uint32(syscall.Getgid()),
		start:     time.Now(),
		dirty:     map[*node]bool{},
		displaced: map[uint64]bool{},
		hostNodes: map[uint64]*fs.Inode{},
		ptState:   ptState{ptDecided: make(chan struct{})},
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
// mount, so the kernel may cache it for ObservedTimeout; gen is m.hostGen
// from before the Stat that answered fi. The timeouts must have been left
// at their defaults, and either fi is under a host directory the mount
// watches completely (vfs/local's WatchHost: any program's change is
// heard) and no host change was heard since gen (fi may predate it), or
// it is no host file or directory and no link (no host mode: nobody can
// change it behind the tree) of a tree that reports its changes
// (vfs.Notifier).
func (m *mount) observed(fi vfs.FileInfo, gen uint64) bool {
	if m.opts.EntryTimeout != 0 || m.opts.AttrTimeout != 0 || linked(fi) {
		return false
	}
	if m.hostCovered(fi.Path) {
		return m.hostGen.Load() == gen
	}
	return !fi.HasMode && !fi.Link && m.watched.Load()
}

// dropLinkedAttrs has the kernel drop the attributes of every node whose
// file has several names, before the unlink of one of those names
// returns: the others' Nlink moved, and the kernel rounds even a
// nanosecond's attribute timeout up to a clock tick. Names of one file
// may be two nodes (on a tree without host inode numbers, or a link made
// behind the mount), so the mount drops them all; such files are few.
func (m *mount) dropLinkedAttrs() {
	m.linkedNodes.Range(func(k, _ any) bool {
		k.(*node).NotifyContent(0, 0)
		return true
	})
}

// linkedTimeout is the attribute timeout of a file with several names:
// go-fuse replaces a zero with the mount's default, so the shortest the
// kernel can be told.
const linkedTimeout = time.Nanosecond

// linked says fi is a file with more than one name (vfs.Linker): the
// kernel gets its attributes with no timeout, since a change through
// another name (an unlink moves Nlink) is reported for that name only.
func linked(fi vfs.FileInfo) bool {
	return fi.Nlink > 1 && (fi.Kind == vfs.KindFile || fi.Special != 0) && !fi.Link
}

// specialType is the POSIX file type of the special file fi describes
// (vfs.FileInfo.Special), 0 for anything else.
func specialType(fi vfs.FileInfo) uint32 {
	switch {
	case fi.Link || fi.Special == 0:
		return 0
	case fi.Special&iofs.ModeNamedPipe != 0:
		return syscall.S_IFIFO
	case fi.Special&iofs.ModeSocket != 0:
		return syscall.S_IFSOCK
	case fi.Special&iofs.ModeCharDevice != 0:
		return syscall.S_IFCHR
	case fi.Special&iofs.ModeDevice != 0:
		return syscall.S_IFBLK
	}
	return 0
}

// hostIno is the inode number the mount shows for what fi describes when
// the tree gives the host's (vfs.FileInfo.Ino, LinkIno for a link: a
// local: tree): that number, so two names of one host file are one inode
// and a rename keeps it, as ls -i, find -samefile, du, tar and git expect.
// A host file on a device other than the first one met (a union of
// local: mounts on two filesystems) gets a hash of its device and number
// instead, as does a number go-fuse keeps for itself, so two host files
// never share one. ok is false when the tree gives none.
func (m *mount) hostIno(fi vfs.FileInfo) (ino uint64, ok bool) {
	dev, ino := fi.Dev, fi.Ino
	if fi.Link {
		dev, ino = fi.LinkDev, fi.LinkIno
	}
	if ino == 0 {
		return 0, false
	}
	m.hostDev.CompareAndSwap(0, dev+1)
	if m.hostDev.Load() == dev+1 && ino > fuse.FUSE_ROOT_ID && ino < 1<<63 {
		return ino, true
	}
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], dev)
	binary.LittleEndian.PutUint64(b[8:], ino)
	h := fnv.New64a()
	h.Write(b[:])
	ino = h.Sum64() &^ (1 << 63)
	if ino <= fuse.FUSE_ROOT_ID {
		ino += 2
	}
	return ino, true
}

// hostNode returns the live node of the host file numbered ino with
// several names, of type mode, when the kernel knows one (nil if not).
func (m *mount) hostNode(ino uint64, mode uint32) *fs.Inode {
	m.mu.Lock()
	defer m.mu.Unlock()
	if in := m.hostNodes[ino]; in != nil && in.StableAttr().Mode == mode {
		return in
	}
	return nil
}

// setHostNode records in as the node of the host file numbered ino.
func (m *mount) setHostNode(ino uint64, in *fs.Inode) {
	m.mu.Lock()
	m.hostNodes[ino] = in
	m.mu.Unlock()
}

// dropHostNode forgets in as a host file's node (it is forgotten, or
// its name is gone).
func (m *mount) dropHostNode(in *fs.Inode) {
	ino := in.StableAttr().Ino
	m.mu.Lock()
	if m.hostNodes[ino] == in {
		delete(m.hostNodes, ino)
	}
	m.mu.Unlock()
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

// ownByCaller records the process that made p through the mount as its
// owner, when other users may use the mount: the daemon makes files as
// itself (root, typically), and the kernel's permission checks would
// otherwise keep a user out of the directory they just made. A tree with
// owners that lets the daemon give a file away (vfs.OwnerSetter: local:
// with the daemon as root) gets the caller's owner on the file itself, as
// on disk; elsewhere the tree's file keeps the daemon's owner and the
// mount shows the caller's while it runs.
//
// It reports whether the tree's own owner changed (a Stat taken before is
// stale).
func (m *mount) ownByCaller(ctx context.Context, p string) (onTree bool) {
	if !m.opts.AllowOther {
		return false
	}
	caller, ok := fuse.FromContext(ctx)
	if !ok || caller.Uid == m.uid && caller.Gid == m.gid {
		return false
	}
	if m.uid == 0 && vfs.SetOwner(m.ctx, m.fsys, p, int(caller.Uid), int(caller.Gid)) == nil {
		return true
	}
	m.setMeta(p, func(md *meta) { md.uid, md.gid, md.hasOwner = caller.Uid, caller.Gid, true })
	return false
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

// mtime is the modification time attr reports for what fi describes.
func (m *mount) mtime(fi vfs.FileInfo) time.Time {
	switch {
	case fi.Link && !fi.LinkModTime.IsZero():
		return fi.LinkModTime // lstat's, not the target's
	case fi.ModTime.IsZero():
		return m.start
	}
	return fi.ModTime
}

// attr fills out from fi and what the mount holds for its path.
func (m *mount) attr(fi vfs.FileInfo, out *fuse.Attr) {
	mt := m.mtime(fi)
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
	if t := specialType(fi); t != 0 {
		out.Mode, out.Size, out.Rdev = t|0o644, 0, uint32(fi.Rdev)
		if fi.Nlink > 1 {
			out.Nlink = fi.Nlink
		}
	}
	out.Uid, out.Gid = m.uid, m.gid
	if fi.HasMode || fi.Mode != 0 {
		// The tree's own bits (the host's on local:; what SetMode set
		// on temp:).
		out.Mode = out.Mode&syscall.S_IFMT | vfs.ModeBits(fi.Mode)
	}
	if fi.HasMode {
		// The host's owner: with --allow-other the kernel checks access
		// against it and the bits (default_permissions).
		out.Uid, out.Gid = fi.UID, fi.GID
	}
	if fi.Link {
		// A link's own: the kernel follows it and checks its target.
		out.Mode, out.Nlink, out.Size = syscall.S_IFLNK|0o777, 1, uint64(fi.Size)
		if fi.LinkHasOwner {
			out.Uid, out.Gid = fi.LinkUID, fi.LinkGID // lchown's
		}
	}
	if md := m.getMeta(fi.Path); md != (meta{}) {
		if md.mode != 0 && !fi.Link {
			out.Mode = out.Mode&syscall.S_IFMT | md.mode&0o7777
		}
		if md.hasOwner && !fi.Link {
			out.Uid, out.Gid = md.uid, md.gid
		}
		if !md.atime.IsZero() {
			at = md.atime // a link's own, set on the link (lutimes)
		}
	}
	if m.opts.ReadOnly {
		out.Mode &^= 0o222
	}
	ct := mt
	switch {
	case fi.Link && !fi.LinkChangeTime.IsZero():
		ct = fi.LinkChangeTime // the link's own (lchown moves it)
	case !fi.ChangeTime.IsZero() && !fi.Link:
		ct = fi.ChangeTime // the host's ctime on local:
	}
	if (fi.Kind == vfs.KindFile || fi.Special != 0) && fi.Nlink > 1 && !fi.Link {
		out.Nlink = fi.Nlink // hard links (vfs.Linker)
	}
	out.SetTimes(&at, &mt, &ct)
	out.Blksize = 4096
	out.Blocks = (out.Size + 511) / 512
}

// caller is the owner and group of the process behind the request ctx
// (0, 0 when go-fuse says none).
func caller(ctx context.Context) (uid, gid uint32) {
	if c, ok := fuse.FromContext(ctx); ok {
		return c.Uid, c.Gid
	}
	return 0, 0
}
