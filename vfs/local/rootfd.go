package local

import (
	"os"
	"syscall"
)

// BeneathDir returns the tree's root directory, open, for a process that
// reads the tree's files itself (a plugin's host: package plugins), or nil
// when the tree resolves names through os.Root alone (not Linux, or the
// root could not be opened). The file stays the tree's: do not close it;
// Close closes it.
//
// It declares how the tree resolves an exact path: Read, ReadAt and
// OpenFile of a path p first open the name vfs.Clean(p) without its
// leading "/" with openat2(2) relative to this directory, with
// RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS and O_RDONLY|O_NONBLOCK; when that
// open succeeds and names a regular file, that file is what they read,
// from its start, up to the size fstat gives after the open (or to its
// end when fstat says 0). Any other outcome (an error of the open, a
// directory, anything but a regular file, "/") goes on to the rest of the
// tree's rules (os.Root, links with absolute targets, the contract's
// errors), which only the tree may answer. So a holder of the same
// directory that opens a name the same way and reads only what such an
// open yields reads exactly what the tree would, and nothing the kernel
// would not resolve beneath the root. [OpenBeneath] is that open, for
// such a holder; the tree's own first open shares its code.
func (fsys *FS) BeneathDir() *os.File { return fsys.rootDir }

// readFlags are the flags of the tree's open of a file to read it (Read,
// ReadAt, OpenFile; OpenBeneath): read-only, and never blocking on a FIFO.
const readFlags = os.O_RDONLY | syscall.O_NONBLOCK
