//go:build !linux

package local

import "os"

// openat2 is Linux only: elsewhere os.Root resolves every name.

func openRootFD(*os.Root) *os.File { return nil }

func (fsys *FS) openBeneath(string, int) (*os.File, bool, error) { return nil, false, nil }

const oPath = 0
