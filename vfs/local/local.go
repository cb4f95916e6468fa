// Package local is the host disk under a root directory as a
// [vfs.FileSystem] rooted at "/": the contract's localFileSystem, confined.
//
// # Confinement
//
// Every path is normalized with [vfs.Clean] and resolved through an
// [os.Root] opened on the root directory, so nothing reaches outside the
// root by "..", an absolute path or a symbolic link, whatever the link's
// target and however it was swapped in: such a path behaves as missing for
// the read verbs and fails for the write verbs. Exact-path verbs (Stat,
// Read, ReadAt, List of a named directory, and the scope of Grep and Glob)
// follow links while the target stays inside the root, whether the target
// is relative or absolute: os.Root refuses every absolute target, so one
// naming a place under the root's real host path is rewritten relative to
// the root (by hand, link by link; see FS.resolve) and opened through the
// os.Root again. On Linux an exact path is first resolved by the kernel in
// one openat2 with RESOLVE_BENEATH, which refuses anything os.Root would
// and is much cheaper for deep paths; what it refuses goes to os.Root.
//
// The walking verbs (Glob, Grep) do not follow directory links, as native
// LS, Glob and Grep do not: a walk never descends into a link, so it never
// loops and never sees a tree twice. A link to a regular file inside the
// root globs and greps as a file (DirEntry.Link set); links to directories,
// dangling links and links that leave the root are left out of walks.
// List shows a directory as ls does: every link in it, with DirEntry.Link
// set and Kind what the link leads to inside the root (KindMissing when it
// dangles or leaves it), so a mount can list it, lstat it, readlink it and
// remove it. Stat of a link follows it inside the root, says Link, and
// gives the link's own modification time (FileInfo.LinkModTime). Anything
// that is neither a regular file, a directory nor a link (FIFOs, sockets,
// devices) is missing everywhere.
//
// # Writes
//
// Write is atomic: the data goes to a temporary file in the target's
// directory, is synced, and is renamed over the target, after which the
// directory is synced too. A failed write leaves the old file intact and no
// temporary file behind. Write creates missing parent directories
// (following links inside the root, absolute ones too, as Read does) and
// replaces a link at the target path with a regular file (it never writes
// through a link). A rewrite keeps the file's permission bits, sticky bit,
// owner and group where the process may set them: a process that is not
// root keeps itself as the owner and keeps the group only where it is a
// member. The setuid and setgid bits are dropped, as the kernel drops them
// when an unprivileged process writes to a file: new contents never
// inherit a privilege. The temporary files (named ".julyfs-tmp-" and a
// random suffix) never show in List, Glob or Grep; one left by a writer
// that died is removed later (see sweep.go: stale and unlocked, when the
// tree opens, when a walk reads its directory, or by [FS.Sweep]). Empty
// directories are real directories: they list, and Delete (of files only)
// never removes them. [FS.Rename] moves a file or a directory in one
// rename(2).
//
// Paths longer than the kernel's PATH_MAX (4,096 bytes) work for every
// verb (os.Root resolves them a name at a time); a single name longer than
// the host allows (255 bytes) fails to write with "file name too long" and
// is missing for the read verbs.
//
// # ETags
//
// Stat's etag is derived from the file's inode, size and modification time
// ("inode-size-mtime" in hex), so it is cheap and changes on every write
// through this package (each write makes a new inode, and its mtime is set
// later than the replaced file's, so a reused inode number cannot repeat
// an etag). An edit by another program in place that keeps size and mtime
// is not seen.
//
// # Concurrency
//
// An FS is safe for concurrent use. Every change (Write, WriteIf, a
// staging's Commit, Delete, Rename) holds an flock on the directory of the
// file it changes around its check and its rename, so [FS.WriteIf] is
// atomic against every writer of the tree through this package, in this
// process or in another (a second julyfs, julyfsd, july mcp): of two
// processes that read the same etag and WriteIf with it, one succeeds and
// the other gets "conflict: /p". Programs that write the host directory
// directly take no such lock. Change notifications ([FS.Watch]) cover
// writes and deletes made through this FS only, not changes made on the
// disk by others; [FS.WatchHost] follows those (inotify, asynchronous, and
// it can lose events: see watch.go).
//
// # Host access
//
// A new file a FUSE mount creates is [FS.CreateInPlace]: one lock-free
// openat2 beneath the root with RENAME_NOREPLACE semantics (a "create
// only" [FS.WriteIf] renames with RENAME_NOREPLACE too). [FS.Rename] is one
// confined renameat (EXDEV across host filesystems). [FS.WatchHost]
// follows changes any process makes under the root: on Linux the watch
// reads inotify itself, in batches 2 ms apart while events keep coming,
// IN_ISDIR telling files from directories; elsewhere through fsnotify;
// lost events and the watch limit are reported. [FS.WatchHostWith] adds
// directories to skip and a barrier (HostWatchOptions.BarrierDir: a
// cookie file, every change before it reported), for the index's follower. [OpenBeneath] is the
// tree's exact-path first open (openat2 RESOLVE_BENEATH), shared with a
// plugin's host, and [FS.OpenStatDir] holds a directory open to describe
// its entries by name (one fstatat each), for a mount's readdirplus.
//
// # Errors
//
// Errors are *vfs.PathError values about the posix path, never naming a
// host path: "not found: /p" for a missing file, "is a directory: /p",
// "write failed: /p: no space left on device" with the OS error as the
// cause (its message after the contract string), and
// for other read failures (permission denied) a KindOther error whose
// message is the path and the OS error ("/p: permission denied").
package local

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
)

// FS is the host directory tree under a root, confined to it.
type FS struct {
	root *os.Root
	name string // the host path of the root, for Root only
	// real is the root's absolute host path with its links resolved, for
	// links with an absolute target inside the root (see resolve); ""
	// when it could not be found out.
	real string
	// rootDir is the root directory open for openat2 (Linux), or nil;
	// os.Root resolves every name then.
	rootDir *os.File
	mu      sync.Mutex // serializes check-and-rename in WriteIf and Delete
	vfs.Watchers
}

var (
	_ vfs.FileSystem        = (*FS)(nil)
	_ vfs.RangeReader       = (*FS)(nil)
	_ vfs.ConditionalWriter = (*FS)(nil)
	_ vfs.Notifier          = (*FS)(nil)
	_ vfs.DirMaker          = (*FS)(nil)
	_ vfs.DirRemover        = (*FS)(nil)
)

// New opens the directory root as a tree. root must exist and be a
// directory; it is resolved once, so renaming it later does not move the
// tree. Call Close to release the directory handle.
func New(root string) (*FS, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	fsys := &FS{root: r, name: root, rootDir: openRootFD(r)}
	if abs, err := filepath.Abs(root); err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			fsys.real = real
		}
	}
	fsys.sweepRoot()
	return fsys, nil
}

// maxLinks bounds the links resolve follows for one name, as the kernel's
// own limit (40) does.
const maxLinks = 40

// resolve follows the links along name (relative to the root) by hand, as
// os.Root will not follow a link whose target is an absolute path: such a
// target that lies under the root's real host path becomes a name under
// the root; one outside the root, a ".." above it, or more than maxLinks
// links fail (ok false). The result holds no link up to its first missing
// component; whatever opens it still does so through os.Root, which keeps
// every open inside the root whatever changes meanwhile.
func (fsys *FS) resolve(name string) (string, bool) {
	if fsys.real == "" {
		return "", false
	}
	todo := strings.Split(name, "/")
	var done []string
	for hops := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", false
			}
			done = done[:len(done)-1]
			continue
		}
		cur := strings.Join(append(done, c), "/")
		fi, err := fsys.root.Lstat(cur)
		if err != nil {
			done = append(append(done, c), todo...) // missing: the caller's open says so
			break
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		if hops++; hops > maxLinks {
			return "", false
		}
		target, err := fsys.root.Readlink(cur)
		if err != nil {
			return "", false
		}
		if filepath.IsAbs(target) {
			r, err := filepath.Rel(fsys.real, filepath.Clean(target))
			if err != nil || r == ".." || strings.HasPrefix(r, "../") {
				return "", false
			}
			done = nil
			target = filepath.ToSlash(r)
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	if len(done) == 0 {
		return ".", true
	}
	return strings.Join(done, "/"), true
}

// retry reports the name to try again when an operation on name failed
// because os.Root refused a link with an absolute target (see resolve).
func (fsys *FS) retry(name string, err error) (string, bool) {
	if err == nil || !isEscape(err) {
		return "", false
	}
	r, ok := fsys.resolve(name)
	return r, ok && r != name
}

// isEscape reports whether err is os.Root's refusal of a name that leaves
// the root. The standard library does not export that error, so its value
// is taken once from os.Root itself (a lexical refusal that touches no
// file) and compared by identity, never by text; TestEscapeErrorKnown
// fails if the standard library stops reporting it that way.
func isEscape(err error) bool {
	e := rootEscapeErr()
	return e != nil && errors.Is(errno(err), e)
}

// IsEscape reports whether err is os.Root's refusal of a name that leaves
// its root ("path escapes from parent"), matched by identity as vfs/local
// does for its own confinement, never by the error's text.
func IsEscape(err error) bool { return isEscape(err) }

// rootEscapeErr is os.Root's error for "..", or nil if it could not be had.
var rootEscapeErr = sync.OnceValue(func() error {
	r, err := os.OpenRoot(os.TempDir())
	if err != nil {
		return nil
	}
	defer r.Close()
	_, err = r.Lstat("../julyfs-escape-probe")
	if err == nil {
		return nil
	}
	return errno(err)
})

// stat is os.Root's Stat, following links with an absolute target inside
// the root; one openat2 where the kernel can resolve the name beneath the
// root itself.
func (fsys *FS) stat(name string) (fs.FileInfo, error) {
	if f, ok, err := fsys.openBeneath(name, oPath); ok {
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return f.Stat()
	}
	fi, err := fsys.root.Stat(name)
	if r, ok := fsys.retry(name, err); ok {
		return fsys.root.Stat(r)
	}
	return fi, err
}

// openFile is os.Root's OpenFile, following links with an absolute target
// inside the root; one openat2 where the kernel can resolve the name
// beneath the root itself.
func (fsys *FS) openFile(name string, flag int) (*os.File, error) {
	if f, ok, err := fsys.openBeneath(name, flag); ok {
		return f, err
	}
	f, err := fsys.root.OpenFile(name, flag, 0)
	if r, ok := fsys.retry(name, err); ok {
		return fsys.root.OpenFile(r, flag, 0)
	}
	return f, err
}

// openFD is openFile answering the bare descriptor where the kernel
// resolves the name beneath the root (f nil: the caller closes fd with
// unix.Close), and os.Root's file otherwise (fd is f's: the caller
// closes f). It is for a directory opened for a system call or a few
// (a change in it, a listing), which os.NewFile would make cost more
// than the calls themselves (see openBeneathFD).
func (fsys *FS) openFD(name string, flag int) (fd int, f *os.File, err error) {
	if fd, ok, err := fsys.openBeneathFD(name, flag); ok {
		return fd, nil, err
	}
	f, err = fsys.root.OpenFile(name, flag, 0)
	if r, ok := fsys.retry(name, err); ok {
		f, err = fsys.root.OpenFile(r, flag, 0)
	}
	if err != nil {
		return -1, nil, err
	}
	return int(f.Fd()), f, nil
}

// Root returns the host directory the tree was opened on.
func (fsys *FS) Root() string { return fsys.name }

// Close releases the root directory handle. Verbs called after Close fail.
func (fsys *FS) Close() error {
	if fsys.rootDir != nil {
		fsys.rootDir.Close()
	}
	return fsys.root.Close()
}

// rel maps a clean posix path to a name relative to the root.
func rel(p string) string {
	if p == "/" {
		return "."
	}
	return p[1:]
}

// errno returns the innermost OS error of err (an *os.PathError's Err),
// so messages name the posix path rather than the host one.
func errno(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// isMissing reports whether err means the path names nothing reachable:
// it does not exist, a parent is not a directory, a link loops or dangles,
// or the path resolves outside the root.
func isMissing(err error) bool {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) ||
		errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENAMETOOLONG) {
		return true
	}
	return isEscape(err)
}

// otherError wraps an unexpected OS error about p.
func otherError(p string, err error) error {
	return vfs.NewError(vfs.KindOther, p, errno(err))
}

// kindOf maps a file mode to a contract kind; anything but a regular file
// or a directory is missing.
func kindOf(m fs.FileMode) vfs.EntryKind {
	switch {
	case m.IsRegular():
		return vfs.KindFile
	case m.IsDir():
		return vfs.KindDir
	}
	return vfs.KindMissing
}

// etag derives an etag from the inode, size and modification time.
func etag(fi fs.FileInfo) string {
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = uint64(st.Ino)
	}
	b := make([]byte, 0, 48)
	b = strconv.AppendUint(b, ino, 16)
	b = append(b, '-')
	b = strconv.AppendInt(b, fi.Size(), 16)
	b = append(b, '-')
	b = strconv.AppendInt(b, fi.ModTime().UnixNano(), 16)
	return string(b)
}

func info(p string, fi fs.FileInfo) vfs.FileInfo {
	k := kindOf(fi.Mode())
	var out vfs.FileInfo
	switch k {
	case vfs.KindFile:
		out = vfs.FileInfo{Path: p, Kind: k, Size: fi.Size(), ModTime: fi.ModTime(), ETag: etag(fi)}
	case vfs.KindDir:
		out = vfs.FileInfo{Path: p, Kind: k, ModTime: fi.ModTime()}
	default:
		if sp := fi.Mode() & (fs.ModeNamedPipe | fs.ModeSocket | fs.ModeDevice | fs.ModeCharDevice); sp != 0 {
			out = vfs.FileInfo{Path: p, Kind: vfs.KindMissing, ModTime: fi.ModTime(), Special: sp}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				out.Rdev = uint64(st.Rdev)
			}
			break
		}
		return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}
	}
	// The host's permission bits and owner, for a mount to enforce.
	out.Mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		out.UID, out.GID, out.HasMode = st.Uid, st.Gid, true
		out.Nlink, out.ChangeTime = uint32(st.Nlink), time.Unix(st.Ctim.Unix())
		out.Dev, out.Ino = uint64(st.Dev), uint64(st.Ino)
	}
	return out
}

// Stat describes path, following links inside the root; FileInfo.Link
// says path itself is a link (KindMissing with Link: one that dangles or
// leaves the root) and FileInfo.LinkModTime is then the link's own time.
func (fsys *FS) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return vfs.FileInfo{}, err
	}
	if out, ok, err := fsys.statBeneath(p); ok {
		return out, err
	}
	fi, lfi, err := fsys.statLink(rel(p))
	var out vfs.FileInfo
	switch {
	case err == nil:
		out = info(p, fi)
	case isMissing(err):
		out = vfs.FileInfo{Path: p, Kind: vfs.KindMissing}
	default:
		return vfs.FileInfo{}, otherError(p, err)
	}
	if lfi != nil {
		out.Link, out.LinkModTime = true, lfi.ModTime()
		if st, ok := lfi.Sys().(*syscall.Stat_t); ok {
			out.LinkUID, out.LinkGID, out.LinkHasOwner = st.Uid, st.Gid, true
			out.LinkDev, out.LinkIno = uint64(st.Dev), uint64(st.Ino)
			out.LinkChangeTime = time.Unix(st.Ctim.Unix())
		}
	}
	return out, nil
}

// statBeneath is Stat's answer for clean p where the kernel resolves the
// name beneath the root and it is not a link: one openat2 of the name
// itself (O_PATH|O_NOFOLLOW), an fstat and a close on the bare
// descriptor. ok is false when Stat must ask statLink: no openat2, a
// refusal os.Root may judge otherwise, the root, or a link (followed
// there).
func (fsys *FS) statBeneath(p string) (vfs.FileInfo, bool, error) {
	if p == "/" {
		return vfs.FileInfo{}, false, nil
	}
	fd, ok, err := fsys.openBeneathFD(rel(p), oPath|oNoFollow)
	switch {
	case !ok:
		return vfs.FileInfo{}, false, nil
	case err != nil && isMissing(err):
		return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}, true, nil
	case err != nil:
		return vfs.FileInfo{}, true, otherError(p, err)
	}
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	unix.Close(fd)
	switch {
	case err != nil:
		return vfs.FileInfo{}, true, otherError(p, err)
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return vfs.FileInfo{}, false, nil
	}
	return infoStat(p, &st), true, nil
}

// infoStat is info for a raw status: the same answer for the same file.
func infoStat(p string, st *unix.Stat_t) vfs.FileInfo {
	var out vfs.FileInfo
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		out = vfs.FileInfo{Path: p, Kind: vfs.KindFile, Size: st.Size, ModTime: time.Unix(st.Mtim.Unix()), ETag: etagOf(st)}
	case unix.S_IFDIR:
		out = vfs.FileInfo{Path: p, Kind: vfs.KindDir, ModTime: time.Unix(st.Mtim.Unix())}
	default:
		sp := specialOf(st.Mode)
		if sp == 0 {
			return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}
		}
		out = vfs.FileInfo{Path: p, Kind: vfs.KindMissing, ModTime: time.Unix(st.Mtim.Unix()), Special: sp, Rdev: uint64(st.Rdev)}
	}
	out.Mode = vfs.FileModeOf(uint32(st.Mode))
	out.UID, out.GID, out.HasMode = st.Uid, st.Gid, true
	out.Nlink, out.ChangeTime = uint32(st.Nlink), time.Unix(st.Ctim.Unix())
	out.Dev, out.Ino = uint64(st.Dev), uint64(st.Ino)
	return out
}

// statLink is stat that also answers the link's own lstat when name itself
// is a link (lfi nil otherwise). Where the kernel resolves beneath the
// root, the name is opened without following its last component
// (O_PATH|O_NOFOLLOW): what is not a link is answered by that one open, as
// stat does; a link is then stat'ed followed. Otherwise os.Root's Lstat
// says.
func (fsys *FS) statLink(name string) (fi, lfi fs.FileInfo, err error) {
	if name == "." {
		fi, err := fsys.stat(name)
		return fi, nil, err
	}
	if f, ok, err := fsys.openBeneath(name, oPath|oNoFollow); ok {
		if err != nil {
			return nil, nil, err
		}
		lfi, err := f.Stat()
		f.Close()
		if err != nil || lfi.Mode()&fs.ModeSymlink == 0 {
			return lfi, nil, err
		}
		fi, err := fsys.stat(name)
		return fi, lfi, err
	}
	lfi, lerr := fsys.root.Lstat(name)
	link := lerr == nil && lfi.Mode()&fs.ModeSymlink != 0
	if lerr == nil && !link {
		return lfi, nil, nil
	}
	if !link {
		lfi = nil
	}
	fi, err = fsys.stat(name)
	return fi, lfi, err
}

// List yields the children of the directory at prefix (following links
// inside the root to reach it), sorted by path. Every link is listed, with
// DirEntry.Link set and the kind of what it leads to inside the root
// (KindMissing when it dangles or leaves the root); special files are left
// out.
func (fsys *FS) List(ctx context.Context, prefix string) iter.Seq2[vfs.DirEntry, error] {
	return func(yield func(vfs.DirEntry, error) bool) {
		p := vfs.Clean(prefix)
		if err := ctx.Err(); err != nil {
			yield(vfs.DirEntry{}, err)
			return
		}
		d, ok, err := fsys.openTree(p)
		if err != nil {
			yield(vfs.DirEntry{}, err)
			return
		}
		if !ok {
			return
		}
		defer d.close()
		ents, err := d.entries()
		if err != nil {
			yield(vfs.DirEntry{}, otherError(p, err))
			return
		}
		for _, e := range ents {
			if err := ctx.Err(); err != nil {
				yield(vfs.DirEntry{}, err)
				return
			}
			if !yield(vfs.DirEntry{Path: vfs.Join(p, e.name), Kind: e.kind, Link: e.link}, nil) {
				return
			}
		}
	}
}

// Glob yields the entries under dir matching pattern, in path order,
// without following directory links.
func (fsys *FS) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	return vfs.GlobWalk(ctx, fsys.Stat, fsys.walkEntries, pattern, dir)
}

// open opens the regular file at clean p for reading. It never blocks on a
// FIFO and treats anything but a regular file as missing.
func (fsys *FS) open(p string) (*os.File, fs.FileInfo, error) {
	if p == "/" {
		return nil, nil, vfs.IsDir(p)
	}
	f, err := fsys.openFile(rel(p), readFlags)
	if err != nil {
		if isMissing(err) {
			return nil, nil, vfs.NotFound(p)
		}
		return nil, nil, otherError(p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, otherError(p, err)
	}
	switch kindOf(fi.Mode()) {
	case vfs.KindDir:
		f.Close()
		return nil, nil, vfs.IsDir(p)
	case vfs.KindMissing:
		f.Close()
		return nil, nil, vfs.NotFound(p)
	}
	return f, fi, nil
}

// Read returns the contents of the file at path, following links inside
// the root.
func (fsys *FS) Read(ctx context.Context, path string) ([]byte, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, fi, err := fsys.open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readAll(f, fi.Size(), nil)
	if err != nil {
		return nil, otherError(p, err)
	}
	return data, nil
}

// readAll reads r into buf[:0] (grown as needed), starting with room for
// size bytes plus one. size is the file's size from fstat: once that many
// bytes are in, the file is read as it was then, without one more read to
// see its end (a file that grew since is read to its end; one with no size,
// as in /proc, too). A buffer too small for the file is replaced by one of
// at least twice its capacity (up to 1 MiB more), so a worker's buffer
// settles quickly.
func readAll(r io.Reader, size int64, buf []byte) ([]byte, error) {
	want := int(size) + 1
	if size < 0 || int64(want) != size+1 {
		want = 512
	}
	if cap(buf) < want {
		buf = make([]byte, 0, max(want, cap(buf)+min(cap(buf), 1<<20)))
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf)) // unexpected growth: double
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if size > 0 && int64(len(buf)) == size {
			return buf, nil
		}
	}
}

// ReadAt reads len(p) bytes of the file at path from offset off, without
// loading the rest of the file.
func (fsys *FS) ReadAt(ctx context.Context, path string, b []byte, off int64) (int, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, vfs.NewError(vfs.KindOther, p, errors.New("negative offset"))
	}
	f, _, err := fsys.open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := f.ReadAt(b, off)
	if err != nil && err != io.EOF {
		return n, otherError(p, err)
	}
	return n, err
}

// MakeDir makes the directory at path and its missing parents on the host
// (vfs.DirMaker), following links inside the root as Write does. A file in
// the way fails with "write failed" and its cause (EEXIST at path, ENOTDIR
// at a parent). Making a directory is not a change to a file, so watchers
// hear nothing.
func (fsys *FS) MakeDir(ctx context.Context, path string) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	if fi, ok, _ := fsys.statBeneath(p); ok && fi.Kind == vfs.KindDir {
		return nil // there already (a mount asks this of every directory it lists)
	}
	err := fsys.root.MkdirAll(rel(p), 0o777)
	if r, ok := fsys.retry(rel(p), err); ok {
		err = fsys.root.MkdirAll(r, 0o777) // through a link with an absolute target inside the root
	}
	if err != nil {
		cause := errno(err)
		if errors.Is(cause, syscall.EEXIST) {
			if fi, serr := fsys.stat(rel(p)); serr == nil && fi.IsDir() {
				return nil // a link to a directory inside the root
			}
		}
		return vfs.WriteFailed(p, cause)
	}
	return nil
}

// RemoveDir removes the empty directory at path from the host
// (vfs.DirRemover). It never follows a link: a link at path is not a
// directory (ENOTDIR). A directory holding anything, even a write in
// flight, fails with ENOTEMPTY; the root with EBUSY. It works in the
// parent directory (openWriteDir: links inside the root followed to
// reach it, as Delete does), by the last name alone.
func (fsys *FS) RemoveDir(ctx context.Context, path string) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	if p == "/" {
		return vfs.NewError(vfs.KindOther, p, syscall.EBUSY)
	}
	w, err := fsys.openWriteDir(vfs.Parent(p), false)
	if err != nil {
		if isMissing(err) {
			return vfs.NotFound(p)
		}
		return otherError(p, err)
	}
	defer w.close()
	name := vfs.Base(p)
	fsys.mu.Lock()
	defer fsys.mu.Unlock()
	var st unix.Stat_t
	if err := unix.Fstatat(w.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if isMissing(err) {
			return vfs.NotFound(p)
		}
		return otherError(p, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
	case unix.S_IFLNK, unix.S_IFREG:
		return vfs.NewError(vfs.KindOther, p, syscall.ENOTDIR)
	default:
		return vfs.NotFound(p) // a FIFO, socket or device: missing everywhere
	}
	if err := unix.Unlinkat(w.fd, name, unix.AT_REMOVEDIR); err != nil {
		if isMissing(err) {
			return vfs.NotFound(p)
		}
		return otherError(p, err)
	}
	return nil
}

// Search yields nothing: the host disk has no index.
func (fsys *FS) Search(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return vfs.Empty[vfs.SearchResult]()
}
