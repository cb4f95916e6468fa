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

const oPath = 0

const oNoFollow = 0

// keepAtime is the time utimensat gets for the access time: now, where
// there is no UTIME_OMIT.
func keepAtime() unix.Timespec { return unix.NsecToTimespec(time.Now().UnixNano()) }
