package cow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

// maxLinks bounds the links followed for one path, as the kernel's limit.
const maxLinks = 40

// FS is a copy-on-write tree over a base. Create it with [Open]; serve
// it as a vfs.FileSystem through [FS.Tree].
type FS struct {
	base  vfs.FileSystem
	dir   string
	blobs *blobStore
	uid   uint32
	gid   uint32

	// wmu serializes the changes (and the journal), so a change may ask
	// the base about paths between looking at the tree and changing it.
	wmu     sync.Mutex
	journal *os.File
	gen     int64

	// mu guards root. Readers hold it only to look paths up, never
	// while calling the base.
	mu   sync.RWMutex
	root *node

	watchers vfs.Watchers

	// view is a read-only View: every change fails.
	view bool

	// ignoreWhiteouts is a fault for the package's own tests: whiteouts
	// are recorded but not applied, so the conformance suite can be
	// shown to catch a layer without them.
	ignoreWhiteouts bool

	// upperSearch answers Search over the layer's own files (see
	// SetUpperSearch); nil: they are not searched.
	upperSearch atomic.Pointer[SearchFunc]
}

var (
	_ vfs.FileSystem        = (*FS)(nil)
	_ vfs.RangeReader       = (*FS)(nil)
	_ vfs.FileOpener        = (*FS)(nil)
	_ vfs.Stager            = (*FS)(nil)
	_ vfs.ConditionalWriter = (*FS)(nil)
	_ vfs.Renamer           = (*FS)(nil)
	_ vfs.DirMaker          = (*FS)(nil)
	_ vfs.DirRemover        = (*FS)(nil)
	_ vfs.Symlinker         = (*FS)(nil)
	_ vfs.ModeSetter        = (*FS)(nil)
	_ vfs.TimeSetter        = (*FS)(nil)
	_ vfs.LinkTimeSetter    = (*FS)(nil)
)

// Open opens the layer in directory dir (made if missing) over base. The
// layer's state is what its head.json and journal say (nothing, for a new
// directory); leftover stagings are removed. The base is only read.
func Open(base vfs.FileSystem, dir string) (*FS, error) {
	for _, d := range []string{dir, filepath.Join(dir, blobsDir), filepath.Join(dir, tmpDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("cow: %w", err)
		}
	}
	if olds, err := os.ReadDir(filepath.Join(dir, tmpDir)); err == nil {
		for _, e := range olds {
			os.Remove(filepath.Join(dir, tmpDir, e.Name()))
		}
	}
	h, err := readHead(dir)
	if err != nil {
		return nil, fmt.Errorf("cow: %w", err)
	}
	batches, err := readJournal(dir, h.Gen)
	if err != nil {
		return nil, fmt.Errorf("cow: %w", err)
	}
	root := build(h.Entries)
	for _, b := range batches {
		for _, o := range b {
			if o.Op == "set" && o.E == nil || o.Path == "" {
				return nil, fmt.Errorf("cow: %s: malformed change %+v", filepath.Join(dir, journalFile), o)
			}
			apply(root, o)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, journalFile)); errors.Is(err, fs.ErrNotExist) {
		if err := writeHead(dir, h); err != nil {
			return nil, fmt.Errorf("cow: %w", err)
		}
	}
	j, err := os.OpenFile(filepath.Join(dir, journalFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("cow: %w", err)
	}
	return &FS{
		base: base, dir: dir, blobs: &blobStore{dir: dir},
		uid: uint32(os.Getuid()), gid: uint32(os.Getgid()),
		journal: j, gen: h.Gen, root: root,
	}, nil
}

// Close closes the layer's journal. The tree must not be changed after.
func (c *FS) Close() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.journal == nil {
		return nil
	}
	return c.journal.Close()
}

// Dir is the layer directory.
func (c *FS) Dir() string { return c.dir }

// Base is the tree beneath the layer.
func (c *FS) Base() vfs.FileSystem { return c.base }

// Tree returns the layer as a vfs.FileSystem: c itself, or, when the base
// is a vfs.Notifier, a tree embedding c that is one too (it reports the
// layer's changes and the base's changes to paths the layer does not
// shadow). When the base also watches its host directory (vfs/local's
// WatchHost), so does that tree: it reports the host changes of paths
// the layer does not shadow, so a FUSE mount of the layer caches the
// base's host entries as long as a mount of the base alone would.
func (c *FS) Tree() vfs.FileSystem {
	if _, ok := c.base.(vfs.Notifier); ok {
		if _, ok := c.base.(hostWatcher); ok {
			return hostNotifyingFS{notifyingFS{c}}
		}
		return notifyingFS{c}
	}
	return c
}

type notifyingFS struct{ *FS }

var _ vfs.Notifier = notifyingFS{}

// Watch reports the layer's changes and the base's changes the layer
// lets through.
func (n notifyingFS) Watch(fn func(vfs.Change)) (cancel func()) {
	c1 := n.watchers.Watch(fn)
	c2 := n.base.(vfs.Notifier).Watch(func(ch vfs.Change) {
		if n.fallsToBase(ch.Path) {
			fn(ch)
		}
	})
	return func() { c1(); c2() }
}

// hostWatcher is a tree that reports the changes made to its host
// directory by any process (vfs/local).
type hostWatcher interface {
	WatchHost(fn func(local.HostChange)) (*local.HostWatch, error)
}

type hostNotifyingFS struct{ notifyingFS }

// WatchHost watches the base's host directory and reports its changes
// the layer lets through: those of paths the layer does not shadow, and
// every lost change. The layer's own changes are not host changes of the
// base; Watch reports them.
func (h hostNotifyingFS) WatchHost(fn func(local.HostChange)) (*local.HostWatch, error) {
	return h.base.(hostWatcher).WatchHost(func(ch local.HostChange) {
		if ch.Lost || h.fallsToBase(ch.Path) {
			fn(ch)
		}
	})
}

// commit records the ops in the journal and makes them, then reports
// changes. Callers hold wmu.
func (c *FS) commit(ops ...op) error {
	if c.view {
		p := "/"
		if len(ops) > 0 {
			p = ops[0].Path
		}
		return vfs.ReadOnly(p)
	}
	line, err := json.Marshal(journalLine{Ops: ops})
	if err != nil {
		return err
	}
	if _, err := c.journal.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("cow journal: %w", err)
	}
	c.mu.Lock()
	for _, o := range ops {
		apply(c.root, o)
	}
	c.mu.Unlock()
	return nil
}

// res is a path resolved against the upper layer.
type res struct {
	path    string // the path with the layer's links followed
	n       *node  // the layer's node at path; nil when it has none
	base    bool   // the base shows at path (n nil, or a directory over it)
	missing bool   // nothing is at path: a whiteout, a file as a parent, a dangling link
	e       Entry  // n's entry when the path was resolved
}

func (r res) isDir() bool { return r.n != nil && (r.e.Type == "" || r.e.Type == TypeDir) }

// resolve looks p up in the layer, following its links in p's parents
// and, with followLast, at its end. Links of the base are the base's to
// follow.
func (c *FS) resolve(p string, followLast bool) res {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.resolveLocked(p, followLast)
}

func (c *FS) resolveLocked(p string, followLast bool) res {
	todo := vfs.Split(p)
	n, at, vis := c.root, "/", true
	for hops := 0; len(todo) > 0; {
		seg := todo[0]
		todo = todo[1:]
		if n == nil { // below a base directory: the base's
			at = vfs.Join(at, seg)
			continue
		}
		if !n.isDir() {
			return res{path: vfs.Join(at, seg), missing: true}
		}
		ch := n.children[seg]
		if ch == nil {
			if !vis {
				return res{path: vfs.Join(at, seg), missing: true}
			}
			n, at = nil, vfs.Join(at, seg)
			continue
		}
		switch ch.e.Type {
		case TypeWhiteout:
			if c.ignoreWhiteouts {
				n, at = nil, vfs.Join(at, seg)
				continue
			}
			return res{path: vfs.Join(at, seg), missing: true}
		case TypeLink:
			if len(todo) > 0 || followLast {
				if hops++; hops > maxLinks {
					return res{path: vfs.Join(at, seg), missing: true}
				}
				target := ch.e.Target
				if !strings.HasPrefix(target, "/") {
					target = at + "/" + target
				}
				todo = append(vfs.Split(vfs.Clean(target)), todo...)
				n, at, vis = c.root, "/", true
				continue
			}
		case TypeDir:
			vis = vis && !ch.e.Opaque
		}
		n, at = ch, vfs.Join(at, seg)
	}
	if n == nil {
		return res{path: at, base: true}
	}
	return res{path: at, n: n, base: n.isDir() && vis, e: n.e}
}

// visible reports whether the base shows at clean p (no upper node hides
// it: no whiteout, opaque directory or file above or at it, links not
// followed). Callers hold mu.
func (c *FS) visibleLocked(p string) bool {
	n := c.root
	for _, seg := range vfs.Split(p) {
		if n == nil {
			return true
		}
		if !n.isDir() {
			return false
		}
		ch := n.children[seg]
		if ch != nil {
			switch {
			case ch.e.Type == TypeWhiteout && !c.ignoreWhiteouts:
				return false
			case ch.e.Type == TypeDir && ch.e.Opaque:
				return false
			}
		}
		n = ch
	}
	return n == nil || n.isDir()
}

// fallsToBase reports whether the base's entry at clean p is what the
// layer shows there unchanged: no upper node at or above it but
// directories that leave the base's contents visible.
func (c *FS) fallsToBase(p string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := c.root
	for _, seg := range vfs.Split(p) {
		ch := n.children[seg]
		switch {
		case ch == nil:
			return true
		case ch.e.Type == TypeWhiteout && c.ignoreWhiteouts:
			return true
		case !ch.isDir() || ch.e.Opaque:
			return false
		}
		n = ch
	}
	return true
}

// overBase reports whether n is a directory that shows the base's
// directory at its path as it is (its mode or time aside).
func (n *node) overBase() bool {
	return n.pass() || n.e.Type == TypeDir && !n.e.Opaque && n.e.BaseKind == "dir"
}

// clean reports whether the layer changes nothing at or below clean p
// (modes and times of directories aside): the base answers for the whole
// scope.
func (c *FS) clean(p string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := c.root
	for _, seg := range vfs.Split(p) {
		ch := n.children[seg]
		if ch == nil {
			return true
		}
		if !ch.overBase() {
			return false
		}
		n = ch
	}
	return !changedBelow(n)
}

// changedBelow reports whether anything below the directory n differs
// from the base but the modes and times of directories.
func changedBelow(n *node) bool {
	for _, ch := range n.children {
		if !ch.overBase() || changedBelow(ch) {
			return true
		}
	}
	return false
}

// rebase rewrites the path of a PathError about rp to p.
func rebase(err error, rp, p string) error {
	var pe *vfs.PathError
	if rp != p && errors.As(err, &pe) && pe.Path == rp {
		return pe.WithPath(p)
	}
	return err
}

// Stat describes path.
func (c *FS) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return vfs.FileInfo{}, err
	}
	r0 := c.resolve(p, false)
	if r0.n != nil && r0.e.Type == TypeLink {
		info, err := c.statRes(ctx, p, c.resolve(p, true))
		info.Link, info.LinkModTime = true, r0.e.ModTime
		return info, err
	}
	return c.statRes(ctx, p, r0)
}

func (c *FS) statRes(ctx context.Context, p string, r res) (vfs.FileInfo, error) {
	switch {
	case r.missing:
		return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}, nil
	case r.n == nil:
		info, err := c.base.Stat(ctx, r.path)
		info.Path = p
		return info, rebase(err, r.path, p)
	}
	e := r.e
	switch e.Type {
	case TypeFile:
		return vfs.FileInfo{Path: p, Kind: vfs.KindFile, Size: e.Size, ModTime: e.ModTime, ETag: e.ETag(),
			Mode: vfs.FileModeOf(e.Mode), UID: c.uid, GID: c.gid, HasMode: true}, nil
	case TypeDir:
		return vfs.FileInfo{Path: p, Kind: vfs.KindDir, ModTime: e.ModTime,
			Mode: vfs.FileModeOf(e.Mode), UID: c.uid, GID: c.gid, HasMode: true}, nil
	case TypeLink: // a link not followed: only as a dangling one's end
		return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}, nil
	}
	// A pass-through directory: the base's, when it still has one.
	info, err := c.base.Stat(ctx, r.path)
	if err != nil {
		return vfs.FileInfo{}, rebase(err, r.path, p)
	}
	info.Path = p
	if info.Kind != vfs.KindDir {
		info = vfs.FileInfo{Path: p, Kind: vfs.KindDir, UID: c.uid, GID: c.gid, Mode: 0o755, HasMode: true}
	}
	info.Link = false
	return info, nil
}

// file returns the layer's file entry at the path r names, or ok false
// when the base holds it.
func (c *FS) fileAt(p string, r res) (Entry, bool, error) {
	switch {
	case r.missing:
		return Entry{}, false, vfs.NotFound(p)
	case r.n == nil:
		return Entry{}, false, nil
	}
	e := r.e
	switch e.Type {
	case TypeFile:
		return e, true, nil
	case TypeLink:
		return Entry{}, false, vfs.NotFound(p)
	}
	return Entry{}, false, vfs.IsDir(p)
}

// blobError names a blob of the layer that cannot be read.
func (c *FS) blobError(p string, e Entry, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return vfs.NewError(vfs.KindOther, p, fmt.Errorf("layer %s: blob %s of %s is missing", c.dir, e.Hash, p))
	}
	return vfs.NewError(vfs.KindOther, p, err)
}

// Read returns the whole contents of the file at path.
func (c *FS) Read(ctx context.Context, path string) ([]byte, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := c.resolve(p, true)
	e, upper, err := c.fileAt(p, r)
	if err != nil {
		return nil, err
	}
	if !upper {
		data, err := c.base.Read(ctx, r.path)
		return data, rebase(err, r.path, p)
	}
	data, err := os.ReadFile(c.blobs.path(e.Hash))
	if err != nil {
		return nil, c.blobError(p, e, err)
	}
	return data, nil
}

// ReadAt reads part of the file at path (vfs.RangeReader): a layer file
// from its blob, a base file through vfs.ReadAt.
func (c *FS) ReadAt(ctx context.Context, path string, b []byte, off int64) (int, error) {
	p := vfs.Clean(path)
	r := c.resolve(p, true)
	e, upper, err := c.fileAt(p, r)
	if err != nil {
		return 0, err
	}
	if !upper {
		n, err := vfs.ReadAt(ctx, c.base, r.path, b, off)
		return n, rebase(err, r.path, p)
	}
	f, err := os.Open(c.blobs.path(e.Hash))
	if err != nil {
		return 0, c.blobError(p, e, err)
	}
	defer f.Close()
	if off < 0 {
		return 0, vfs.NewError(vfs.KindOther, p, errors.New("negative offset"))
	}
	return f.ReadAt(b, off)
}

// OpenFile opens the file at path (vfs.FileOpener). A layer file's reader
// is its blob, which never changes, so it sees the file as it was when
// opened and offers its descriptor (vfs.FileDescriptor) for passthrough
// reads; a base file opens through vfs.OpenFile.
func (c *FS) OpenFile(ctx context.Context, path string) (vfs.FileReader, error) {
	p := vfs.Clean(path)
	r := c.resolve(p, true)
	e, upper, err := c.fileAt(p, r)
	if err != nil {
		return nil, err
	}
	if !upper {
		f, err := vfs.OpenFile(ctx, c.base, r.path)
		return f, rebase(err, r.path, p)
	}
	f, err := os.Open(c.blobs.path(e.Hash))
	if err != nil {
		return nil, c.blobError(p, e, err)
	}
	return &blobReader{f: f, size: e.Size}, nil
}

type blobReader struct {
	f    *os.File
	size int64
}

func (b *blobReader) ReadAt(p []byte, off int64) (int, error) { return b.f.ReadAt(p, off) }
func (b *blobReader) Close() error                            { return b.f.Close() }
func (b *blobReader) Size() int64                             { return b.size }
func (b *blobReader) Fd() uintptr                             { return b.f.Fd() }

// now is the time a change stamps on what it makes.
func now() time.Time { return time.Now().Round(0) }
