package rootspec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/overlay"
	"github.com/julyfs/julyfs/vfs/readonly"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// ErrNoMounts is the error of building an empty table.
var ErrNoMounts = errors.New("no mounts: pass --mount PREFIX=KIND:ARG (for example --mount /=local:.) or --config FILE")

// Root is a built tree and the resources behind it.
type Root struct {
	// FS is the composed tree.
	FS vfs.FileSystem
	// closers release what the trees hold (local directory handles), in
	// the order they were opened.
	closers []io.Closer
	// at is the prefix of the mount being built, for warnings.
	at string
}

// Close releases the resources of every tree in the root. The tree must
// not be used afterwards.
func (r *Root) Close() error {
	var errs []error
	for _, c := range slices.Backward(r.closers) {
		errs = append(errs, c.Close())
	}
	r.closers = nil
	return errors.Join(errs...)
}

// Open builds the table into one tree: a single mount at "/" is that tree
// itself, anything else a union of the mounts in table order. An empty
// table fails with [ErrNoMounts]. A tree that cannot be built (a local
// directory that has gone) fails with an error naming where its spec was
// written. Call Close on the result when done.
func (t Table) Open(ctx context.Context) (*Root, error) {
	r := &Root{}
	fsys, err := r.table(ctx, t)
	if err != nil {
		r.Close()
		return nil, err
	}
	r.FS = fsys
	return r, nil
}

// Build is Open for callers that keep the tree for the life of the
// process: the directory handles of local trees are released only when
// the tree is garbage collected. Long-lived callers that build many trees
// use Open and Close.
func (t Table) Build(ctx context.Context) (vfs.FileSystem, error) {
	r, err := t.Open(ctx)
	if err != nil {
		return nil, err
	}
	return r.FS, nil
}

// Open builds one spec; see [Table.Open].
func (s Spec) Open(ctx context.Context) (*Root, error) {
	r := &Root{}
	fsys, err := r.spec(ctx, s)
	if err != nil {
		r.Close()
		return nil, err
	}
	r.FS = fsys
	return r, nil
}

func (r *Root) table(ctx context.Context, t Table) (vfs.FileSystem, error) {
	if len(t) == 0 {
		return nil, ErrNoMounts
	}
	if len(t) == 1 && t[0].Prefix == "/" {
		return r.spec(ctx, t[0].Spec)
	}
	mounts := make([]union.Mount, 0, len(t))
	outer := r.at
	defer func() { r.at = outer }()
	for _, m := range t {
		r.at = path.Join("/", outer, m.Prefix)
		fsys, err := r.spec(ctx, m.Spec)
		if err != nil {
			return nil, err
		}
		mounts = append(mounts, union.Mount{Prefix: m.Prefix, FS: fsys})
	}
	u, err := union.New(mounts)
	if err != nil {
		return nil, err
	}
	return u, nil
}

// wrap names where s was written in err.
func (s Spec) wrap(err error) error {
	if err == nil || s.Origin == "" {
		return err
	}
	return fmt.Errorf("%s: %w", s.Origin, err)
}

func (r *Root) spec(ctx context.Context, s Spec) (vfs.FileSystem, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var (
		fsys vfs.FileSystem
		err  error
	)
	switch s.Kind {
	case KindTemp:
		fsys, err = temp.New(s.Files)
		err = s.wrap(err)
	case KindLocal:
		if err := checkDir(s.Dir); err != nil {
			return nil, s.wrap(err)
		}
		l, err := local.New(s.Dir)
		if err != nil {
			return nil, s.wrap(err)
		}
		r.closers = append(r.closers, l)
		fsys = l
	case KindHostfiles:
		fsys, err = r.openHostfiles(ctx, s)
	case KindPlugin:
		fsys, err = r.openPlugin(ctx, s)
		err = s.wrap(err)
	case KindOverlay:
		layers := make([]vfs.FileSystem, 0, len(s.Layers))
		for _, l := range s.Layers {
			lf, err := r.spec(ctx, l)
			if err != nil {
				return nil, err
			}
			layers = append(layers, lf)
		}
		fsys = overlay.New(layers...)
	case KindUnion:
		fsys, err = r.table(ctx, s.Mounts)
	default:
		err = fmt.Errorf("unknown kind %q (known: %v)", s.Kind, Kinds())
	}
	if err != nil {
		return nil, err
	}
	if s.ReadOnly && s.Kind != KindOverlay {
		fsys = readonly.New(fsys)
	}
	return fsys, nil
}
