package plugins

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs/local"
)

// The host reads a vfs/local tree's files itself, beneath the root
// directory its plugin handed over (OpenReply.root_dir), with the tree's
// own first open of an exact path (local.OpenBeneath: the rule
// local.FS.BeneathDir states, one openat2). Only a success on a regular
// file is answered here, and it is the file the tree would read; anything
// else goes to the plugin, which applies the rest of its rules.

// openRootDir opens the directory open as fd in process pid through
// /proc/PID/fd/N and checks it is the one the plugin described (a
// directory with identity dev, ino).
func openRootDir(pid int, fd int64, dev, ino uint64) (*os.File, error) {
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/%d", pid, fd), os.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	gotDev, gotIno, dir, err := dirID(f)
	if err == nil && (!dir || gotDev != dev || gotIno != ino) {
		err = fmt.Errorf("descriptor %d of the plugin is not the root directory it described", fd)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// dirID returns the identity of the open file f and whether it is a
// directory.
func dirID(f *os.File) (dev, ino uint64, dir bool, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0, 0, false, err
	}
	return uint64(st.Dev), st.Ino, st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
}

// readBeneath reads the file at path beneath root as local.FS.Read would
// when its first open succeeds on a regular file; ok is false for every
// other outcome (the plugin answers those). root stays open during the
// open even if another goroutine closes it.
func readBeneath(root *os.File, path string) (data []byte, ok bool) {
	fd, size, ok := local.OpenBeneath(root, path)
	if !ok {
		return nil, false
	}
	defer unix.Close(fd)
	return readFD(fd, size)
}

// readFD reads fd from its start as local's readAll does: size bytes (the
// file as it was at the fstat) or up to its end when it ends first; to its
// end when size is 0.
func readFD(fd int, size int64) ([]byte, bool) {
	want := int(size)
	if size <= 0 || int64(want) != size {
		want = 512
	}
	buf := make([]byte, want)
	n := 0
	for {
		if n == len(buf) {
			if size > 0 && int64(n) == size {
				return buf, true
			}
			buf = append(buf, make([]byte, len(buf))...)
		}
		m, err := unix.Pread(fd, buf[n:], int64(n))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, false // the plugin reads it, or says why it cannot
		case m == 0:
			return buf[:n:n], true
		}
		n += m
	}
}

// readAtBeneath is local.FS.ReadAt of path when its first open succeeds
// on a regular file (ok false otherwise): len(p) bytes from off, io.EOF
// when the file ends first.
func readAtBeneath(root *os.File, path string, p []byte, off int64) (n int, eof, ok bool) {
	fd, _, ok := local.OpenBeneath(root, path)
	if !ok {
		return 0, false, false
	}
	defer unix.Close(fd)
	return readAtFD(fd, p, off)
}

// readAtFD reads len(p) bytes of fd from off; eof says the file ended
// first; ok is false on a read error (the plugin answers then).
func readAtFD(fd int, p []byte, off int64) (n int, eof, ok bool) {
	for n < len(p) {
		m, err := unix.Pread(fd, p[n:], off+int64(n))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, false, false
		case m == 0:
			return n, true, true
		}
		n += m
	}
	return n, false, true
}
