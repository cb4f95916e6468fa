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

// dieWithParent has no kernel help off Linux; Serve watches its parent.
func dieWithParent(*exec.Cmd) {}
