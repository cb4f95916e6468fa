package fusemount

import (
	"context"
	"errors"
	"syscall"
	"time"

	"github.com/julyfs/julyfs/third_party/go-fuse/fs"
	"github.com/julyfs/julyfs/vfs"
)

// renameNoReplace and renameExchange are renameat2's flags (linux/fs.h).
const (
	renameNoReplace = 1
	renameExchange  = 2
)

// Rename moves the file or directory name of n to newName in newParent.
// Where the tree can move in one step (vfs.Renamer: local:, temp:, within
// one mount of a union) it does, atomically: a reader sees the old name or
// the new one, never a partial file, and a local: file keeps its host
// inode. A move the tree cannot make in one step (across the mounts of a
// union) is EXDEV, as across filesystems, so mv falls back to copy and
// delete; a read-only tree is EROFS. A tree with no Renamer gets a copy
// through Read and Write followed by Delete of the source: not atomic (a
// failure part-way leaves the source whole and some of the destination
// written; other processes may briefly see both), file by file for a
// directory.
func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	m := n.m
	if m.opts.ReadOnly {
		return syscall.EROFS
	}
	if flags&renameExchange != 0 || flags&^uint32(renameNoReplace) != 0 {
		return syscall.EINVAL
	}
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	from, stale := n.livePath()
	if stale != 0 {
		return stale
	}
	to, stale := np.livePath()
	if stale != 0 {
		return stale
	}
	src := vfs.Join(from, name)
	dst := vfs.Join(to, newName)
	if src == dst {
		return 0
	}
	defer n.forgetSubdirs()
	defer np.forgetSubdirs()
	sfi, err := m.stat(src)
	if err != nil {
		return m.errno("rename", src, err)
	}
	dfi, err := m.stat(dst)
	if err != nil {
		return m.errno("rename", dst, err)
	}
	// A link is a non-directory to rename(2), wherever it points: the
	// tree moves the link itself.
	if sfi.Link || sfi.Special != 0 {
		sfi.Kind = vfs.KindFile
	}
	if dfi.Link || dfi.Special != 0 {
		dfi.Kind = vfs.KindFile
	}
	if sfi.Kind == vfs.KindMissing {
		// A file created here but never committed still has a node.
		return syscall.ENOENT
	}
	if flags&renameNoReplace != 0 && dfi.Kind != vfs.KindMissing {
		return syscall.EEXIST
	}
	if r, ok := m.fsys.(vfs.Renamer); ok {
		if errno := n.renameInTree(r, name, src, dst, sfi, dfi, np, newName); errno != 0 {
			return errno
		}
		n.displaceChild(name)
		m.holdParents(src)
		return 0
	}
	if dfi.Kind == vfs.KindFile {
		np.preserve(newName)
	}
	var errno syscall.Errno
	if sfi.Kind == vfs.KindFile {
		errno = n.renameFile(name, src, dst, dfi)
	} else {
		errno = n.renameDir(src, dst, dfi)
	}
	if errno != 0 {
		return errno
	}
	if dfi.Kind != vfs.KindMissing {
		np.nameGone(newName)
	}
	n.displaceChild(name)
	m.holdParents(src)
	return 0
}

// renameVictim is the node of the file at n's child name that a rename
// is about to replace (dfi describes it), and whether that file has other
// names (its node then lives on through them). In the same hold of the
// node's lock as the host rename, the rename copies the file for the
// handles open on it (preserveLocked) and marks it deleted, unless it
// has other names, and counts the rename (renamedOver). An open of the
// node, which reads the file by name under that lock, so either reads
// it before the rename or answers ESTALE (the kernel then looks the name
// up again and opens the file there now), and never reads the file put
// there at the size the kernel has for the one it replaced; nor does a
// lookup, a getattr or a first write take the new file for the node
// meanwhile (they see it deleted).
func (n *node) renameVictim(name string, dfi vfs.FileInfo) (vn *node, linked bool) {
	if dfi.Kind != vfs.KindFile || dfi.Link || dfi.Special != 0 {
		return nil, false
	}
	ch := n.GetChild(name)
	if ch == nil {
		return nil, false
	}
	vn, ok := ch.Operations().(*node)
	if !ok {
		return nil, false
	}
	return vn, vn.hostLinked()
}

// displaceChild records that the child name of n, just renamed, and what
// is under it keep their inode numbers at their new paths.
func (n *node) displaceChild(name string) {
	if ch := n.GetChild(name); ch != nil {
		n.m.displace(ch)
	}
}

func (n *node) renameFile(name, src, dst string, dfi vfs.FileInfo) syscall.Errno {
	m := n.m
	if dfi.Kind == vfs.KindDir {
		return syscall.EISDIR
	}
	if ch := n.GetChild(name); ch != nil {
		if cn, ok := ch.Operations().(*node); ok {
			if errno := cn.commit(); errno != 0 {
				return errno
			}
		}
	}
	if errno := m.copyFile(src, dst); errno != 0 {
		return errno
	}
	if err := m.remove(src); err != nil {
		return m.errno("rename", src, err)
	}
	m.forget(dst)
	m.rebase(src, dst)
	return 0
}

func (n *node) renameDir(src, dst string, dfi vfs.FileInfo) syscall.Errno {
	m := n.m
	switch dfi.Kind {
	case vfs.KindFile:
		return syscall.ENOTDIR
	case vfs.KindDir:
		entries, err := m.list(dst)
		if err != nil {
			return m.errno("rename", dst, err)
		}
		if len(entries) > 0 {
			return syscall.ENOTEMPTY
		}
		m.removePending(dst)
	}
	if vfs.HasPrefix(dst, src) {
		return syscall.EINVAL
	}
	// Uncommitted writes under src go to the tree first, so the copy
	// carries them.
	for _, dn := range m.dirtyNodes() {
		if dp, stale := dn.livePath(); stale == 0 && vfs.HasPrefix(dp, src) {
			if errno := dn.commit(); errno != 0 {
				return errno
			}
		}
	}
	var files, dirs []string
	if errno := m.walk(src, &files, &dirs); errno != 0 {
		return errno
	}
	for _, f := range files {
		rel, _ := vfs.Rel(f, src)
		if errno := m.copyFile(f, vfs.Join(dst, rel)); errno != 0 {
			return errno
		}
	}
	for _, f := range files {
		if err := m.remove(f); err != nil {
			return m.errno("rename", f, err)
		}
	}
	m.rebase(src, dst)
	// Directories that held no file (made by mkdir, or empty host
	// directories) are held by the mount at their new place.
	for _, d := range append(dirs, src) {
		rel, _ := vfs.Rel(d, src)
		to := vfs.Join(dst, rel)
		if fi, err := m.stat(to); err == nil && fi.Kind == vfs.KindMissing {
			m.addPending(to, time.Now())
		}
		if fi, err := m.fsys.Stat(m.ctx, d); err == nil && fi.Kind == vfs.KindDir {
			m.hide(d)
		}
	}
	return 0
}

// walk collects the files and directories under dir, as the mount lists
// them.
func (m *mount) walk(dir string, files, dirs *[]string) syscall.Errno {
	entries, err := m.list(dir)
	if err != nil {
		return m.errno("rename", dir, err)
	}
	for _, e := range entries {
		if e.Kind == vfs.KindDir {
			*dirs = append(*dirs, e.Path)
			if errno := m.walk(e.Path, files, dirs); errno != 0 {
				return errno
			}
			continue
		}
		*files = append(*files, e.Path)
	}
	return 0
}

// copyFile copies the file src to dst through Read and Write.
func (m *mount) copyFile(src, dst string) syscall.Errno {
	data, err := m.fsys.Read(m.ctx, src)
	if err != nil {
		return m.errno("rename", src, err)
	}
	if err := m.write(dst, data); err != nil {
		return m.errno("rename", dst, err)
	}
	return 0
}

// renameInTree moves src to dst through the tree's Renamer, after the
// checks rename(2) makes (a file onto a directory is EISDIR, a directory
// onto a file ENOTDIR or onto a non-empty directory ENOTEMPTY, a directory
// into itself EINVAL) and after committing uncommitted writes under src,
// whose stagings name the old path.
func (n *node) renameInTree(r vfs.Renamer, name, src, dst string, sfi, dfi vfs.FileInfo, np *node, newName string) syscall.Errno {
	m := n.m
	switch {
	case sfi.Kind == vfs.KindFile && dfi.Kind == vfs.KindDir:
		return syscall.EISDIR
	case sfi.Kind == vfs.KindDir && dfi.Kind == vfs.KindFile:
		return syscall.ENOTDIR
	case sfi.Kind == vfs.KindDir && vfs.HasPrefix(dst, src):
		return syscall.EINVAL
	case sfi.Kind == vfs.KindDir && dfi.Kind == vfs.KindDir:
		entries, err := m.list(dst)
		if err != nil {
			return m.errno("rename", dst, err)
		}
		if len(entries) > 0 {
			return syscall.ENOTEMPTY
		}
	}
	if sfi.Kind == vfs.KindFile {
		if ch := n.GetChild(name); ch != nil {
			if cn, ok := ch.Operations().(*node); ok {
				if errno := cn.commit(); errno != 0 {
					return errno
				}
			}
		}
	} else {
		for _, dn := range m.dirtyNodes() {
			if dp, stale := dn.livePath(); stale == 0 && vfs.HasPrefix(dp, src) {
				if errno := dn.commit(); errno != 0 {
					return errno
				}
			}
		}
	}
	victim, linked := np.renameVictim(newName, dfi)
	if dfi.Kind == vfs.KindFile && victim == nil {
		np.preserve(newName) // a link or a special file; a victim's handles get theirs below
	}
	// A directory only the mount holds (made by mkdir on a tree without
	// directories of its own) is not in the tree: it moves in the mount.
	tf, err := m.fsys.Stat(m.ctx, src)
	if err != nil {
		return m.errno("rename", src, err)
	}
	if tf.Kind != vfs.KindMissing || tf.Link || tf.Special != 0 {
		if dfi.Kind == vfs.KindDir {
			// An empty directory at dst that only the mount holds.
			m.removePending(dst)
		}
		m.beginSelfTree(src)
		m.beginSelfTree(dst)
		if victim != nil {
			victim.mu.Lock()
			if !linked {
				victim.preserveLocked()
			}
		}
		err = r.Rename(m.ctx, src, dst)
		if victim != nil {
			if err == nil {
				victim.renamedOver.Add(1)
				victim.deleted = victim.deleted || !linked // nameGone does the rest
			}
			victim.mu.Unlock()
		}
		m.endSelfTree(dst)
		m.endSelfTree(src)
		switch {
		case errors.Is(err, syscall.EXDEV):
			return syscall.EXDEV
		case err != nil:
			return m.errno("rename", src, err)
		}
	}
	if dfi.Kind != vfs.KindMissing {
		np.nameGone(newName)
	}
	m.forget(dst)
	m.rebase(src, dst)
	if sfi.Kind == vfs.KindDir && tf.Kind == vfs.KindMissing {
		m.removePending(src)
		m.addPending(dst, sfi.ModTime)
	}
	return 0
}
