package aferofs

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/afero"

	"github.com/julyfs/julyfs/vfs"
)

// ToAfero returns fsys as an afero.Fs.
func ToAfero(fsys vfs.FileSystem) afero.Fs { return &aferoFS{fsys: fsys} }

type aferoFS struct {
	fsys vfs.FileSystem
}

var _ afero.Fs = (*aferoFS)(nil)

var bg = context.Background()

// osError maps a vfs error to the *os.PathError afero callers test with
// errors.Is(err, fs.ErrNotExist) and friends.
func osError(op, name string, err error) error {
	if err == nil {
		return nil
	}
	cause := err
	switch vfs.KindOf(err) {
	case vfs.KindNotFound:
		cause = fs.ErrNotExist
	case vfs.KindReadOnly:
		cause = fs.ErrPermission
	case vfs.KindIsDir:
		cause = syscall.EISDIR
	}
	return &os.PathError{Op: op, Path: name, Err: cause}
}

func (a *aferoFS) Name() string { return "julyfs" }

func (a *aferoFS) stat(op, name string) (vfs.FileInfo, error) {
	info, err := a.fsys.Stat(bg, name)
	if err != nil {
		return info, osError(op, name, err)
	}
	if info.Kind == vfs.KindMissing {
		return info, &os.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return info, nil
}

func (a *aferoFS) Stat(name string) (os.FileInfo, error) {
	info, err := a.stat("stat", name)
	if err != nil {
		return nil, err
	}
	return fileInfo(info), nil
}

func (a *aferoFS) Create(name string) (afero.File, error) {
	return a.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

func (a *aferoFS) Open(name string) (afero.File, error) { return a.OpenFile(name, os.O_RDONLY, 0) }

func (a *aferoFS) OpenFile(name string, flag int, _ os.FileMode) (afero.File, error) {
	info, err := a.fsys.Stat(bg, name)
	if err != nil {
		return nil, osError("open", name, err)
	}
	writable := flag&(os.O_WRONLY|os.O_RDWR) != 0
	switch {
	case info.Kind == vfs.KindDir:
		if writable {
			return nil, &os.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
		}
		return &file{a: a, name: name, dir: true, info: info}, nil
	case info.Kind == vfs.KindFile && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, &os.PathError{Op: "open", Path: name, Err: fs.ErrExist}
	case info.Kind == vfs.KindMissing && flag&os.O_CREATE == 0:
		return nil, &os.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	f := &file{a: a, name: name, info: info, writable: writable, append: flag&os.O_APPEND != 0, readable: flag&os.O_WRONLY == 0}
	switch {
	case info.Kind == vfs.KindMissing:
		// Created: it exists from now on, as with os.OpenFile.
		if err := a.fsys.Write(bg, name, nil); err != nil {
			return nil, osError("open", name, err)
		}
		f.info = vfs.FileInfo{Path: vfs.Clean(name), Kind: vfs.KindFile, ModTime: time.Now()}
	case flag&os.O_TRUNC != 0 && writable:
		f.dirty = true
	default:
		data, err := a.fsys.Read(bg, name)
		if err != nil {
			return nil, osError("open", name, err)
		}
		f.data = data
	}
	return f, nil
}

func (a *aferoFS) Mkdir(name string, _ os.FileMode) error {
	info, err := a.fsys.Stat(bg, name)
	if err != nil {
		return osError("mkdir", name, err)
	}
	if info.Kind != vfs.KindMissing {
		return &os.PathError{Op: "mkdir", Path: name, Err: fs.ErrExist}
	}
	return a.mkdir(name)
}

func (a *aferoFS) mkdir(name string) error {
	if err := vfs.MakeDir(bg, a.fsys, name); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return osError("mkdir", name, err)
	}
	return nil
}

func (a *aferoFS) MkdirAll(p string, _ os.FileMode) error {
	info, err := a.fsys.Stat(bg, p)
	if err != nil {
		return osError("mkdir", p, err)
	}
	switch info.Kind {
	case vfs.KindDir:
		return nil
	case vfs.KindFile:
		return &os.PathError{Op: "mkdir", Path: p, Err: syscall.ENOTDIR}
	}
	return a.mkdir(p)
}

func (a *aferoFS) Remove(name string) error {
	info, err := a.stat("remove", name)
	if err != nil {
		return err
	}
	if info.Kind == vfs.KindFile {
		return osError("remove", name, a.fsys.Delete(bg, name))
	}
	for range a.fsys.List(bg, name) {
		return &os.PathError{Op: "remove", Path: name, Err: syscall.ENOTEMPTY}
	}
	if err := vfs.RemoveDir(bg, a.fsys, name); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return osError("remove", name, err)
	}
	return nil
}

func (a *aferoFS) RemoveAll(p string) error {
	info, err := a.fsys.Stat(bg, p)
	if err != nil {
		return osError("removeall", p, err)
	}
	switch info.Kind {
	case vfs.KindMissing:
		return nil
	case vfs.KindFile:
		return osError("removeall", p, a.fsys.Delete(bg, p))
	}
	var all []vfs.DirEntry
	for e, err := range a.fsys.Glob(bg, "**", p) {
		if err != nil {
			return osError("removeall", p, err)
		}
		all = append(all, e)
	}
	for _, e := range slices.Backward(all) {
		var err error
		if e.Kind == vfs.KindFile {
			err = a.fsys.Delete(bg, e.Path)
		} else {
			err = vfs.RemoveDir(bg, a.fsys, e.Path)
		}
		if err != nil && !errors.Is(err, errors.ErrUnsupported) && vfs.KindOf(err) != vfs.KindNotFound {
			return osError("removeall", e.Path, err)
		}
	}
	if err := vfs.RemoveDir(bg, a.fsys, p); err != nil && !errors.Is(err, errors.ErrUnsupported) && vfs.KindOf(err) != vfs.KindNotFound {
		return osError("removeall", p, err)
	}
	return nil
}

func (a *aferoFS) Rename(oldname, newname string) error {
	if _, err := a.stat("rename", oldname); err != nil {
		return err
	}
	return osError("rename", oldname, vfs.Rename(bg, a.fsys, oldname, newname))
}

func (a *aferoFS) Chmod(name string, _ os.FileMode) error {
	_, err := a.stat("chmod", name)
	return err
}

func (a *aferoFS) Chown(name string, _, _ int) error {
	_, err := a.stat("chown", name)
	return err
}

func (a *aferoFS) Chtimes(name string, _, _ time.Time) error {
	_, err := a.stat("chtimes", name)
	return err
}

// info is a vfs.FileInfo as an os.FileInfo.
type info struct{ vfs.FileInfo }

func fileInfo(i vfs.FileInfo) os.FileInfo { return info{i} }

func (i info) Name() string {
	if i.Path == "/" {
		return "/"
	}
	return path.Base(i.Path)
}
func (i info) Size() int64        { return i.FileInfo.Size }
func (i info) ModTime() time.Time { return i.FileInfo.ModTime }
func (i info) IsDir() bool        { return i.Kind == vfs.KindDir }
func (i info) Sys() any           { return nil }
func (i info) Mode() os.FileMode {
	if i.IsDir() {
		return fs.ModeDir | 0o755
	}
	return 0o644
}

// file is an open file of ToAfero: its contents in memory.
type file struct {
	a        *aferoFS
	name     string
	info     vfs.FileInfo
	dir      bool
	readable bool
	writable bool
	append   bool
	dirty    bool
	closed   bool
	data     []byte
	off      int64
	listed   []os.FileInfo
	listPos  int
	listDone bool
}

var errClosed = errors.New("file already closed")

func (f *file) fail(op string, err error) error { return &os.PathError{Op: op, Path: f.name, Err: err} }

func (f *file) Name() string { return f.name }

func (f *file) Close() error {
	if f.closed {
		return f.fail("close", errClosed)
	}
	err := f.Sync()
	f.closed = true
	return err
}

func (f *file) Sync() error {
	if f.closed {
		return f.fail("sync", errClosed)
	}
	if !f.dirty {
		return nil
	}
	if err := f.a.fsys.Write(bg, f.name, f.data); err != nil {
		return osError("write", f.name, err)
	}
	f.dirty = false
	return nil
}

func (f *file) Stat() (os.FileInfo, error) {
	if f.closed {
		return nil, f.fail("stat", errClosed)
	}
	i := f.info
	if !f.dir {
		i.Size = int64(len(f.data))
	}
	return fileInfo(i), nil
}

func (f *file) check(op string, write bool) error {
	switch {
	case f.closed:
		return f.fail(op, errClosed)
	case f.dir:
		return f.fail(op, syscall.EISDIR)
	case write && !f.writable, !write && !f.readable:
		return f.fail(op, syscall.EBADF)
	}
	return nil
}

func (f *file) Read(p []byte) (int, error) {
	n, err := f.ReadAt(p, f.off)
	f.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, f.fail("readat", syscall.EINVAL)
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

func (f *file) Seek(offset int64, whence int) (int64, error) {
	if f.closed {
		return 0, f.fail("seek", errClosed)
	}
	switch whence {
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		offset += int64(len(f.data))
	}
	if offset < 0 {
		return 0, f.fail("seek", syscall.EINVAL)
	}
	f.off = offset
	return offset, nil
}

func (f *file) Write(p []byte) (int, error) {
	off := f.off
	if f.append {
		off = int64(len(f.data))
	}
	n, err := f.WriteAt(p, off)
	f.off = off + int64(n)
	return n, err
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, f.fail("writeat", syscall.EINVAL)
	}
	if end := off + int64(len(p)); end > int64(len(f.data)) {
		f.data = append(f.data, make([]byte, end-int64(len(f.data)))...)
	}
	copy(f.data[off:], p)
	f.dirty = true
	return len(p), nil
}

func (f *file) WriteString(s string) (int, error) { return f.Write([]byte(s)) }

func (f *file) Truncate(size int64) error {
	if err := f.check("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return f.fail("truncate", syscall.EINVAL)
	}
	if size <= int64(len(f.data)) {
		f.data = f.data[:size]
	} else {
		f.data = append(f.data, make([]byte, size-int64(len(f.data)))...)
	}
	f.dirty = true
	return nil
}

// Readdir lists the directory in path order, count entries at a time as
// os.File.Readdir does.
func (f *file) Readdir(count int) ([]os.FileInfo, error) {
	if f.closed {
		return nil, f.fail("readdir", errClosed)
	}
	if !f.dir {
		return nil, f.fail("readdir", syscall.ENOTDIR)
	}
	if !f.listDone {
		for e, err := range f.a.fsys.List(bg, f.name) {
			if err != nil {
				return nil, osError("readdir", f.name, err)
			}
			if e.SkipInWalk() {
				continue // a link to a directory or to nothing, as before links listed
			}
			i, err := f.a.fsys.Stat(bg, e.Path)
			if err != nil {
				return nil, osError("readdir", e.Path, err)
			}
			if i.Kind != vfs.KindMissing {
				f.listed = append(f.listed, fileInfo(i))
			}
		}
		f.listDone = true
	}
	rest := f.listed[f.listPos:]
	if count <= 0 {
		f.listPos = len(f.listed)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n := min(count, len(rest))
	f.listPos += n
	return rest[:n], nil
}

func (f *file) Readdirnames(n int) ([]string, error) {
	infos, err := f.Readdir(n)
	names := make([]string, len(infos))
	for i, fi := range infos {
		names[i] = fi.Name()
	}
	return names, err
}
