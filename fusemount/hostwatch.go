package fusemount

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/julyfs/julyfs/third_party/go-fuse/fs"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/union"
)

// Host changes. A local: tree's files can be changed by any program on
// the host, behind the daemon; the tree reports those changes through an
// explicit capability (hostWatcher: vfs/local's WatchHost, inotify), so
// the kernel may cache host entries for ObservedTimeout and the mount
// invalidates them on each host change, from the invalidator's goroutine.
// Where that is not possible (the tree cannot watch, a watch is not
// complete: more directories than inotify watches allowed) host entries
// keep the short timeouts. A host change seen while a lookup or getattr
// was asking the tree makes that reply use the short timeouts too (see
// hostGen), since its answer may predate the change and its invalidation
// may reach the kernel before the reply does.

// hostWatcher is a tree that reports the changes made to its host
// directory by any process (vfs/local).
type hostWatcher interface {
	WatchHost(fn func(local.HostChange)) (*local.HostWatch, error)
}

// hostMount is one mount of the tree: where it appears, and the watch of
// its host directory (nil when it has none).
type hostMount struct {
	prefix string
	tree   hostWatcher      // nil: a tree that cannot watch its host directory
	watch  *local.HostWatch // tree's watch, once started
}

// hostState is what the mount knows of its trees' host watches.
type hostState struct {
	hostMu     sync.Mutex
	hostMounts atomic.Pointer[[]hostMount] // deepest prefix first; set once watched
	hostClosed bool                        // stopHost ran: a watch started later is closed (guarded by hostMu)
	// hostOK says every host mount is watched completely: host entries
	// may be cached for ObservedTimeout.
	hostOK atomic.Bool
	// hostGen counts the host changes heard; a reply whose Stat ran
	// while it moved is cached for the short timeouts only.
	hostGen atomic.Uint64
	// hostDropForTest drops the host changes heard (tests: changes lost).
	hostDropForTest atomic.Bool
	// hostHookForTest, when set, sees each host change first, on the
	// watch's goroutine (tests: holding the watch back).
	hostHookForTest atomic.Pointer[func(local.HostChange)]
	// handlelessReads counts the directory reads served without a
	// handle (no-opendir, see noopendir.go).
	handlelessReads atomic.Int64
	// selfEntries holds, by path, the names the mount is making or
	// removing on the host itself (see expectEntry), guarded by selfMu.
	selfMu      sync.Mutex
	selfEntries map[string]selfEntry
}

// selfEntry counts the host changes of a name the mount expects to hear
// of its own changes: made (a create), gone (an unlink or rmdir); at is
// when the last was expected.
type selfEntry struct {
	made, gone int
	at         time.Time
}

// selfWindow bounds how long an expected report of the mount's own change
// of a name is waited for: inotify reports within milliseconds, and a
// report that never came (a file made in a directory the watch did not
// hold yet, whose creation is reported as Lost instead) must not swallow
// another program's change later. A report that comes later is handled
// as any other.
var selfWindow atomic.Int64 // time.Duration; tests raise it

func init() { selfWindow.Store(int64(500 * time.Millisecond)) }

// expectEntry records, before the mount creates (made) or removes the
// name p on the host itself (a CREATE, an UNLINK, an RMDIR), that the host
// watch will report that change: the kernel, which sent the request, has
// already dropped what it cached of the name and its directory's listing
// and attributes (fuse_dir_changed), so the report needs no invalidation,
// and dropping it saves the daemon a Stat and the kernel a listing and
// attribute refresh per name (creates, rm -rf). The caller calls
// doneEntry after the change, saying whether it was made.
func (m *mount) expectEntry(p string, made bool) {
	if !m.hostOK.Load() || !m.hostCovered(p) {
		return
	}
	now := time.Now()
	m.selfMu.Lock()
	defer m.selfMu.Unlock()
	if m.selfEntries == nil {
		m.selfEntries = map[string]selfEntry{}
	}
	if len(m.selfEntries) >= 1024 {
		for q, e := range m.selfEntries {
			if now.Sub(e.at) > time.Duration(selfWindow.Load()) {
				delete(m.selfEntries, q)
			}
		}
	}
	e := m.selfEntries[p]
	if made {
		e.made++
	} else {
		e.gone++
	}
	e.at = now
	m.selfEntries[p] = e
}

// entryChange makes the mount's own create (made) or removal of the name
// p through change, with the host watch told to expect its report
// (expectEntry, doneEntry).
func (m *mount) entryChange(p string, made bool, change func() error) error {
	m.expectEntry(p, made)
	err := change()
	m.doneEntry(p, made, err == nil)
	return err
}

// unexpectEntry takes back an expectEntry(p, made) whose report will not
// be taken for the mount's (a directory reported Lost: see watchMade),
// with no invalidation: the report itself brings that.
func (m *mount) unexpectEntry(p string, made bool) {
	m.selfMu.Lock()
	m.dropExpected(p, made)
	m.selfMu.Unlock()
}

// dropExpected takes one expected change of p back; selfMu is held.
func (m *mount) dropExpected(p string, made bool) bool {
	e, found := m.selfEntries[p]
	if found {
		if made {
			e.made = max(e.made-1, 0)
		} else {
			e.gone = max(e.gone-1, 0)
		}
		m.putEntry(p, e)
	}
	return found
}

// watchMade has the host watch of the tree holding p, a directory the
// mount has just made and not yet told the kernel of, watch it at once
// (local.HostWatch.WatchMade), so that the report of its creation says
// nothing went unreported in it: the mount takes it for its own (the
// kernel learns of the directory from the MKDIR reply) instead of
// dropping everything the kernel cached under it meanwhile, which for a
// tar -x or a git checkout is every file made in it before the report
// came. false when it could not: the report then says changes in it may
// have been missed, as for a directory another program made.
func (m *mount) watchMade(p string) bool {
	mounts := m.hostMounts.Load()
	if !m.hostOK.Load() || mounts == nil {
		return false
	}
	for _, hm := range *mounts {
		rel, ok := vfs.Rel(p, hm.prefix)
		if !ok {
			continue
		}
		if hm.watch == nil || rel == "" {
			return false
		}
		made, err := hm.watch.WatchMade("/" + rel)
		if err != nil {
			m.debugf("host changes: %v", err)
		}
		return made
	}
	return false
}

// doneEntry ends an expectEntry(p, made). A change that was not made
// (ok false: an error) is not waited for; as another program's change of
// p heard meanwhile may have been taken for the mount's, the name is
// invalidated as a host change of it would be.
func (m *mount) doneEntry(p string, made, ok bool) {
	if ok {
		return
	}
	m.selfMu.Lock()
	found := m.dropExpected(p, made)
	m.selfMu.Unlock()
	if found {
		m.mu.Lock()
		iv := m.inv
		m.mu.Unlock()
		if iv != nil {
			iv.queueHost(local.HostChange{Path: p, Entry: true})
		}
	}
}

// putEntry stores e as the changes of p still expected, forgetting p
// once none is; selfMu is held.
func (m *mount) putEntry(p string, e selfEntry) {
	if e.made+e.gone == 0 {
		delete(m.selfEntries, p)
	} else {
		m.selfEntries[p] = e
	}
}

// ownEntry reports whether c is the host watch's report of a create,
// unlink or rmdir the mount made itself (expectEntry), and takes it off
// the expected changes. A report of another program's change the other
// way (a removal where the mount made the name, a create where it
// removed it) is never taken for the mount's.
//
// A report that says what happened (c.Op) is matched by that alone, with
// no Stat: a create (HostCreated, not Lost: not a directory) for an
// expected create, a removal (HostRemoved) for an expected unlink or
// rmdir. That is sound because inotify reports the changes of a
// directory's names in the order they happened, and expectEntry runs
// before the mount's change: a report taken for the mount's is either
// the mount's own, or another program's change of the same kind made
// after expectEntry and before the mount's, which the mount's change
// then undid or repeated (its create succeeded, so the name was free
// again: the other program's removal in between is reported, unexpected,
// after it), or which made the mount's change fail (doneEntry then
// invalidates the name). Either way the mount's own report, or a report
// of a later change by another program, comes after it, is not
// expected any more, and invalidates; what the kernel last hears of the
// name is never a report taken for the mount's when another program
// changed it last. Another program recreating a name the mount just
// removed is reported after the removal, as a create nobody expects.
//
// A rename (HostRenamed: moved away) or a report without Op is checked
// against the host as before: the host must still show what the mount
// did (the name there for a create, gone for a removal).
func (m *mount) ownEntry(c local.HostChange) bool {
	if !c.Entry {
		return false
	}
	m.selfMu.Lock()
	_, ok := m.selfEntries[c.Path]
	m.selfMu.Unlock()
	if !ok {
		return false
	}
	var there bool // the host shows the name
	switch c.Op {
	case local.HostCreated:
		there = true
	case local.HostRemoved:
	default:
		fi, err := m.fsys.Stat(m.ctx, c.Path)
		if err != nil {
			return false
		}
		there = fi.Kind != vfs.KindMissing || fi.Link
	}
	m.selfMu.Lock()
	defer m.selfMu.Unlock()
	e, ok := m.selfEntries[c.Path]
	if !ok {
		return false
	}
	switch {
	case time.Since(e.at) > time.Duration(selfWindow.Load()):
		delete(m.selfEntries, c.Path)
		return false
	case there && e.made > 0 && !c.Lost:
		e.made--
	case there && e.made > 0 && c.Op == local.HostCreated:
		// A directory the watch took before the mount could (see
		// watchMade): the mount's mkdir, reported Lost. It is not
		// taken for the mount's (what the kernel holds under it is
		// dropped), but it is the report expected: an expectation left
		// over would take another program's later change for one.
		e.made--
		m.putEntry(c.Path, e)
		return false
	case !there && e.gone > 0:
		// (A directory removed is reported Lost: it was empty.)
		e.gone--
	default:
		return false
	}
	m.putEntry(c.Path, e)
	return true
}

// hostMountsOf lists the trees of fsys (union.Leaves) with those that
// watch their host directory.
func hostMountsOf(fsys vfs.FileSystem) []hostMount {
	var out []hostMount
	for _, l := range union.Leaves(fsys) {
		w, _ := l.FS.(hostWatcher)
		out = append(out, hostMount{prefix: l.Prefix, tree: w})
	}
	return out
}

// watchHost starts watching the host directories of the mount's trees
// (in the background: a large tree takes a while), then lets host entries
// be cached long. It does nothing when explicit timeouts were given:
// they keep their meaning.
func (m *mount) watchHost(iv *invalidator) {
	mounts := hostMountsOf(m.fsys)
	if !slices.ContainsFunc(mounts, func(hm hostMount) bool { return hm.tree != nil }) {
		return
	}
	if m.opts.EntryTimeout != 0 || m.opts.AttrTimeout != 0 {
		m.debugf("host changes: not watched (explicit --entry-timeout or --attr-timeout: host entries are cached that long)")
		return
	}
	// Deepest first: the mount serving a path is the first whose prefix
	// holds it.
	slices.SortStableFunc(mounts, func(a, b hostMount) int { return len(b.prefix) - len(a.prefix) })
	go func() {
		for i := range mounts {
			if mounts[i].tree == nil {
				continue
			}
			prefix := mounts[i].prefix
			hw, err := mounts[i].tree.WatchHost(func(c local.HostChange) {
				c.Path = vfs.Join(prefix, c.Path)
				if hook := m.hostHookForTest.Load(); hook != nil {
					(*hook)(c)
				}
				if m.ownEntry(c) {
					return
				}
				m.hostGen.Add(1)
				if m.hostDropForTest.Load() {
					return
				}
				iv.queueHost(c)
			})
			if err != nil {
				m.debugf("host changes: %v; host entries keep the %v timeouts", err, m.opts.entryTimeout())
				m.closeHostWatches(mounts)
				return
			}
			mounts[i].watch = hw
			m.debugf("host changes: watching %d directories under %s", hw.Dirs(), prefix)
		}
		m.hostMu.Lock()
		if m.hostClosed {
			m.hostMu.Unlock()
			m.closeHostWatches(mounts)
			return
		}
		m.hostMounts.Store(&mounts)
		m.hostMu.Unlock()
		m.hostOK.Store(true)
		m.debugf("host changes: host entries cached for %v, dropped on each change", ObservedTimeout)
	}()
}

func (m *mount) closeHostWatches(mounts []hostMount) {
	for _, hm := range mounts {
		if hm.watch != nil {
			hm.watch.Close()
		}
	}
}

// stopHost stops the host watches.
func (m *mount) stopHost() {
	m.hostOK.Store(false)
	m.hostMu.Lock()
	mounts := m.hostMounts.Swap(nil)
	m.hostClosed = true
	m.hostMu.Unlock()
	if mounts != nil {
		m.closeHostWatches(*mounts)
	}
}

// hostCovered reports whether the host entry at p may be cached long:
// the mount serving p has a complete watch of its host directory.
func (m *mount) hostCovered(p string) bool {
	mounts := m.hostMounts.Load()
	if !m.hostOK.Load() || mounts == nil {
		return false
	}
	for _, hm := range *mounts {
		if vfs.HasPrefix(p, hm.prefix) {
			return hm.watch != nil && hm.watch.Complete()
		}
	}
	return false
}

// hostComplete reports whether every host directory the mount watches is
// watched completely.
func (m *mount) hostComplete() bool {
	mounts := m.hostMounts.Load()
	if mounts == nil {
		return false
	}
	for _, hm := range *mounts {
		if hm.watch != nil && !hm.watch.Complete() {
			return false
		}
	}
	return true
}

// queueHost queues a host change for the invalidator's goroutine; changes
// of one path not sent yet are merged.
func (iv *invalidator) queueHost(c local.HostChange) {
	iv.mu.Lock()
	if !iv.stopped {
		if iv.host == nil {
			iv.host = map[string]local.HostChange{}
		}
		old, ok := iv.host[c.Path]
		if ok {
			c.Entry = c.Entry || old.Entry
			c.Lost = c.Lost || old.Lost
		} else {
			iv.hostOrder = append(iv.hostOrder, c.Path)
		}
		iv.host[c.Path] = c
	}
	iv.mu.Unlock()
	select {
	case iv.wake <- struct{}{}:
	default:
	}
}

// invalidateHost drops what the kernel caches that a host change may
// have made stale: the name and the parent directory's listing and
// attributes for a name that came or went, the attributes and pages of
// the file or directory at c.Path, and for a Lost change everything the
// kernel holds at or under c.Path. A watch that is no longer complete
// sends the mount back to the short timeouts, and everything the kernel
// cached for long is dropped.
func (iv *invalidator) invalidateHost(c local.HostChange, dirs map[*fs.Inode]bool) {
	m := iv.m
	if m.hostOK.Load() && !m.hostComplete() {
		// A directory could not be watched (the watch limit): from now
		// on host entries get the short timeouts, and what the kernel
		// cached for long goes.
		m.hostOK.Store(false)
		m.log.Printf("host changes: a directory of the host tree could not be watched (fs.inotify.max_user_watches); host entries are cached for %v from now on", m.opts.entryTimeout())
		iv.invalidateTree(iv.root)
		return
	}
	segs := vfs.Split(c.Path)
	if len(segs) == 0 {
		if c.Lost {
			m.debugf("host changes: some were lost (%s); dropping every cached name and attribute", "inotify queue overflow")
			iv.invalidateTree(iv.root)
			return
		}
		iv.root.NotifyContent(0, 0)
		return
	}
	parent := iv.root
	for _, seg := range segs[:len(segs)-1] {
		ch := parent.GetChild(seg)
		if ch == nil {
			return // the kernel holds nothing under a directory it does not know
		}
		parent = ch
	}
	name := segs[len(segs)-1]
	ch := parent.GetChild(name)
	var fi vfs.FileInfo
	var err error
	if ch != nil {
		fi, err = m.stat(c.Path)
	}
	if c.Entry || c.Lost {
		if pn, ok := parent.Operations().(*node); ok {
			pn.forgetSubdirs()
		}
		// Its listing, mtime and link count: once per batch (see
		// invalidateDirs).
		dirs[parent] = true
		// The name, where what the kernel holds of it is wrong: a name
		// gone, or now of another kind (a node is its path, so a file
		// replaced by a file keeps its node: its attributes and pages
		// go below). A name the kernel does not hold needs nothing
		// (go-fuse knows every name the kernel looked up), but for a
		// negative entry, cached only with a negative timeout.
		switch {
		case ch == nil:
			if dropNegative(parent, name) || m.opts.negativeTimeout() > 0 {
				parent.NotifyEntry(name)
			}
		case err != nil || fi.Kind == vfs.KindMissing && !fi.Link || typeOf(fi) != ch.StableAttr().Mode:
			parent.NotifyEntry(name)
		}
	}
	if ch == nil {
		return
	}
	if c.Lost {
		iv.invalidateTree(ch)
	}
	if err == nil && iv.unchanged(ch, fi) {
		return
	}
	iv.staleNode(ch)
	ch.NotifyContent(0, 0)
}

// invalidateDirs drops the listings and attributes of the directories
// whose entries a batch of host changes touched: one invalidation per
// directory, where a burst of changes in one directory (rm -r, a build)
// would otherwise send one per name.
func (iv *invalidator) invalidateDirs(dirs map[*fs.Inode]bool) {
	for d := range dirs {
		d.NotifyContent(0, 0)
	}
}

// unchanged reports whether fi, what the tree has at the node's path now,
// is what the kernel was last told of it (same kind, etag, size, time
// and mode), so a change the mount made itself, reported by the host
// watch a moment later, drops nothing.
func (iv *invalidator) unchanged(in *fs.Inode, fi vfs.FileInfo) bool {
	n, ok := in.Operations().(*node)
	if !ok {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ownWrite(fi) {
		return true // the daemon's own write in place: the kernel has it
	}
	old := n.statFI
	return !n.statAt.IsZero() && n.statGen == n.changes.Load() && n.stage == nil &&
		fi.Kind == old.Kind && fi.Link == old.Link && fi.ETag == old.ETag && fi.Size == old.Size &&
		fi.ModTime.Equal(old.ModTime) && fi.Mode == old.Mode && fi.UID == old.UID && fi.GID == old.GID &&
		fi.LinkModTime.Equal(old.LinkModTime) && fi.LinkUID == old.LinkUID && fi.LinkGID == old.LinkGID
}

// staleNode forgets what the node holds of the tree's file at its path:
// the Stat an open would reuse and the version whose pages the kernel
// keeps. Unlike a change through the API (see invalidate), it leaves the
// node's open handles alone: a program that has the file open keeps
// reading the version it opened (a reopen by path could find another
// file there, or none, in the middle of a read), as before the mount
// heard host changes at all; the mount's own renames and commits, heard
// here a moment later, must not disturb their readers.
func (iv *invalidator) staleNode(in *fs.Inode) {
	cn, ok := in.Operations().(*node)
	if !ok {
		return
	}
	cn.mu.Lock()
	cn.statAt, cn.statLong = time.Time{}, false
	cn.version = fileVersion{}
	cn.subdirsAt = time.Time{}
	cn.mu.Unlock()
}

// invalidateTree drops every name, attribute, page and listing the kernel
// holds at and under in.
func (iv *invalidator) invalidateTree(in *fs.Inode) {
	iv.staleNode(in)
	in.NotifyContent(0, 0)
	dropNegatives(in)
	for name, ch := range in.Children() {
		iv.invalidateTree(ch)
		in.NotifyEntry(name)
	}
}
