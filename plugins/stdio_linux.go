package plugins

import (
	"bytes"
	"fmt"
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

// hostFile reports whether this host can open a file its plugin has open
// (/proc/PID/fd/N), and a plugin can offer one.
const hostFile = true

// readHostFile reads at most size bytes of the regular file open as fd in
// process pid, through /proc/PID/fd/N (a new open file description of the
// same file, whatever its name is now).
func readHostFile(pid int, fd, size int64) ([]byte, error) {
	f, err := openHostFile(pid, fd)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpenFile(f, size)
}

// openHostFile opens the file open as fd in process pid through
// /proc/PID/fd/N, refusing anything but a regular file. O_NONBLOCK keeps a
// descriptor that is not a regular file from blocking the open.
func openHostFile(pid int, fd int64) (*os.File, error) {
	f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/%d", pid, fd), os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		if !alive(pid) {
			return nil, errGone
		}
		return nil, err
	}
	if _, _, regular, err := fileID(f); err != nil || !regular {
		f.Close()
		if err == nil {
			err = fmt.Errorf("descriptor %d of the plugin is not a regular file", fd)
		}
		return nil, err
	}
	return f, nil
}

// readOpenFile reads at most size bytes of the regular file f from its
// start: no more than it holds now, so a file that shrank is read as it
// is, as Read does.
func readOpenFile(f *os.File, size int64) ([]byte, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, err
	}
	data := make([]byte, max(0, min(size, st.Size)))
	n := 0
	for n < len(data) {
		m, err := f.ReadAt(data[n:], int64(n))
		n += m
		if err == io.EOF {
			break // it shrank meanwhile
		}
		if err != nil {
			return nil, err
		}
	}
	return data[:n], nil
}

// fileID returns the identity of the open file f (st_dev, st_ino) and
// whether it is a regular file.
func fileID(f *os.File) (dev, ino uint64, regular bool, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0, 0, false, err
	}
	return uint64(st.Dev), st.Ino, st.Mode&unix.S_IFMT == unix.S_IFREG, nil
}

// alive reports whether process pid runs (exists and is not a zombie).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || !bytes.HasPrefix(stat[i+1:], []byte(" Z"))
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
