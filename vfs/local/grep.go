package local

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"iter"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/grepscan"
)

// Grep yields the lines matching q under q.Path, sorted by path then line.
// The scope follows links inside the root; the walk below it does not
// follow directory links. Files are read in parallel, each opened relative
// to its directory's handle (a file scope by its path), streamed through a
// reused buffer a piece of whole lines at a time, and scanned by the grep
// engine (vfs/grepscan, through [vfs.GrepTree]). With q.MaxLineBytes set,
// a line longer than the buffer is matched a window at a time and never
// held whole, so memory stays bounded whatever the file. Binary files
// (holding a NUL byte) and files or directories this process may not read
// are skipped, as ripgrep skips them (without its warning). A missing
// scope fails with "not found: <scope>", as the contract says of a missing
// host search root.
func (fsys *FS) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	return vfs.GrepTree(ctx, q, vfs.GrepSource{
		Stat: func(ctx context.Context, scope string) (vfs.FileInfo, error) {
			st, err := fsys.Stat(ctx, scope)
			if err == nil && st.Kind == vfs.KindMissing {
				// A missing host search root fails (the contract); a union
				// mount's missing virtual path still yields nothing.
				return st, vfs.NotFound(scope)
			}
			return st, err
		},
		File: func(scope string) grepscan.File {
			return grepscan.File{Path: scope, Open: func(ctx context.Context) (io.ReadCloser, int64, error) {
				if err := ctx.Err(); err != nil {
					return nil, 0, err
				}
				f, fi, err := fsys.open(scope)
				if err != nil {
					return nil, 0, skipGone(err)
				}
				return f, fi.Size(), nil
			}}
		},
		Dir: fsys.grepFiles,
	})
}

// skipUnreadable is err from opening a file the walk listed, with the
// files a grep passes over marked [grepscan.SkipFile]: one that vanished
// or turned into a directory since, or that this process may not read.
func skipUnreadable(err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return grepscan.SkipFile
	}
	return skipGone(err)
}

// skipGone marks [grepscan.SkipFile] a file that vanished or turned into
// a directory since the walk (or the scope's Stat) saw it.
func skipGone(err error) error {
	switch vfs.KindOf(err) {
	case vfs.KindNotFound, vfs.KindIsDir:
		return grepscan.SkipFile
	}
	return err
}

// releaser closes a file, then releases the directory it was opened from.
type releaser struct {
	io.ReadCloser
	d *dir
}

func (r releaser) Close() error {
	err := r.ReadCloser.Close()
	r.d.release()
	return err
}

// grepFiles walks the directory scope and yields its files that pass
// filter, each loaded through its directory's handle.
func (fsys *FS) grepFiles(ctx context.Context, scope string, filter *vfs.GrepFilter) iter.Seq2[grepscan.File, error] {
	return func(yield func(grepscan.File, error) bool) {
		d, ok, err := fsys.openTree(scope)
		if err != nil {
			yield(grepscan.File{}, err)
			return
		}
		if !ok {
			return
		}
		defer d.close()
		_, err = d.walk(ctx, 0, func(pd *dir, e entry, path string) bool {
			if e.kind != vfs.KindFile || !filter.Match(path) {
				return true
			}
			pd.acquire() // released by Open, which grepscan.Scan always calls
			name, link := e.name, e.link
			return yield(grepscan.File{Path: path, Open: func(ctx context.Context) (io.ReadCloser, int64, error) {
				if err := ctx.Err(); err != nil {
					pd.release()
					return nil, 0, err
				}
				r, size, err := pd.openFile(name, link)
				if err != nil {
					pd.release()
					return nil, 0, skipUnreadable(err)
				}
				return releaser{r, pd}, size, nil
			}}, nil)
		})
		if err != nil {
			yield(grepscan.File{}, err)
		}
	}
}
