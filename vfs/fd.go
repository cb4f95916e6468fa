package vfs

// FileDescriptor is the optional capability of an open file (a
// FileReader from OpenFile, a StagedFile from Stage) that is one open
// descriptor of a file on the host: what a FUSE mount hands the kernel so
// that it reads and writes the file itself (FUSE passthrough) instead of
// through the daemon. The descriptor belongs to the file it came from:
// the caller must neither close it nor use it after that file's Close,
// Commit or Abort. Reads and writes made on it directly are the file's
// own (a StagedFile's writes are staged, its Size sees them).
type FileDescriptor interface {
	Fd() uintptr
}

// Fd returns f's host descriptor when f has one (FileDescriptor).
func Fd(f any) (uintptr, bool) {
	if d, ok := f.(FileDescriptor); ok {
		return d.Fd(), true
	}
	return 0, false
}
