package fusemount

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/julyfs/julyfs/vfs"
)

// state is what a mount knows of its tree beyond the contract, apart from
// the kernel: directories made by mkdir with nothing under them yet,
// directories rmdir hid, attributes the tree cannot store, and the changes
// the mount is making itself. It is a plain type over a vfs.FileSystem
// (no go-fuse in it), so its rules are tested without a kernel
// (state_test.go); the go-fuse nodes reach it through the mount that
// embeds it (binding.go). Its methods are safe for concurrent use.
type state struct {
	fsys vfs.FileSystem
	// ctx is passed to every backend call. FUSE interrupts are not
	// honoured (a Go client is interrupted by every SIGURG), so an
	// operation runs to completion; ctx is cancelled when the mount is torn
	// down.
	ctx context.Context

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
	// self holds, by path, the changes the mount itself has in flight
	// (see beginSelf), so the tree's reports of them do not invalidate
	// what the kernel already knows.
	self map[string]*selfBracket
	// selfTrees counts the mount's own renames in flight, by the paths
	// of what moves: every path under them is the mount's own change.
	selfTrees map[string]int
	// foreign queues an invalidation of a change taken for the mount's
	// own that turned out to be another's (see endSelf); set once the
	// invalidator runs, guarded by mu.
	foreign func(vfs.Change)
}

// selfBracket is what the mount's own changes in flight at a path expect
// the tree to report: open counts them, want the reports not heard yet,
// by kind (vfs.ChangeOp).
type selfBracket struct {
	open int
	want [vfs.ChangeDelete + 1]int
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

func newState(ctx context.Context, fsys vfs.FileSystem) state {
	return state{
		fsys:      fsys,
		ctx:       ctx,
		pending:   map[string]map[string]time.Time{},
		hidden:    map[string]bool{},
		meta:      map[string]meta{},
		self:      map[string]*selfBracket{},
		selfTrees: map[string]int{},
	}
}

// stat answers Stat for path, merged with what the mount holds: pending
// directories show, hidden ones do not, and the root is always a directory.
func (s *state) stat(p string) (vfs.FileInfo, error) {
	fi, err := s.fsys.Stat(s.ctx, p)
	if err != nil {
		return fi, err
	}
	switch fi.Kind {
	case vfs.KindMissing:
		if p == "/" {
			return vfs.FileInfo{Path: p, Kind: vfs.KindDir}, nil
		}
		s.mu.Lock()
		t, ok := s.pending[vfs.Parent(p)][vfs.Base(p)]
		s.mu.Unlock()
		if ok {
			return vfs.FileInfo{Path: p, Kind: vfs.KindDir, ModTime: t}, nil
		}
	case vfs.KindDir:
		if s.isHidden(p) {
			return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}, nil
		}
	}
	return fi, nil
}

// isHidden reports whether p is a directory rmdir removed that is still
// empty (nothing under it but hidden directories); once something is under
// it again it is no longer hidden.
func (s *state) isHidden(p string) bool {
	s.mu.Lock()
	h := s.hidden[p]
	s.mu.Unlock()
	if !h {
		return false
	}
	entries, err := s.list(p)
	if err != nil || len(entries) == 0 {
		return true
	}
	s.mu.Lock()
	delete(s.hidden, p)
	s.mu.Unlock()
	return false
}

// list returns the children of directory p: the tree's List merged with the
// pending directories under p, without hidden ones, sorted by path.
func (s *state) list(p string) ([]vfs.DirEntry, error) {
	var entries []vfs.DirEntry
	for e, err := range s.fsys.List(s.ctx, p) {
		if err != nil {
			return nil, err
		}
		if e.Kind == vfs.KindDir && s.isHidden(e.Path) {
			continue
		}
		entries = append(entries, e)
	}
	s.mu.Lock()
	names := slices.Sorted(maps.Keys(s.pending[p]))
	s.mu.Unlock()
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
func (s *state) addPending(p string, t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir, name := vfs.Parent(p), vfs.Base(p)
	if s.pending[dir] == nil {
		s.pending[dir] = map[string]time.Time{}
	}
	s.pending[dir][name] = t
	delete(s.hidden, p)
}

// removePending forgets p as a pending directory.
func (s *state) removePending(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir, name := vfs.Parent(p), vfs.Base(p)
	delete(s.pending[dir], name)
	if len(s.pending[dir]) == 0 {
		delete(s.pending, dir)
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
func (s *state) holdParents(p string) {
	now := time.Now()
	for d := vfs.Parent(p); d != "/"; d = vfs.Parent(d) {
		fi, err := s.stat(d)
		if err != nil || fi.Kind != vfs.KindMissing {
			return
		}
		if !s.dropsDirs(d) {
			return
		}
		s.addPending(d, now)
	}
}

// dropsDirs reports whether the part of the tree at the missing directory
// d has no directories of its own (its MakeDir is unsupported), so the
// mount must hold d itself. It asks MakeDir of the nearest ancestor that
// is a directory (a no-op there), never of d.
func (s *state) dropsDirs(d string) bool {
	if _, ok := s.fsys.(vfs.DirMaker); !ok {
		return true
	}
	a := vfs.Parent(d)
	for a != "/" {
		if fi, err := s.fsys.Stat(s.ctx, a); err == nil && fi.Kind == vfs.KindDir {
			break
		}
		a = vfs.Parent(a)
	}
	return errors.Is(vfs.MakeDir(s.ctx, s.fsys, a), errors.ErrUnsupported)
}

// rebase moves everything the mount holds about paths at or under src to
// dst: pending directories, hidden ones and metadata.
func (s *state) rebase(src, dst string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	move := func(p string) string {
		rel, _ := vfs.Rel(p, src)
		return vfs.Join(dst, rel)
	}
	for dir, names := range s.pending {
		for name, t := range names {
			p := vfs.Join(dir, name)
			if !vfs.HasPrefix(p, src) {
				continue
			}
			delete(names, name)
			q := move(p)
			if s.pending[vfs.Parent(q)] == nil {
				s.pending[vfs.Parent(q)] = map[string]time.Time{}
			}
			s.pending[vfs.Parent(q)][vfs.Base(q)] = t
		}
		if len(names) == 0 {
			delete(s.pending, dir)
		}
	}
	for p := range s.hidden {
		if vfs.HasPrefix(p, src) {
			delete(s.hidden, p)
		}
	}
	for p, md := range s.meta {
		if vfs.HasPrefix(p, src) {
			delete(s.meta, p)
			s.meta[move(p)] = md
		}
	}
}

// forget drops what the mount holds about paths at or under p.
func (s *state) forget(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for q := range s.meta {
		if vfs.HasPrefix(q, p) {
			delete(s.meta, q)
		}
	}
}

func (s *state) getMeta(p string) meta {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.meta[p]
}

func (s *state) setMeta(p string, fn func(*meta)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	md := s.meta[p]
	fn(&md)
	if md == (meta{}) {
		delete(s.meta, p)
		return
	}
	s.meta[p] = md
}

// beginSelf and endSelf bracket a change the mount makes itself at p,
// whose report by the tree (Notifier reports are synchronous: it comes
// before the change returns) is then not sent to the kernel, which
// already knows. op is the kind of report the change makes when it is
// made (vfs.ChangeWrite, vfs.ChangeDelete), or 0 when it makes none (a
// chmod, utimes or chown of a directory or of a link itself, on local:
// and temp:; see node.metaReport). Only one report
// of that kind is taken for the mount's: another program's change of the
// same path meanwhile, of another kind or a second one, goes to the
// kernel.
func (s *state) beginSelf(p string, op vfs.ChangeOp) {
	s.mu.Lock()
	b := s.self[p]
	if b == nil {
		b = &selfBracket{}
		s.self[p] = b
	}
	b.open++
	if op > 0 && int(op) < len(b.want) {
		b.want[op]++
	}
	s.mu.Unlock()
}

// endSelf ends a beginSelf(p, op). made says the change was made (so the
// tree reported it): when it was not (an error; nothing to do) but a
// report of its kind was taken for it, that report was another's, and is
// sent to the kernel now.
func (s *state) endSelf(p string, op vfs.ChangeOp, made bool) {
	s.mu.Lock()
	b := s.self[p]
	var foreign func(vfs.Change)
	if b != nil {
		if op > 0 && int(op) < len(b.want) {
			if b.want[op] > 0 {
				b.want[op]-- // never heard: nothing was taken for this change
			} else if !made {
				foreign = s.foreign
			}
		}
		if b.open--; b.open <= 0 {
			delete(s.self, p)
		}
	}
	s.mu.Unlock()
	if foreign != nil {
		foreign(vfs.Change{Path: p, Op: op})
	}
}

// ownReport reports whether c is the tree's report of a change the mount
// has in flight (beginSelf, beginSelfTree), and takes it off what is
// expected.
func (s *state) ownReport(c vfs.Change) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.self[c.Path]; b != nil && int(c.Op) < len(b.want) && b.want[c.Op] > 0 {
		b.want[c.Op]--
		return true
	}
	for t := range s.selfTrees {
		if vfs.HasPrefix(c.Path, t) {
			return true
		}
	}
	return false
}

// setForeign sets where endSelf sends a report it took for the mount's
// own by mistake.
func (s *state) setForeign(fn func(vfs.Change)) {
	s.mu.Lock()
	s.foreign = fn
	s.mu.Unlock()
}

// beginSelfTree and endSelfTree bracket a rename the mount makes of p and
// everything under it.
func (s *state) beginSelfTree(p string) {
	s.mu.Lock()
	s.selfTrees[p]++
	s.mu.Unlock()
}

func (s *state) endSelfTree(p string) {
	s.mu.Lock()
	if s.selfTrees[p]--; s.selfTrees[p] <= 0 {
		delete(s.selfTrees, p)
	}
	s.mu.Unlock()
}

// write commits data to path through the tree.
func (s *state) write(p string, data []byte) error {
	s.beginSelf(p, vfs.ChangeWrite)
	err := s.fsys.Write(s.ctx, p, data)
	s.endSelf(p, vfs.ChangeWrite, err == nil)
	return err
}

// create writes an empty file at p unless something is there; it fails with
// KindConflict when something is.
func (s *state) create(p string) error {
	s.beginSelf(p, vfs.ChangeWrite)
	_, err := vfs.WriteIf(s.ctx, s.fsys, p, nil, vfs.Precondition{IfNoneMatch: true})
	s.endSelf(p, vfs.ChangeWrite, err == nil)
	return err
}

// remove deletes the file at p through the tree.
func (s *state) remove(p string) error {
	s.beginSelf(p, vfs.ChangeDelete)
	err := s.fsys.Delete(s.ctx, p)
	s.endSelf(p, vfs.ChangeDelete, err == nil)
	return err
}

// isPending reports whether p is a directory the mount holds (mkdir).
func (s *state) isPending(p string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.pending[vfs.Parent(p)][vfs.Base(p)]
	return ok
}

// hide records p as a directory rmdir removed that the tree still reports
// (it cannot remove directories of its own).
func (s *state) hide(p string) {
	s.mu.Lock()
	s.hidden[p] = true
	s.mu.Unlock()
}
