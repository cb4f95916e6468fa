package fusemount

import (
	"context"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/julyfs/julyfs/vfs"
)

// Set-ID bits are cleared by the daemon (FUSE_HANDLE_KILLPRIV_V2).
//
// Linux clears a regular file's set-user-ID bit, and its set-group-ID
// bit when its group may execute it, at every chown (root's too), and at
// a write or a truncation by a caller without CAP_FSETID. Unless the
// daemon takes that on, the kernel does it for a FUSE filesystem itself:
// before each chown, and each such write or truncation, it asks the
// daemon for the file's mode (a GETATTR the program waits for) and sends
// the mode without the bits along with the change. `tar -x` as root
// chowns every file it makes: one request in six.
//
// The mount negotiates FUSE_HANDLE_KILLPRIV_V2 instead (Linux 5.11+) and
// clears the bits where the kernel says so:
//
//   - SETATTR of an owner or a group: always, as Linux does (on local:
//     the host's chown does it too; a tree whose owners the mount holds
//     needs the mount to);
//   - SETATTR of a size with FATTR_KILL_SUIDGID (truncate(2) by an
//     unprivileged caller);
//   - SETATTR with nothing to set: the kernel removing privileges before
//     a write, fallocate or copy_file_range by an unprivileged caller to a
//     file whose mode it holds has a bit to clear (file_remove_privs). A
//     write through passthrough never reaches the daemon: this request
//     is the only word of it;
//   - OPEN or CREATE of an existing file with O_TRUNC and
//     OPEN_KILL_SUIDGID, and WRITE with WRITE_KILL_SUIDGID (an
//     unprivileged caller; the kernel sets them however the mode is).
//
// A commit of a staging never carries the bits to the new file anyway
// (vfs/local keepAttrs); clearing them at the request shows the change at
// once, as on a local disk, and covers files written in place.

// killedMode is the permission bits mode without those a chown, or a
// write by an unprivileged caller, clears: set-user-ID, and set-group-ID
// when the group may execute (without it the bit marks mandatory locking,
// which Linux keeps).
func killedMode(mode uint32) uint32 {
	mode &^= syscall.S_ISUID
	if mode&(syscall.S_ISGID|syscall.S_IXGRP) == syscall.S_ISGID|syscall.S_IXGRP {
		mode &^= syscall.S_ISGID
	}
	return mode
}

// setattrKills reports whether SETATTR in asks for the set-ID bits of a
// regular file cleared (see above).
func setattrKills(in *fuse.SetAttrIn) bool {
	switch {
	case in.Valid&(fuse.FATTR_UID|fuse.FATTR_GID) != 0:
		return true
	case in.Valid&fuse.FATTR_SIZE != 0:
		return in.Valid&fuse.FATTR_KILL_SUIDGID != 0
	}
	return in.Valid&^(fuse.FATTR_FH|fuse.FATTR_LOCKOWNER|fuse.FATTR_CTIME|fuse.FATTR_KILL_SUIDGID) == 0
}

// killPrivs clears the set-ID bits of n at p, a regular file whose
// attributes Getattr just answered into out, when it has one to clear
// (through the tree, as a chmod: see setMode), and answers its attributes
// anew into out. A tree without modes has no bits to clear.
func (n *node) killPrivs(ctx context.Context, f fs.FileHandle, p string, out *fuse.AttrOut) syscall.Errno {
	if out.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return 0
	}
	mode := out.Mode & 0o7777
	killed := killedMode(mode)
	if killed == mode {
		return 0
	}
	if errno := n.setMode(p, killed); errno != 0 && errno != syscall.ENOTSUP {
		return errno
	}
	return n.Getattr(ctx, f, out)
}

// killAsked clears the set-ID bits of n when the request of ctx asked for
// it (OPEN, CREATE or WRITE; see killState). An error is logged, not
// answered: the open or the write itself went through.
func (n *node) killAsked(ctx context.Context) {
	if !n.m.killAsked(ctx) {
		return
	}
	if fi, ok := n.recent(); ok && killedMode(vfs.ModeBits(fi.Mode)) == vfs.ModeBits(fi.Mode) {
		return // nothing to clear: no request to the tree for each write
	}
	p, stale := n.livePath()
	if stale != 0 {
		return
	}
	var out fuse.AttrOut
	if n.Getattr(ctx, nil, &out) != 0 {
		return
	}
	mode := out.Mode
	if errno := n.killPrivs(ctx, nil, p, &out); errno != 0 {
		n.m.log.Printf("clearing the set-ID bits of %s: %v", p, errno)
	}
	if out.Mode != mode {
		// No attributes go back with an OPEN or a WRITE: the kernel
		// drops the mode it holds (only the attributes: offset -1
		// leaves the pages, and takes no lock a request may hold).
		n.NotifyContent(-1, 0)
	}
}

// killState holds the requests whose kernel asked for the set-ID bits
// cleared with a flag the go-fuse node API does not pass on (OPEN and
// CREATE: OPEN_KILL_SUIDGID; WRITE: WRITE_KILL_SUIDGID), by their cancel
// channel, as ptReleasing: rawFS marks them, the node asks.
type killState struct {
	killN   atomic.Int32 // requests marked: none is the common case
	killMu  sync.Mutex
	killing map[<-chan struct{}]bool
}

// markKill marks the request of cancel until the returned func is called.
func (m *mount) markKill(cancel <-chan struct{}) func() {
	m.killMu.Lock()
	if m.killing == nil {
		m.killing = map[<-chan struct{}]bool{}
	}
	m.killing[cancel] = true
	m.killMu.Unlock()
	m.killN.Add(1)
	return func() {
		m.killN.Add(-1)
		m.killMu.Lock()
		delete(m.killing, cancel)
		m.killMu.Unlock()
	}
}

// killAsked reports whether the request of ctx is marked (markKill).
func (m *mount) killAsked(ctx context.Context) bool {
	if m.killN.Load() == 0 {
		return false
	}
	c, ok := ctx.(*fuse.Context)
	if !ok || c.Cancel == nil {
		return false
	}
	m.killMu.Lock()
	defer m.killMu.Unlock()
	return m.killing[c.Cancel]
}

// Open marks an OPEN with O_TRUNC whose kernel asks for the set-ID bits
// cleared (node.Open clears them).
func (r *rawFS) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if in.Mode&fuse.OPEN_KILL_SUIDGID != 0 && in.Flags&syscall.O_TRUNC != 0 {
		defer r.m.markKill(cancel)()
	}
	return r.RawFileSystem.Open(cancel, in, out)
}

// Create marks a CREATE with O_TRUNC whose kernel asks for the set-ID
// bits cleared, for the file it finds there already (node.Create).
func (r *rawFS) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	if in.OpenFlags&fuse.OPEN_KILL_SUIDGID != 0 && in.Flags&syscall.O_TRUNC != 0 {
		defer r.m.markKill(cancel)()
	}
	return r.RawFileSystem.Create(cancel, in, name, out)
}

// Write marks a WRITE whose kernel asks for the set-ID bits cleared
// (handle.Write clears them).
func (r *rawFS) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	if in.WriteFlags&fuse.WRITE_KILL_SUIDGID != 0 {
		defer r.m.markKill(cancel)()
	}
	return r.RawFileSystem.Write(cancel, in, data)
}
