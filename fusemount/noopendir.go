package fusemount

import (
	"syscall"

	"github.com/julyfs/julyfs/third_party/go-fuse/fuse"
)

// No-opendir on read-only mounts. A read-only mount answers OPENDIR with
// ENOSYS, so the kernel stops sending OPENDIR and RELEASEDIR for the
// mount (Linux 5.1+) and caches every listing as if the open had answered
// FOPEN_CACHE_DIR | FOPEN_KEEP_CACHE, which every listing of a tree that
// reports its changes gets anyway (see OpendirHandle); a warm `find` then
// costs no request at all. The READDIR and READDIRPLUS requests that fill
// the cache come without a handle (Fh 0, which go-fuse never hands out):
// each is served through a handle opened and released for that request,
// positioned at the request's offset (a listing the kernel reads in
// several requests is listed again for each, from the tree's List). A
// read-write mount keeps its directory handles.

// OpenDir answers ENOSYS on a read-only mount (no-opendir).
func (r *rawFS) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if r.m.opts.ReadOnly && r.m.watched.Load() {
		return fuse.ENOSYS
	}
	return r.RawFileSystem.OpenDir(cancel, in, out)
}

func (r *rawFS) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return r.withDirHandle(cancel, in, func(in *fuse.ReadIn) fuse.Status {
		return r.RawFileSystem.ReadDir(cancel, in, out)
	})
}

func (r *rawFS) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return r.withDirHandle(cancel, in, func(in *fuse.ReadIn) fuse.Status {
		return r.RawFileSystem.ReadDirPlus(cancel, in, out)
	})
}

// withDirHandle runs read with in, through a directory handle opened for
// it when in comes without one (no-opendir).
func (r *rawFS) withDirHandle(cancel <-chan struct{}, in *fuse.ReadIn, read func(*fuse.ReadIn) fuse.Status) fuse.Status {
	if in.Fh != 0 {
		return read(in)
	}
	r.m.handlelessReads.Add(1)
	var oo fuse.OpenOut
	if st := r.RawFileSystem.OpenDir(cancel, &fuse.OpenIn{InHeader: in.InHeader, Flags: syscall.O_RDONLY | syscall.O_DIRECTORY}, &oo); st != fuse.OK {
		return st
	}
	defer r.RawFileSystem.ReleaseDir(&fuse.ReleaseIn{InHeader: in.InHeader, Fh: oo.Fh})
	with := *in
	with.Fh = oo.Fh
	return read(&with)
}
