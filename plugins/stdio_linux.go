package plugins

import (
	"io"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// handshakeOut is the plugin's real standard output, kept aside so that
// nothing the plugin prints before Serve (an init function, a library's
// banner) can land in the handshake line go-plugin reads from it: while
// the plugin starts, file descriptor 1 points at standard error.
var handshakeOut *os.File

func init() {
	if !runAsPlugin() {
		return
	}
	fd, err := unix.Dup(1)
	if err != nil {
		return
	}
	if err := unix.Dup3(2, 1, 0); err != nil {
		unix.Close(fd)
		return
	}
	unix.CloseOnExec(fd)
	handshakeOut = os.NewFile(uintptr(fd), "/dev/stdout")
}

// newSharedFile returns an anonymous memory file (memfd) for sendShared.
func newSharedFile() (*os.File, error) {
	fd, err := unix.MemfdCreate("julyfs-read", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "julyfs-read"), nil
}

// processMemory reports whether this host can copy a file out of its
// plugin's memory (process_vm_readv), and a plugin can offer it.
const processMemory = true

// readProcess copies size bytes at addr in process pid into a new slice.
func readProcess(pid int, addr uint64, size int64) ([]byte, error) {
	data := make([]byte, size)
	for off := int64(0); off < size; {
		n, err := unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &data[off], Len: uint64(size - off)}},
			[]unix.RemoteIovec{{Base: uintptr(addr) + uintptr(off), Len: int(size - off)}}, 0)
		if err == unix.ESRCH {
			return nil, errGone
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, io.ErrUnexpectedEOF
		}
		off += int64(n)
	}
	return data, nil
}

// sharedMemory reports whether this host can open a plugin's memory files.
const sharedMemory = true

// dieWithParent makes the kernel kill the plugin when the thread that
// started it exits, which covers a host killed with -9. (Serve also
// watches its parent, for the rare case of a host thread exiting.)
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
