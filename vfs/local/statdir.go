package local

import (
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
)

// StatDir is a directory of the tree held open so that its entries can be
// described by their names alone: one fstatat each, where Stat resolves
// the whole path beneath the root again (an openat2, an fstat and a
// close). A FUSE mount holds one while the kernel reads a listing with
// readdirplus, which asks for the attributes of every entry listed.
// Its methods are safe for concurrent use; Stat after Close answers
// ok false.
type StatDir struct {
	path   string // clean posix path
	mu     sync.RWMutex
	fd     int      // guarded by mu: never used once closed (the number may be reused)
	f      *os.File // os.Root's file fd belongs to, or nil (see openFD)
	closed bool
}

// OpenStatDir opens the directory at path, reached as List reaches it
// (links inside the root followed, resolved beneath the root). The
// caller closes it. What its Stat answers is about the directory opened
// now: if another program moves the directory meanwhile, about its
// entries where it went, as a listing read from it is; hold it for the
// time of a listing only.
func (fsys *FS) OpenStatDir(path string) (*StatDir, error) {
	p := vfs.Clean(path)
	fd, f, err := fsys.openFD(rel(p), os.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	return &StatDir{path: p, fd: fd, f: f}, nil
}

// Stat answers what the tree's Stat answers of the entry name of the
// directory (one path component) when it is a regular file or a
// directory. ok is false otherwise (a link, which Stat follows; a special
// file; a name that is missing or not one component; an error): the
// caller asks the tree's Stat.
func (d *StatDir) Stat(name string) (fi vfs.FileInfo, ok bool) {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return vfs.FileInfo{}, false
	}
	var st unix.Stat_t
	d.mu.RLock()
	var err error = unix.EBADF
	if !d.closed {
		err = unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	}
	d.mu.RUnlock()
	if err != nil {
		return vfs.FileInfo{}, false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFDIR:
		return infoStat(vfs.Join(d.path, name), &st), true
	}
	return vfs.FileInfo{}, false
}

// Close releases the directory; a second Close does nothing.
func (d *StatDir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if d.f != nil {
		return d.f.Close()
	}
	return unix.Close(d.fd)
}
