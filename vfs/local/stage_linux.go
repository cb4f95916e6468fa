package local

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openUnnamed creates a file with no name in the directory dir (relative to
// root) with O_TMPFILE: it never shows in a listing and vanishes with its
// descriptor unless linkUnnamed gives it a name.
func openUnnamed(root *os.Root, dir string) (*os.File, error) {
	d, err := root.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	fd, err := unix.Openat(int(d.Fd()), ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o666)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "staged"), nil
}

// linkUnnamed gives the file f made by openUnnamed the name name (one path
// component) in the directory dir (relative to root).
func linkUnnamed(root *os.Root, f *os.File, dir, name string) error {
	d, err := root.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), int(d.Fd()), name, unix.AT_SYMLINK_FOLLOW)
	if err == nil {
		return nil
	}
	// Without /proc: AT_EMPTY_PATH (needs CAP_DAC_READ_SEARCH).
	if unix.Linkat(int(f.Fd()), "", int(d.Fd()), name, unix.AT_EMPTY_PATH) == nil {
		return nil
	}
	return err
}
