package local

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openUnnamed creates a file with no name in the open directory dirfd with
// O_TMPFILE: it never shows in a listing and vanishes with its descriptor
// unless linkUnnamed gives it a name.
func openUnnamed(dirfd int) (*os.File, error) {
	fd, err := unix.Openat(dirfd, ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o666)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "staged"), nil
}

// linkUnnamed gives the file f made by openUnnamed the name name (one path
// component) in the open directory dirfd.
func linkUnnamed(f *os.File, dirfd int, name string) error {
	err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), dirfd, name, unix.AT_SYMLINK_FOLLOW)
	if err == nil {
		return nil
	}
	// Without /proc: AT_EMPTY_PATH (needs CAP_DAC_READ_SEARCH).
	if unix.Linkat(int(f.Fd()), "", dirfd, name, unix.AT_EMPTY_PATH) == nil {
		return nil
	}
	return err
}
