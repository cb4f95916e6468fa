package fusemount

import (
	"context"
	"sync"
	"syscall"

	"github.com/julyfs/julyfs/third_party/go-fuse/fs"
	"github.com/julyfs/julyfs/third_party/go-fuse/fuse"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

// dirHandle is an open directory: the listing is made (Readdir) at the
// first read and served from it; a seek back to the start lists afresh.
//
// On a tree that can hold a directory open to describe its entries by
// name (statDirOpener: a local: tree mounted alone), the handle holds
// one while the listing is read (from the first read to its end, a seek
// or the release), and readdirplus's lookup of each entry listed asks it
// (one fstatat) instead of the tree's Stat (an openat2 of the whole
// path, an fstat, a close): rm -rf and ls -l read every directory with
// readdirplus. It answers for regular files and directories that are
// not links; anything else goes to the node's Lookup, as do entries
// once the listing was read to its end.
type dirHandle struct {
	n  *node
	ds fs.DirStream

	sdMu sync.Mutex
	sd   *local.StatDir // nil: none held
}

// statDirOpener is a tree that opens a directory to describe its entries
// by name (vfs/local).
type statDirOpener interface {
	OpenStatDir(path string) (*local.StatDir, error)
}

var (
	_ fs.NodeOpendirHandler = (*node)(nil)
	_ fs.FileReaddirenter   = (*dirHandle)(nil)
	_ fs.FileSeekdirer      = (*dirHandle)(nil)
	_ fs.FileReleasedirer   = (*dirHandle)(nil)
	_ fs.FileLookuper       = (*dirHandle)(nil)
	_ statDirOpener         = (*local.FS)(nil)
)

// OpendirHandle opens directory n and lets the kernel cache its listing
// across opens (FOPEN_CACHE_DIR, FOPEN_KEEP_CACHE). The kernel drops the
// cached listing when the directory changes through the mount, when the
// mount invalidates the directory (a change the tree reported), and when
// the directory's mtime has changed at the next attribute refresh (a host
// directory of a local: tree edited by another program: within the
// attribute timeout).
// A tree that reports no changes (no vfs.Notifier) gets no listing cache.
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if !n.m.watched.Load() {
		return &dirHandle{n: n}, 0, 0
	}
	return &dirHandle{n: n}, fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE, 0
}

func (d *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if d.ds == nil {
		d.openStatDir()
		ds, errno := d.n.Readdir(ctx)
		if errno != 0 {
			d.closeStatDir()
			return nil, errno
		}
		d.ds = ds
	}
	if !d.ds.HasNext() {
		d.closeStatDir()
		return nil, 0
	}
	e, errno := d.ds.Next()
	return &e, errno
}

// openStatDir holds the directory open for the lookups of the listing
// about to be read, where the tree can.
func (d *dirHandle) openStatDir() {
	d.closeStatDir()
	o, ok := d.n.m.fsys.(statDirOpener)
	if !ok {
		return
	}
	p, stale := d.n.livePath()
	if stale != 0 {
		return
	}
	sd, err := o.OpenStatDir(p)
	if err != nil {
		return
	}
	d.sdMu.Lock()
	d.sd = sd
	d.sdMu.Unlock()
}

func (d *dirHandle) closeStatDir() {
	d.sdMu.Lock()
	sd := d.sd
	d.sd = nil
	d.sdMu.Unlock()
	if sd != nil {
		sd.Close()
	}
}

// Lookup is readdirplus's lookup of name, the entry Readdirent just
// listed: the node's Lookup, answered from the directory held open when
// it describes name (see dirHandle).
func (d *dirHandle) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	d.sdMu.Lock()
	sd := d.sd
	d.sdMu.Unlock()
	if sd == nil {
		return d.n.Lookup(ctx, name, out)
	}
	n := d.n
	dir, stale := n.livePath()
	if stale != 0 {
		return d.n.Lookup(ctx, name, out)
	}
	p := vfs.Join(dir, name)
	gen := n.m.hostGen.Load()
	fi, ok := sd.Stat(name)
	if !ok || fi.Kind == vfs.KindDir {
		// Directories (which the mount may hold or hide: state.stat)
		// and all else: as a LOOKUP would.
		return d.n.Lookup(ctx, name, out)
	}
	return n.lookedUp(ctx, name, p, fi, gen, out), 0
}

func (d *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if d.ds == nil || off == 0 {
		if d.ds != nil {
			d.ds.Close()
		}
		d.closeStatDir() // a seek may skip what would have closed it
		ds, errno := d.n.Readdir(ctx)
		if errno != 0 {
			return errno
		}
		d.ds = ds
	}
	if sd, ok := d.ds.(fs.FileSeekdirer); ok {
		return sd.Seekdir(ctx, off)
	}
	return syscall.ENOTSUP
}

func (d *dirHandle) Releasedir(ctx context.Context, releaseFlags uint32) {
	if d.ds != nil {
		d.ds.Close()
	}
	d.closeStatDir()
}
