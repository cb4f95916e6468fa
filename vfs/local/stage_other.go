//go:build !linux

package local

import (
	"errors"
	"os"
)

// openUnnamed is Linux only (O_TMPFILE); elsewhere stagings are named
// temporary files.
func openUnnamed(root *os.Root, dir string) (*os.File, error) { return nil, errors.ErrUnsupported }

func linkUnnamed(root *os.Root, f *os.File, dir, name string) error { return errors.ErrUnsupported }
