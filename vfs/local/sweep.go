package local

import (
	"context"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A write's temporary file (see createTemp) lives a moment, holding a
// shared flock for as long as its writer has it open; a staging's lives
// until its Commit or Abort, locked the same way. One that is unlocked and
// has not been written for staleAfter was left by a writer that died (a
// killed julyfs write, say): the tree removes such files from the root
// directory when it opens, and from every directory a walk (List, Glob,
// Grep) or Sweep reads, through the handle the listing was read from.

// staleAfter is how long an unlocked temporary file must have gone
// unwritten before a sweep removes it.
const staleAfter = 10 * time.Minute

// sweepTemps removes the stale temporary files among names (entries of
// the open directory dirfd starting with tempPrefix), ignoring errors.
func sweepTemps(dirfd int, names []string) {
	now := time.Now()
	for _, name := range names {
		var st unix.Stat_t
		if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		if now.Sub(time.Unix(st.Mtim.Unix())) < staleAfter {
			continue
		}
		fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		var cur unix.Stat_t
		if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) == nil && unix.Fstat(fd, &cur) == nil &&
			cur.Dev == st.Dev && cur.Ino == st.Ino {
			unix.Unlinkat(dirfd, name, 0)
		}
		unix.Close(fd)
	}
}

// sweepRoot sweeps the root directory itself (New does, so a killed
// write at the top of the tree is cleaned up the next time it opens).
func (fsys *FS) sweepRoot() {
	f, err := fsys.root.Open(".")
	if err != nil {
		return
	}
	defer f.Close()
	var temps []string
	readDirents(int(f.Fd()), func(name string, _ byte, _ uint64) {
		if strings.HasPrefix(name, tempPrefix) {
			temps = append(temps, name)
		}
	})
	sweepTemps(int(f.Fd()), temps)
}

// Sweep walks the whole tree and removes every stale temporary file left
// by a writer that died (see above); a long-lived server can run it once
// in the background after opening a tree. It returns the walk's error, or
// the context's.
func (fsys *FS) Sweep(ctx context.Context) error {
	d, ok, err := fsys.openTree("/")
	if err != nil || !ok {
		return err
	}
	defer d.close()
	_, err = d.walk(ctx, 0, func(*dir, entry, string) bool { return true })
	return err
}
