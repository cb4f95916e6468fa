package index

import (
	"context"
	"errors"
	"io"

	"github.com/julyfs/julyfs/vfs"
)

var (
	_ vfs.FileOpener = (*FS)(nil)
	_ vfs.Stager     = (*FS)(nil)
)

// OpenFile forwards to the wrapped tree's FileOpener, or its fallback.
func (f *FS) OpenFile(ctx context.Context, path string) (vfs.FileReader, error) {
	return vfs.OpenFile(ctx, f.inner, path)
}

// Stage opens a staging in the wrapped tree (its Stager, or the in-memory
// fallback). Its Commit updates the index as Write does: on success the
// index holds the committed contents before Commit returns.
func (f *FS) Stage(ctx context.Context, path string, keep bool) (vfs.StagedFile, error) {
	p := vfs.Clean(path)
	if f.isClosed() {
		return nil, vfs.NewError(vfs.KindWriteFailed, p, ErrClosed)
	}
	s, err := vfs.Stage(ctx, f.inner, p, keep)
	if err != nil {
		return nil, err
	}
	return &stagedFile{StagedFile: s, f: f, path: p}, nil
}

// stagedFile is a staging of the wrapped tree whose Commit indexes.
type stagedFile struct {
	vfs.StagedFile
	f    *FS
	path string
}

func (s *stagedFile) Commit(ctx context.Context) error {
	return s.commit(ctx, s.StagedFile.Commit)
}

// BaseETag forwards to the wrapped staging (vfs.ConditionalCommitter).
func (s *stagedFile) BaseETag() string { return vfs.BaseETag(s.StagedFile) }

// CommitIf commits through the wrapped staging's ConditionalCommitter and
// indexes as Commit does; errors.ErrUnsupported when it has none.
func (s *stagedFile) CommitIf(ctx context.Context, cond vfs.Precondition) error {
	if _, ok := s.StagedFile.(vfs.ConditionalCommitter); !ok {
		return errors.ErrUnsupported
	}
	return s.commit(ctx, func(ctx context.Context) error { return vfs.CommitIf(ctx, s.StagedFile, cond) })
}

// commit runs publish (the wrapped staging's Commit or CommitIf), then
// indexes what it published.
func (s *stagedFile) commit(ctx context.Context, publish func(context.Context) error) error {
	f, p := s.f, s.path
	done, err := f.beginWrite(p)
	if err != nil {
		return err
	}
	defer done()
	// What the index needs is read from the staging before it ends; a file
	// too large to index is not read (update records it as large).
	var data []byte
	if size := s.Size(); size <= f.opts.MaxFileSize && !f.skipped(p) {
		data = make([]byte, size)
		n, err := s.ReadAt(data, 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		data = data[:n]
	}
	if err := publish(ctx); err != nil {
		return err
	}
	err = f.update(ctx, p, data)
	f.notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	return err
}
