// Package fsview presents any vfs.FileSystem as a standard library io/fs
// file system, so code written against fs.FS (template.ParseFS,
// http.FileServerFS, fs.WalkDir, testing/fstest) can read a julyfs tree.
//
// The view is read-only: fs.FS has no write verbs. Names follow io/fs
// rules (unrooted, "." for the root, no ".." or empty elements; anything
// else fails with fs.ErrInvalid) and map to the tree's absolute paths by
// prefixing "/".
//
// # Context
//
// io/fs methods take no context, so a view carries the one given to [New]
// and passes it to every call into the tree; cancelling it fails every
// later call.
//
// # Caching and concurrency
//
// The view caches nothing across calls. An open directory lists its
// entries once, on its first ReadDir; an open file reads through the
// tree's vfs.RangeReader when it has one, and otherwise reads the whole
// file once, on its first read. A view is safe for concurrent use when its
// tree is; an open file is not.
//
// # Errors
//
// Failures are *fs.PathError values naming the io/fs name. Their Err
// matches the io/fs sentinel of the tree's error with errors.Is
// (vfs.ErrNotFound is fs.ErrNotExist, vfs.ErrReadOnly is fs.ErrPermission,
// vfs.ErrIsDir is fs.ErrInvalid), and unwraps to the tree's own error, so
// errors.Is(err, vfs.ErrNotFound) holds as well.
package fsview

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"

	"github.com/julyfs/julyfs/vfs"
)

// FS is an io/fs view of a vfs.FileSystem.
type FS struct {
	ctx  context.Context
	fsys vfs.FileSystem
}

var (
	_ fs.FS         = (*FS)(nil)
	_ fs.StatFS     = (*FS)(nil)
	_ fs.ReadDirFS  = (*FS)(nil)
	_ fs.ReadFileFS = (*FS)(nil)
)

// New returns a view of fsys whose calls into the tree use ctx.
func New(ctx context.Context, fsys vfs.FileSystem) *FS {
	return &FS{ctx: ctx, fsys: fsys}
}

// vfsPath maps an io/fs name to the tree's path, or fails for a name that
// io/fs does not allow.
func vfsPath(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return "/", nil
	}
	return "/" + name, nil
}

// fsError is a tree's error seen through io/fs: its message is the tree's
// contract string, errors.Is matches the io/fs sentinel, and it unwraps to
// the tree's error.
type fsError struct {
	sentinel error
	err      error
}

func (e *fsError) Error() string        { return e.err.Error() }
func (e *fsError) Unwrap() error        { return e.err }
func (e *fsError) Is(target error) bool { return target == e.sentinel }

// pathError wraps a tree's error as an *fs.PathError about name.
func pathError(op, name string, err error) error {
	var sentinel error
	switch {
	case errors.Is(err, vfs.ErrNotFound):
		sentinel = fs.ErrNotExist
	case errors.Is(err, vfs.ErrReadOnly), errors.Is(err, vfs.ErrDeleteNotSupported):
		sentinel = fs.ErrPermission
	case errors.Is(err, vfs.ErrIsDir), errors.Is(err, vfs.ErrInvalidGlobPattern):
		sentinel = fs.ErrInvalid
	}
	if sentinel != nil {
		err = &fsError{sentinel: sentinel, err: err}
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// notExist is the error for a name the tree says is missing.
func notExist(op, name, p string) error { return pathError(op, name, vfs.NotFound(p)) }

// stat looks name up; a missing path is an fs.ErrNotExist error.
func (f *FS) stat(op, name string) (vfs.FileInfo, string, error) {
	p, err := vfsPath(op, name)
	if err != nil {
		return vfs.FileInfo{}, "", err
	}
	info, err := f.fsys.Stat(f.ctx, p)
	if err != nil {
		return vfs.FileInfo{}, "", pathError(op, name, err)
	}
	if info.Kind == vfs.KindMissing {
		return vfs.FileInfo{}, "", notExist(op, name, p)
	}
	return info, p, nil
}

// Stat describes the file or directory name.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	info, _, err := f.stat("stat", name)
	if err != nil {
		return nil, err
	}
	return fileInfo{info}, nil
}

// ReadFile returns the contents of the file name; the slice belongs to the
// caller.
func (f *FS) ReadFile(name string) ([]byte, error) {
	p, err := vfsPath("open", name)
	if err != nil {
		return nil, err
	}
	data, err := f.fsys.Read(f.ctx, p)
	if err != nil {
		return nil, pathError("open", name, err)
	}
	return data, nil
}

// ReadDir lists the directory name, sorted by name.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	info, p, err := f.stat("readdir", name)
	if err != nil {
		return nil, err
	}
	if info.Kind != vfs.KindDir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errNotDir}
	}
	return f.list(name, p)
}

var errNotDir = errors.New("not a directory")

func (f *FS) list(name, p string) ([]fs.DirEntry, error) {
	var out []fs.DirEntry
	for e, err := range f.fsys.List(f.ctx, p) {
		if err != nil {
			return out, pathError("readdir", name, err)
		}
		if e.SkipInWalk() {
			// A link to a directory or to nothing: io/fs has no links,
			// and fs.WalkDir would follow one into a loop.
			continue
		}
		out = append(out, dirEntry{fs: f, e: e})
	}
	return out, nil
}

// Open opens the file or directory name.
func (f *FS) Open(name string) (fs.File, error) {
	info, p, err := f.stat("open", name)
	if err != nil {
		return nil, err
	}
	if info.Kind == vfs.KindDir {
		return &dir{fs: f, name: name, path: p, info: info}, nil
	}
	return &file{fs: f, name: name, path: p, info: info}, nil
}

// fileInfo is a vfs.FileInfo as an fs.FileInfo. Sys returns the
// vfs.FileInfo.
type fileInfo struct{ info vfs.FileInfo }

func (i fileInfo) Name() string {
	if i.info.Path == "/" {
		return "."
	}
	return vfs.Base(i.info.Path)
}
func (i fileInfo) Size() int64        { return i.info.Size }
func (i fileInfo) ModTime() time.Time { return i.info.ModTime }
func (i fileInfo) IsDir() bool        { return i.info.Kind == vfs.KindDir }
func (i fileInfo) Sys() any           { return i.info }
func (i fileInfo) Mode() fs.FileMode {
	if i.IsDir() {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

// dirEntry is a listed entry; Info stats it.
type dirEntry struct {
	fs *FS
	e  vfs.DirEntry
}

func (d dirEntry) Name() string { return vfs.Base(d.e.Path) }
func (d dirEntry) IsDir() bool  { return d.e.Kind == vfs.KindDir }
func (d dirEntry) Type() fs.FileMode {
	if d.IsDir() {
		return fs.ModeDir
	}
	return 0
}

func (d dirEntry) Info() (fs.FileInfo, error) {
	info, err := d.fs.fsys.Stat(d.fs.ctx, d.e.Path)
	if err != nil {
		return nil, pathError("stat", d.e.Path[1:], err)
	}
	if info.Kind == vfs.KindMissing {
		return nil, notExist("stat", d.e.Path[1:], d.e.Path)
	}
	return fileInfo{info}, nil
}

func (d dirEntry) String() string { return fs.FormatDirEntry(d) }

// dir is an open directory.
type dir struct {
	fs      *FS
	name    string
	path    string
	info    vfs.FileInfo
	entries []fs.DirEntry
	listed  bool
	closed  bool
}

func (d *dir) Stat() (fs.FileInfo, error) { return fileInfo{d.info}, nil }

func (d *dir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: vfs.IsDir(d.path)}
}

func (d *dir) Close() error {
	if d.closed {
		return &fs.PathError{Op: "close", Path: d.name, Err: fs.ErrClosed}
	}
	d.closed = true
	return nil
}

// ReadDir returns the next n entries (all remaining for n <= 0), with
// io.EOF when n > 0 and none are left.
func (d *dir) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.closed {
		return nil, &fs.PathError{Op: "readdir", Path: d.name, Err: fs.ErrClosed}
	}
	if !d.listed {
		es, err := d.fs.list(d.name, d.path)
		if err != nil {
			return nil, err
		}
		d.entries, d.listed = es, true
	}
	if n <= 0 {
		out := d.entries
		d.entries = nil
		return out, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.entries))
	out := d.entries[:n:n]
	d.entries = d.entries[n:]
	return out, nil
}

// file is an open file. It reads through the tree's RangeReader when it
// has one, else loads the whole file on the first read.
type file struct {
	fs     *FS
	name   string
	path   string
	info   vfs.FileInfo
	data   []byte // loaded contents, without a RangeReader
	loaded bool
	off    int64
	closed bool
}

var (
	_ io.ReaderAt = (*file)(nil)
	_ io.Seeker   = (*file)(nil)
)

func (f *file) Stat() (fs.FileInfo, error) { return fileInfo{f.info}, nil }

func (f *file) Close() error {
	if f.closed {
		return &fs.PathError{Op: "close", Path: f.name, Err: fs.ErrClosed}
	}
	f.closed = true
	f.data = nil
	return nil
}

func (f *file) Read(p []byte) (int, error) {
	n, err := f.readAt("read", p, f.off)
	f.off += int64(n)
	return n, err
}

// ReadAt reads len(p) bytes at off, with io.ReaderAt semantics.
func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &fs.PathError{Op: "readat", Path: f.name, Err: fs.ErrInvalid}
	}
	return f.readAt("readat", p, off)
}

func (f *file) readAt(op string, p []byte, off int64) (int, error) {
	if f.closed {
		return 0, &fs.PathError{Op: op, Path: f.name, Err: fs.ErrClosed}
	}
	if len(p) == 0 {
		return 0, nil
	}
	if _, ok := f.fs.fsys.(vfs.RangeReader); ok {
		n, err := vfs.ReadAt(f.fs.ctx, f.fs.fsys, f.path, p, off)
		if err != nil && err != io.EOF {
			err = pathError(op, f.name, err)
		}
		return n, err
	}
	if !f.loaded {
		data, err := f.fs.fsys.Read(f.fs.ctx, f.path)
		if err != nil {
			return 0, pathError(op, f.name, err)
		}
		f.data, f.loaded = data, true
	}
	if off >= int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Seek sets the offset for the next Read, relative to the start, the
// current offset or the end (the size Stat gave at Open).
func (f *file) Seek(offset int64, whence int) (int64, error) {
	if f.closed {
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: fs.ErrClosed}
	}
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		offset += f.info.Size
	default:
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: fs.ErrInvalid}
	}
	if offset < 0 {
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: fs.ErrInvalid}
	}
	f.off = offset
	return offset, nil
}
