package vfs

import (
	"context"
	"errors"
)

// OwnerSetter is the optional capability of giving a file or a directory
// another owner or group (chown(2)), for a tree whose files have owners
// (a host directory under vfs/local), so tar -xpf and cp -a as root
// restore them. The host decides who may: only a privileged process gives
// a file away; an owner may change the group to one of its own groups.
type OwnerSetter interface {
	// SetOwner sets the owner uid and the group gid of the file or
	// directory at path (links followed inside the tree); a negative id
	// leaves that one as it is. A missing path fails with not found; a
	// change the host refuses fails with its cause (syscall.EPERM).
	SetOwner(ctx context.Context, path string, uid, gid int) error
}

// LinkOwnerSetter is the optional capability of setting a symbolic link's
// own owner and group (lchown(2)), which tar and cp -a restore.
type LinkOwnerSetter interface {
	// SetLinkOwner sets the owner and group of the link at path itself,
	// not followed (links in its parent directories are); a negative id
	// leaves that one as it is. A missing path fails with not found; a
	// path that is not a link fails with cause syscall.EINVAL.
	SetLinkOwner(ctx context.Context, path string, uid, gid int) error
}

// SetOwner sets an owner and group through fsys's OwnerSetter, or answers
// errors.ErrUnsupported when fsys has none.
func SetOwner(ctx context.Context, fsys FileSystem, path string, uid, gid int) error {
	if o, ok := fsys.(OwnerSetter); ok {
		return o.SetOwner(ctx, path, uid, gid)
	}
	return errors.ErrUnsupported
}

// SetLinkOwner sets a link's own owner and group through fsys's
// LinkOwnerSetter, or answers errors.ErrUnsupported when fsys has none.
func SetLinkOwner(ctx context.Context, fsys FileSystem, path string, uid, gid int) error {
	if o, ok := fsys.(LinkOwnerSetter); ok {
		return o.SetLinkOwner(ctx, path, uid, gid)
	}
	return errors.ErrUnsupported
}
