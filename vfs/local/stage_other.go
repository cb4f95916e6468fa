//go:build !linux

package local

import (
	"errors"
	"os"
)

// openUnnamed is Linux only (O_TMPFILE); elsewhere stagings are named
// temporary files.
func openUnnamed(dirfd int) (*os.File, error) { return nil, errors.ErrUnsupported }

func linkUnnamed(f *os.File, dirfd int, name string) error { return errors.ErrUnsupported }
