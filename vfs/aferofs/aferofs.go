// Package aferofs bridges spf13/afero and julyfs both ways: [New] serves
// any afero.Fs as a vfs.FileSystem (what julyfs-archive does with afero's
// zipfs and tarfs), and [ToAfero] serves any vfs.FileSystem as an
// afero.Fs, for code written against afero.
//
// # Mapping
//
// New: paths are the vfs paths as given to the afero.Fs ("/a/b"). List
// reads one directory and sorts it by path; Glob and Grep are the shared
// vfs implementations over List and Read (Grep skips binary files).
// Directories exist while something is under them: Delete removes the
// directories it empties, and an empty directory the afero tree holds is
// listed as a directory. An etag is the file's size and modification
// time (afero has no content hash; reading every file on Stat would make
// Stat as slow as Read). An afero error that means "read-only"
// (EPERM, EROFS) becomes "read-only mount: /p", not-exist becomes
// "not found: /p"; other errors keep their cause.
//
// ToAfero: files are read whole when opened for reading and written whole
// when a file opened for writing is closed (or synced); directories are
// what List says. Mkdir creates nothing a vfs tree could keep (a
// directory exists only with something in it) unless the tree has
// vfs.DirMaker. Chmod, Chown and Chtimes are accepted and ignored.
// Errors are *os.PathError values with the os sentinels (fs.ErrNotExist,
// fs.ErrExist, fs.ErrPermission) as afero callers expect.
//
// # Concurrency
//
// Both directions are as safe for concurrent use as the tree beneath. New
// also makes its writes and deletes exclusive of its reads and stats
// (afero.WriteFile truncates a file before writing it, so a Read
// meanwhile could see none or part of it): a Read through New sees whole
// versions of the files written through it; writes made to the afero
// tree some other way are not covered. An afero.File from ToAfero is for
// one goroutine, as an *os.File is.
package aferofs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/afero"

	"github.com/julyfs/julyfs/vfs"
)

// FS is an afero.Fs served as a vfs.FileSystem.
type FS struct {
	fs afero.Fs
	// mu makes the writes and deletes made through FS exclusive of its
	// reads and stats: afero.WriteFile truncates the file before it
	// writes, so a Read meanwhile could see none or part of it.
	mu sync.RWMutex
}

// New returns fsys as a vfs.FileSystem.
func New(fsys afero.Fs) *FS { return &FS{fs: fsys} }

var _ vfs.FileSystem = (*FS)(nil)

// convert maps an afero error about clean path p to the contract's.
func convert(p string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return vfs.NotFound(p)
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EROFS):
		return vfs.ReadOnly(p)
	}
	return vfs.NewError(vfs.KindOther, p, err)
}

func (f *FS) List(ctx context.Context, prefix string) iter.Seq2[vfs.DirEntry, error] {
	return func(yield func(vfs.DirEntry, error) bool) {
		p := vfs.Clean(prefix)
		if err := ctx.Err(); err != nil {
			yield(vfs.DirEntry{}, err)
			return
		}
		info, err := f.fs.Stat(p)
		if err != nil || !info.IsDir() {
			return // missing or a file: nothing
		}
		infos, err := afero.ReadDir(f.fs, p)
		if err != nil {
			yield(vfs.DirEntry{}, convert(p, err))
			return
		}
		es := make([]vfs.DirEntry, 0, len(infos))
		for _, fi := range infos {
			if n := fi.Name(); n == "" || n == "." || n == ".." || strings.Contains(n, "/") {
				continue // an archive's entry for the directory itself
			}
			kind := vfs.KindFile
			if fi.IsDir() {
				kind = vfs.KindDir
			}
			es = append(es, vfs.DirEntry{Path: vfs.Join(p, fi.Name()), Kind: kind})
		}
		slices.SortFunc(es, vfs.CompareDirEntries)
		for _, e := range es {
			if !yield(e, nil) {
				return
			}
		}
	}
}

func (f *FS) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return vfs.FileInfo{}, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	fi, err := f.fs.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}, nil
	case err != nil:
		return vfs.FileInfo{}, convert(p, err)
	case fi.IsDir():
		return vfs.FileInfo{Path: p, Kind: vfs.KindDir, ModTime: fi.ModTime()}, nil
	}
	return vfs.FileInfo{Path: p, Kind: vfs.KindFile, Size: fi.Size(), ModTime: fi.ModTime(), ETag: fmt.Sprintf("%x-%x", fi.ModTime().UnixNano(), fi.Size())}, nil
}

func (f *FS) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	return vfs.Glob(ctx, f, pattern, dir)
}

func (f *FS) Read(ctx context.Context, path string) ([]byte, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	fi, err := f.fs.Stat(p)
	switch {
	case errors.Is(err, syscall.ENOTDIR):
		return nil, vfs.NotFound(p)
	case err != nil:
		return nil, convert(p, err)
	case fi.IsDir():
		return nil, vfs.IsDir(p)
	}
	data, err := readAll(f.fs, p, fi.Size())
	if err != nil {
		return nil, convert(p, err)
	}
	return data, nil
}

// readAll reads the file at p whole with one ReadAt from 0, which leaves
// the handle's offset alone: afero's tarfs shares one offset among all
// handles of a file, so two Reads of the same file (or two at once) would
// see each other's progress. A file without ReadAt is read in sequence.
func readAll(afs afero.Fs, p string, size int64) ([]byte, error) {
	file, err := afs.Open(p)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	buf := make([]byte, size)
	n, err := file.ReadAt(buf, 0)
	if int64(n) == size && (err == nil || err == io.EOF) {
		// Check for growth since Stat with one more byte.
		var one [1]byte
		if m, _ := file.ReadAt(one[:], size); m == 0 {
			return buf, nil
		}
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(file)
}

func (f *FS) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	return vfs.Grep(ctx, f, q)
}

func (f *FS) Write(ctx context.Context, path string, data []byte) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	if p == "/" {
		return vfs.IsDir(p)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fi, err := f.fs.Stat(p); err == nil && fi.IsDir() {
		return vfs.IsDir(p)
	}
	// Some afero trees (MemMapFs) let MkdirAll pass through a file; a
	// file is never a directory here.
	for d := vfs.Parent(p); d != "/"; d = vfs.Parent(d) {
		if fi, err := f.fs.Stat(d); err == nil {
			if !fi.IsDir() {
				return vfs.WriteFailed(p, syscall.ENOTDIR)
			}
			break
		}
	}
	if err := f.fs.MkdirAll(vfs.Parent(p), 0o755); err != nil {
		if ro := convert(p, err); vfs.KindOf(ro) == vfs.KindReadOnly {
			return ro
		}
		return vfs.WriteFailed(p, err)
	}
	if err := afero.WriteFile(f.fs, p, data, 0o644); err != nil {
		if ro := convert(p, err); vfs.KindOf(ro) == vfs.KindReadOnly {
			return ro
		}
		return vfs.WriteFailed(p, err)
	}
	return nil
}

func (f *FS) Delete(ctx context.Context, path string) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fi, err := f.fs.Stat(p)
	switch {
	case errors.Is(err, syscall.ENOTDIR):
		return vfs.NotFound(p)
	case err != nil:
		return convert(p, err)
	case fi.IsDir():
		return vfs.IsDir(p)
	}
	if err := f.fs.Remove(p); err != nil {
		return convert(p, err)
	}
	// Directories exist while something is under them.
	for d := vfs.Parent(p); d != "/"; d = vfs.Parent(d) {
		if empty, err := afero.IsEmpty(f.fs, d); err != nil || !empty {
			break
		}
		if f.fs.Remove(d) != nil {
			break
		}
	}
	return nil
}

func (f *FS) Search(context.Context, vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return vfs.Empty[vfs.SearchResult]()
}
