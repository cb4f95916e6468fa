//go:build !linux

package local

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// openat2 is Linux only: elsewhere os.Root resolves every name.

func openRootFD(*os.Root) *os.File { return nil }

func (fsys *FS) openBeneath(string, int) (*os.File, bool, error) { return nil, false, nil }

func (fsys *FS) openBeneathFD(string, int) (int, bool, error) { return -1, false, nil }

func (fsys *FS) createBeneath(string, uint32) (int, bool, error) { return -1, false, nil }

// OpenBeneath never opens anything where there is no openat2 (ok is
// false: only the tree may answer); see the Linux version.
func OpenBeneath(dir *os.File, path string) (fd int, size int64, ok bool) { return -1, 0, false }

const oPath = 0

const oNoFollow = 0

// keepAtime is the time utimensat gets for the access time: now, where
// there is no UTIME_OMIT.
func keepAtime() unix.Timespec { return unix.NsecToTimespec(time.Now().UnixNano()) }

// renameNoReplace is Linux only: ENOSYS sends the caller to a plain
// rename.
func renameNoReplace(int, string, string) error { return unix.ENOSYS }
