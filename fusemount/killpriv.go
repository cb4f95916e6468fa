package fusemount

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/julyfs/julyfs/third_party/go-fuse/fs"
	"github.com/julyfs/julyfs/third_party/go-fuse/fuse"

	"github.com/julyfs/julyfs/vfs"
)

// Set-ID bits are cleared by the daemon (FUSE_HANDLE_KILLPRIV_V2).
//
// Linux clears a file's set-user-ID bit, and its set-group-ID bit, at
// every chown of anything but a directory (root's too), and a regular
// file's at a write or a truncation by a caller without CAP_FSETID. The
// set-group-ID bit goes when the group may execute, and otherwise (it
// then marks mandatory locking) only when the caller is neither in the
// file's group nor privileged (Linux 6.2+, setattr_should_drop_sgid).
// Unless the daemon takes that on, the kernel does it for a FUSE
// filesystem itself: before each chown, and each such write or
// truncation, it asks the daemon for the file's mode (a GETATTR the
// program waits for) and sends the mode without the bits along with the
// change. `tar -x` as root chowns every file it makes: one request in
// six.
//
// The mount negotiates FUSE_HANDLE_KILLPRIV_V2 instead (Linux 5.11+) and
// clears the bits where the kernel says so:
//
//   - SETATTR of an owner or a group: always, as Linux does (on local:
//     the host's chown does it too, but as the daemon, not as the
//     caller; a tree whose owners the mount holds needs the mount to);
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
// A passthrough write by an unprivileged caller to a file whose set-ID
// bit the kernel does not know of (set on the host, behind the mount,
// while the writer held the file open) reaches no one: the kernel writes
// the host file as the daemon. A commit of a staging carries neither bit
// to the new file whoever wrote it (vfs/local keepAttrs), as before.

// killedMode is the permission bits mode without those a chown, or a
// write by an unprivileged caller, clears: set-user-ID, and set-group-ID
// when the group may execute or keepSGID (the caller is in the file's
// group or privileged: see keepsSGID) is false.
func killedMode(mode uint32, keepSGID bool) uint32 {
	mode &^= syscall.S_ISUID
	if mode&syscall.S_IXGRP != 0 || !keepSGID {
		mode &^= syscall.S_ISGID
	}
	return mode
}

// keepsSGID reports whether the caller of ctx keeps a set-group-ID bit
// without group execute on a file of group gid (Linux's
// in_group_or_capable): in the group, its primary one (the request's,
// the caller's fsgid) or one of its thread's supplementary groups, or,
// when priv, holding CAP_FSETID (both from /proc/PID/status; the kernel
// asks about writes only for callers without CAP_FSETID, so priv is
// false for those). A caller that cannot be read is neither.
func keepsSGID(ctx context.Context, gid uint32, priv bool) bool {
	c, ok := fuse.FromContext(ctx)
	if !ok {
		return false
	}
	if c.Gid == gid {
		return true
	}
	if c.Pid == 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(c.Pid), 10) + "/status")
	if err != nil {
		return false
	}
	want := strconv.FormatUint(uint64(gid), 10)
	for line := range strings.Lines(string(b)) {
		if groups, ok := strings.CutPrefix(line, "Groups:"); ok && slices.Contains(strings.Fields(groups), want) {
			return true
		}
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok && priv {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<4) != 0 // CAP_FSETID
		}
	}
	return false
}

// setattrKills reports whether SETATTR in asks for the set-ID bits of a
// file cleared (see above), and whether by chown's rules (a chown, or
// nothing to set: chown(f, -1, -1), or file_remove_privs, which comes for
// regular files and callers without CAP_FSETID only, for whom chown's
// rules and a write's agree).
func setattrKills(in *fuse.SetAttrIn) (kill, chown bool) {
	switch {
	case in.Valid&(fuse.FATTR_UID|fuse.FATTR_GID) != 0:
		return true, true
	case in.Valid&fuse.FATTR_SIZE != 0:
		return in.Valid&fuse.FATTR_KILL_SUIDGID != 0, false
	}
	// Nothing to set: file_remove_privs (callers without CAP_FSETID,
	// regular files only) or chown(f, -1, -1), whose rules are the same
	// for such callers: chown's.
	return in.Valid&^(fuse.FATTR_FH|fuse.FATTR_LOCKOWNER|fuse.FATTR_CTIME|fuse.FATTR_KILL_SUIDGID) == 0, true
}

// killable reports whether a file of type typ (S_IFMT bits) has set-ID
// bits a chown (chown) or a write clears: a regular file, and for a
// chown anything but a directory or a link.
func killable(typ uint32, chown bool) bool {
	switch typ {
	case syscall.S_IFREG:
		return true
	case syscall.S_IFDIR, syscall.S_IFLNK:
		return false
	}
	return chown
}

// killedModeFor is killedMode for the caller of ctx and a file of group
// gid (chown: by a chown, where a privileged caller keeps the bit).
func killedModeFor(ctx context.Context, mode, gid uint32, chown bool) uint32 {
	if mode&(syscall.S_ISGID|syscall.S_IXGRP) == syscall.S_ISGID {
		return killedMode(mode, keepsSGID(ctx, gid, chown))
	}
	return killedMode(mode, true)
}

// killPrivs clears the set-ID bits of n at p, whose attributes Getattr
// just answered into out, when it has one to clear for the caller of ctx
// (chown: by a chown, which root's clears too; gid: the file's group
// before it), through the tree as a chmod (see setMode), and answers its
// attributes anew into out. A tree without modes has no bits to clear.
func (n *node) killPrivs(ctx context.Context, f fs.FileHandle, p string, out *fuse.AttrOut, chown bool, gid uint32) syscall.Errno {
	if !killable(out.Mode&syscall.S_IFMT, chown) {
		return 0
	}
	mode := out.Mode & 0o7777
	killed := killedModeFor(ctx, mode, gid, chown)
	if killed == mode {
		return 0
	}
	if errno := n.setMode(p, killed); errno != 0 && errno != syscall.ENOTSUP {
		return errno
	}
	return n.Getattr(ctx, f, out)
}

// killLast clears the set-ID bits of the attributes n holds itself (a
// file whose name is gone, still open) for the caller of ctx (chown: by
// a chown, with the group before it), and reports whether a bit went.
// Callers hold n.mu.
func (n *node) killLast(ctx context.Context, chown bool) bool {
	mode := n.last.Mode & 0o7777
	killed := killedModeFor(ctx, mode, n.last.Gid, chown)
	n.last.Mode = n.last.Mode&syscall.S_IFMT | killed
	return killed != mode
}

// killAsked clears the set-ID bits of n when the request of ctx asked for
// it (OPEN, CREATE or WRITE; see killState). An error is logged, not
// answered: the open or the write itself went through.
func (n *node) killAsked(ctx context.Context) {
	if !n.m.killAsked(ctx) {
		return
	}
	if fi, ok := n.recent(); ok && vfs.ModeBits(fi.Mode)&(syscall.S_ISUID|syscall.S_ISGID) == 0 {
		return // nothing to clear: no request to the tree for each write
	}
	var out fuse.AttrOut
	if n.isDeleted() {
		// Open, its name gone: its attributes are the node's own.
		n.mu.Lock()
		killed := n.killLast(ctx, false)
		n.mu.Unlock()
		if killed {
			n.NotifyContent(-1, 0)
		}
		return
	}
	p, stale := n.livePath()
	if stale != 0 {
		return
	}
	if n.Getattr(ctx, nil, &out) != 0 {
		return
	}
	mode := out.Mode
	if errno := n.killPrivs(ctx, nil, p, &out, false, out.Gid); errno != 0 {
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
// CREATE: OPEN_KILL_SUIDGID; WRITE: WRITE_KILL_SUIDGID): rawFS marks
// them, the node asks (killAsked). Every WRITE of an unprivileged caller
// carries the flag.
type killState struct {
	killing requests[bool]
}

// killAsked reports whether the request of ctx is marked.
func (m *mount) killAsked(ctx context.Context) bool {
	_, ok := m.killing.get(ctx)
	return ok
}

// Open marks an OPEN with O_TRUNC whose kernel asks for the set-ID bits
// cleared (node.Open clears them).
func (r *rawFS) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if in.Mode&fuse.OPEN_KILL_SUIDGID == 0 || in.Flags&syscall.O_TRUNC == 0 {
		return r.RawFileSystem.Open(cancel, in, out)
	}
	r.m.killing.put(cancel, true)
	defer r.m.killing.take(cancel)
	return r.RawFileSystem.Open(cancel, in, out)
}

// Create marks a CREATE with O_TRUNC whose kernel asks for the set-ID
// bits cleared, for the file it finds there already (node.Create).
func (r *rawFS) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	if in.OpenFlags&fuse.OPEN_KILL_SUIDGID == 0 || in.Flags&syscall.O_TRUNC == 0 {
		return r.RawFileSystem.Create(cancel, in, name, out)
	}
	r.m.killing.put(cancel, true)
	defer r.m.killing.take(cancel)
	return r.RawFileSystem.Create(cancel, in, name, out)
}

// Writev marks a WRITE whose kernel asks for the set-ID bits cleared
// (handle.Write clears them). go-fuse serves each WRITE through Writev
// (Write only where Writev answers ENOSYS, which the node bridge never
// does).
func (r *rawFS) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	if in.WriteFlags&fuse.WRITE_KILL_SUIDGID == 0 {
		return r.RawFileSystem.Writev(cancel, in, data)
	}
	r.m.killing.put(cancel, true)
	defer r.m.killing.take(cancel)
	return r.RawFileSystem.Writev(cancel, in, data)
}
