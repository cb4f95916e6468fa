package fusemount

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// dirHandle is an open directory: the listing is made (Readdir) at the
// first read and served from it; a seek back to the start lists afresh.
type dirHandle struct {
	n  *node
	ds fs.DirStream
}

var (
	_ fs.NodeOpendirHandler = (*node)(nil)
	_ fs.FileReaddirenter   = (*dirHandle)(nil)
	_ fs.FileSeekdirer      = (*dirHandle)(nil)
	_ fs.FileReleasedirer   = (*dirHandle)(nil)
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
		ds, errno := d.n.Readdir(ctx)
		if errno != 0 {
			return nil, errno
		}
		d.ds = ds
	}
	if !d.ds.HasNext() {
		return nil, 0
	}
	e, errno := d.ds.Next()
	return &e, errno
}

func (d *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if d.ds == nil || off == 0 {
		if d.ds != nil {
			d.ds.Close()
		}
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
}
