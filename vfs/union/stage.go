package union

import (
	"context"
	"errors"
	"io"

	"github.com/julyfs/julyfs/vfs"
)

var (
	_ vfs.FileOpener           = (*FS)(nil)
	_ vfs.Stager               = (*FS)(nil)
	_ vfs.FileDescriptor       = fdFileReader{}
	_ vfs.FileDescriptor       = fdStagedFile{}
	_ vfs.ConditionalCommitter = fdStagedFile{}
)

// OpenFile opens the file at path in the mount serving it, through the
// mount's FileOpener or its fallback. The reader's errors name the union
// path; it has the mount's reader's host descriptor (vfs.FileDescriptor)
// when that has one, so a FUSE mount of a union passes through for the
// files of its local: mounts.
func (u *FS) OpenFile(ctx context.Context, path string) (vfs.FileReader, error) {
	m, cp, err := u.target(path)
	if err != nil {
		return nil, err
	}
	r, err := vfs.OpenFile(ctx, m.fs, cp)
	if err != nil {
		return nil, m.fixErr(err, cp)
	}
	fr := &fileReader{FileReader: r, m: m, cp: cp}
	if _, ok := r.(vfs.FileDescriptor); ok {
		return fdFileReader{fr}, nil
	}
	return fr, nil
}

// fdFileReader is a fileReader whose mount's reader has a host descriptor.
type fdFileReader struct{ *fileReader }

// Fd is the mount's reader's host descriptor (vfs.FileDescriptor).
func (r fdFileReader) Fd() uintptr { return r.FileReader.(vfs.FileDescriptor).Fd() }

// fileReader is a mount's reader with errors in the union's namespace.
type fileReader struct {
	vfs.FileReader
	m  *mount
	cp string
}

func (r *fileReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.FileReader.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		err = r.m.fixErr(err, r.cp)
	}
	return n, err
}

func (r *fileReader) Close() error { return r.m.fixErr(r.FileReader.Close(), r.cp) }

// Stage opens a staging for the file at path in the mount serving it,
// through the mount's Stager or its fallback; "no mount for path" where no
// mount covers path. The staging's errors name the union path; it has the
// mount's staging's host descriptor (vfs.FileDescriptor) when that has
// one.
func (u *FS) Stage(ctx context.Context, path string, keep bool) (vfs.StagedFile, error) {
	m, cp, err := u.target(path)
	if err != nil {
		return nil, err
	}
	s, err := vfs.Stage(ctx, m.fs, cp, keep)
	if err != nil {
		return nil, m.fixErr(err, cp)
	}
	sf := &stagedFile{StagedFile: s, m: m, cp: cp}
	if _, ok := s.(vfs.FileDescriptor); ok {
		return fdStagedFile{sf}, nil
	}
	return sf, nil
}

// fdStagedFile is a stagedFile whose mount's staging has a host
// descriptor.
type fdStagedFile struct{ *stagedFile }

// Fd is the mount's staging's host descriptor (vfs.FileDescriptor): writes
// on it are staged, as the mount's staging says.
func (s fdStagedFile) Fd() uintptr { return s.StagedFile.(vfs.FileDescriptor).Fd() }

// stagedFile is a mount's staging with errors in the union's namespace.
type stagedFile struct {
	vfs.StagedFile
	m  *mount
	cp string
}

func (s *stagedFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.StagedFile.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		err = s.m.fixErr(err, s.cp)
	}
	return n, err
}

func (s *stagedFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := s.StagedFile.WriteAt(p, off)
	return n, s.m.fixErr(err, s.cp)
}

func (s *stagedFile) Truncate(size int64) error {
	return s.m.fixErr(s.StagedFile.Truncate(size), s.cp)
}

func (s *stagedFile) Commit(ctx context.Context) error {
	return s.m.fixErr(s.StagedFile.Commit(ctx), s.cp)
}

func (s *stagedFile) Abort() error { return s.m.fixErr(s.StagedFile.Abort(), s.cp) }

// BaseETag forwards to the mount's staging (vfs.ConditionalCommitter).
func (s *stagedFile) BaseETag() string { return vfs.BaseETag(s.StagedFile) }

// CommitIf forwards to the mount's staging; errors.ErrUnsupported when it
// cannot commit conditionally.
func (s *stagedFile) CommitIf(ctx context.Context, cond vfs.Precondition) error {
	err := vfs.CommitIf(ctx, s.StagedFile, cond)
	if errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return s.m.fixErr(err, s.cp)
}
