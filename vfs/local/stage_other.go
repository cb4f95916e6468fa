//go:build !linux

package local

import (
	"errors"
	"io"
	"os"
)

// openUnnamed is Linux only (O_TMPFILE); elsewhere stagings are named
// temporary files.
func openUnnamed(dirfd int) (*os.File, error) { return nil, errors.ErrUnsupported }

func linkUnnamed(f *os.File, dirfd int, name string) error { return errors.ErrUnsupported }

// copyFile makes dst, an empty file, a copy of src as it is now and
// returns the size copied.
func copyFile(dst, src *os.File) (int64, error) {
	return io.Copy(dst, src)
}
