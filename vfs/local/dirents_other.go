//go:build unix && !linux

package local

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// readDirents lists the open directory fd through os.File.ReadDir. typ is
// the DT_* type; ino is 0 (not asked).
func readDirents(fd int, fn func(name string, typ byte, ino uint64)) error {
	nfd, err := unix.Dup(fd)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(nfd), "")
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return err
	}
	for _, de := range des {
		var typ byte = unix.DT_UNKNOWN
		switch t := de.Type(); {
		case t.IsRegular():
			typ = unix.DT_REG
		case t.IsDir():
			typ = unix.DT_DIR
		case t&fs.ModeSymlink != 0:
			typ = unix.DT_LNK
		case t&fs.ModeNamedPipe != 0:
			typ = unix.DT_FIFO
		}
		fn(de.Name(), typ, 0)
	}
	return nil
}
