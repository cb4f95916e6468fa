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

// copyFile makes dst, an empty file, a copy of src as it is now and
// returns the size copied: a clone (FICLONE) where the filesystem shares
// extents between files (btrfs, XFS), else only src's data ranges
// (SEEK_DATA, SEEK_HOLE), each with copy_file_range, its holes left holes,
// so staging a sparse file costs what it holds, not its size. Space src
// has reserved (fallocate) is reserved in dst too.
func copyFile(dst, src *os.File) (int64, error) {
	sfd, dfd := int(src.Fd()), int(dst.Fd())
	var st unix.Stat_t
	if err := unix.Fstat(sfd, &st); err != nil {
		return 0, err
	}
	size := st.Size
	if size == 0 {
		return 0, nil
	}
	if unix.IoctlFileClone(dfd, sfd) == nil {
		if err := unix.Fstat(dfd, &st); err != nil {
			return 0, err
		}
		return st.Size, nil
	}
	copied := int64(0)
	for off := int64(0); off < size; {
		data, err := unix.Seek(sfd, off, unix.SEEK_DATA)
		if err == unix.ENXIO {
			break // no data past off: a hole to the end
		}
		end := size
		if err != nil {
			data = off // no SEEK_DATA here: copy the rest whole
		} else if hole, err := unix.Seek(sfd, data, unix.SEEK_HOLE); err == nil {
			end = min(hole, size)
		}
		if data >= end {
			break
		}
		if err := copyRange(dfd, sfd, data, end-data); err != nil {
			return 0, err
		}
		copied += end - data
		off = end
	}
	if err := unix.Ftruncate(dfd, size); err != nil {
		return 0, err
	}
	if st.Blocks*512 > copied+1<<20 {
		// Space reserved beyond the data (fallocate: a hole to
		// SEEK_DATA) is reserved in the copy too, so the writes the
		// reservation was made for do not run out of space. At best:
		// without it the copy is still whole.
		unix.Fallocate(dfd, 0, 0, size)
	}
	return size, nil
}

// copyRange copies n bytes at off from sfd to the same offset of dfd:
// copy_file_range, else (another filesystem, an old kernel) pread and
// pwrite. A file that shrank meanwhile ends the copy early.
func copyRange(dfd, sfd int, off, n int64) error {
	roff, woff := off, off
	for n > 0 {
		k, err := unix.CopyFileRange(sfd, &roff, dfd, &woff, int(min(n, 1<<30)), 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return copyRangeRW(dfd, sfd, roff, n)
		}
		if k == 0 {
			return nil
		}
		n -= int64(k)
	}
	return nil
}

// copyRangeRW is copyRange with pread and pwrite.
func copyRangeRW(dfd, sfd int, off, n int64) error {
	buf := make([]byte, min(n, 1<<20))
	for n > 0 {
		k, err := unix.Pread(sfd, buf[:min(n, int64(len(buf)))], off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if k == 0 {
			return nil
		}
		for w := 0; w < k; {
			m, err := unix.Pwrite(dfd, buf[w:k], off+int64(w))
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return err
			}
			w += m
		}
		off += int64(k)
		n -= int64(k)
	}
	return nil
}
