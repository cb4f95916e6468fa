//go:build !linux

package plugins

import (
	"errors"
	"os"
	"os/exec"
)

// handshakeOut is nil off Linux: standard output is the handshake as is.
var handshakeOut *os.File

func newSharedFile() (*os.File, error) { return nil, errors.ErrUnsupported }

const sharedMemory = false

const processMemory = false

const hostFile = false

func readHostFile(int, int64, int64) ([]byte, error) { return nil, errors.ErrUnsupported }

func openHostFile(int, int64) (*os.File, error) { return nil, errors.ErrUnsupported }

func readOpenFile(*os.File, int64) ([]byte, error) { return nil, errors.ErrUnsupported }

func fileID(*os.File) (dev, ino uint64, regular bool, err error) {
	return 0, 0, false, errors.ErrUnsupported
}

func readProcess(int, uint64, int64) ([]byte, error) { return nil, errors.ErrUnsupported }

// dieWithParent has no kernel help off Linux; Serve watches its parent.
func dieWithParent(*exec.Cmd) {}

func openRootDir(int, int64, uint64, uint64) (*os.File, error) { return nil, errors.ErrUnsupported }

func dirID(*os.File) (dev, ino uint64, dir bool, err error) {
	return 0, 0, false, errors.ErrUnsupported
}

func readBeneath(*os.File, string) ([]byte, bool) { return nil, false }

func readAtBeneath(*os.File, string, []byte, int64) (int, bool, bool) { return 0, false, false }
