package fusemount

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/julyfs/julyfs/third_party/go-fuse/fs"
	"github.com/julyfs/julyfs/third_party/go-fuse/fuse"
	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/internal/mountinfo"
	"github.com/julyfs/julyfs/vfs"
)

// unmountBusyWait is how long Unmount retries a busy mount.
const unmountBusyWait = 3 * time.Second

// Server is a mounted tree.
type Server struct {
	dir     string
	m       *mount
	srv     *fuse.Server
	inv     *invalidator
	cancel  context.CancelFunc
	unwatch func()
	done    chan struct{}

	closeOnce sync.Once
}

// Mount mounts fsys on the directory dir and serves it until Unmount, or
// until the directory is unmounted from outside (`julyfs unmount`,
// fusermount3 -u, umount). As root it mounts with mount(2); otherwise it
// uses fusermount3 (Debian package fuse3). A missing, non-empty or already
// mounted dir is an error before anything is mounted.
func Mount(dir string, fsys vfs.FileSystem, opts Options) (*Server, error) {
	abs, err := CheckMountpoint(dir)
	if err != nil {
		return nil, err
	}
	opts = opts.withEnv()
	ctx, cancel := context.WithCancel(context.Background())
	m := newMount(ctx, fsys, opts)
	root := &node{m: m}

	entry, attr, neg := opts.entryTimeout(), opts.attrTimeout(), opts.negativeTimeout()
	fsOpts := &fs.Options{
		EntryTimeout:    &entry,
		AttrTimeout:     &attr,
		NegativeTimeout: &neg,
		RootStableAttr:  &fs.StableAttr{Ino: fuse.FUSE_ROOT_ID},
		// A mode of 0000 is shown as it is (every reply sets its bits).
		NullPermissions: true,
		UID:             m.uid,
		GID:             m.gid,
		MountOptions: fuse.MountOptions{
			FsName:             opts.fsName(),
			Name:               "julyfs",
			AllowOther:         opts.AllowOther,
			DirectMount:        true,
			MaxWrite:           DefaultMaxIO,
			MaxReadAhead:       DefaultMaxIO,
			DisableXAttrs:      true,
			DisableReadDirPlus: !opts.readDirPlus(fsys),
			Debug:              opts.Debug,
			Logger:             m.log,
			PollReaders:        !opts.BlockingReads,
			// The kernel hands O_TRUNC to OPEN instead of truncating
			// with a separate SETATTR first: the truncation goes into
			// the staging with the rewrite and lands with it at close.
			// The daemon clears set-ID bits where Linux does, which
			// spares a GETATTR before each chown (killpriv.go).
			ExtraCapabilities: fuse.CAP_ATOMIC_O_TRUNC | fuse.CAP_HANDLE_KILLPRIV_V2,
		},
	}
	if opts.AllowOther {
		// Other users are let in: the kernel checks every access
		// against the mode and owner each file shows (the host's own,
		// for local:), as the daemon itself may run as root.
		fsOpts.MountOptions.Options = append(fsOpts.MountOptions.Options, "default_permissions")
	}
	if opts.Debug {
		fsOpts.Logger = m.log
	}
	if opts.ReadOnly {
		// "ro" makes the superblock read-only (fusermount3 also makes the
		// mount so); a direct mount takes the mount's own flag apart, so
		// that mount(8) and /proc/mounts show ro, as for any read-only
		// filesystem. go-fuse's default flags are kept.
		fsOpts.MountOptions.Options = append(fsOpts.MountOptions.Options, "ro")
		fsOpts.MountOptions.DirectMountFlags = syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_RDONLY
	}
	raw := &rawFS{RawFileSystem: fs.NewNodeFS(root, fsOpts), m: m}
	srv, err := fuse.NewServer(raw, abs, &fsOpts.MountOptions)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("mount %s: %w", abs, err)
	}
	// go-fuse's direct mount opens /dev/fuse without O_CLOEXEC: every
	// process this one starts would inherit the connection, keep it open
	// after this server dies and hang on it.
	closeFuseOnExec()
	if opts.SpareProcs {
		spareProcs()
	}
	s := &Server{dir: abs, m: m, srv: srv, cancel: cancel, done: make(chan struct{})}
	go func() {
		srv.Serve()
		close(s.done)
	}()
	if err := srv.WaitMount(); err != nil {
		cancel()
		return nil, fmt.Errorf("mount %s: %w", abs, err)
	}
	if err := raiseReadAhead(abs, DefaultMaxIO); err != nil {
		m.debugf("readahead: left at the kernel's default: %v", err)
	}
	_, share := fsys.(inPlaceCreator)
	switch ok, why := probePassthrough(srv); {
	case opts.NoPassthrough:
		m.debugf("passthrough: off (--passthrough=false or JULYFS_PASSTHROUGH=off)")
	case opts.ReadOnly:
		m.debugf("passthrough: off (read-only mount: no open)")
	case !opts.Passthrough && !share:
		m.debugf("passthrough: off (on by default for a local: tree mounted alone; --passthrough turns it on for this tree, with the kernel's departures: docs/mount.md)")
	case !ok:
		m.debugf("passthrough: off, files are read and written through the daemon: %s", why)
	default:
		_, mixed := fsys.(multiMount)
		m.ptMixed.Store(mixed)
		m.ptShare = share
		m.pt.Store(true)
		if share {
			m.debugf("passthrough: on (a writer shares the host file of the handles open on it)")
		} else {
			m.debugf("passthrough: on for trees with host descriptors (local:, and the local: mounts of a union)")
		}
	}
	close(m.ptDecided)
	s.inv = newInvalidator(m, root.EmbeddedInode())
	m.mu.Lock()
	m.inv = s.inv
	m.mu.Unlock()
	m.setForeign(s.inv.queueChange)
	var watched bool
	s.unwatch, watched = vfs.Watch(fsys, s.inv.changed)
	m.watched.Store(watched)
	m.watchHost(s.inv)
	return s, nil
}

// Dir is the absolute path of the mountpoint.
func (s *Server) Dir() string { return s.dir }

// Done is closed once the mount is gone and the server stopped serving.
func (s *Server) Done() <-chan struct{} { return s.done }

// Wait blocks until the mount is gone, then commits what is left (see
// Commit) and stops watching the tree.
func (s *Server) Wait() error {
	<-s.done
	return s.close()
}

// HostWatched reports whether the mount watches the host directories of
// its trees (vfs/local's, also under a union, vfs/readonly or vfs/cow),
// so that their entries are cached long (see the package doc,
// "Caching"): false until the watch, started in the background at Mount,
// is in place (a large tree takes a moment), and for a mount with no
// such tree, a tree that cannot be watched, or explicit timeouts.
func (s *Server) HostWatched() bool { return s.m.hostOK.Load() }

// Settle waits until the kernel has been told of every change the tree
// reported so far (writes and deletes made through the API rather than the
// mount). The invalidations are sent by a goroutine of their own, so a
// process that writes through the API and then runs a shell tool on the
// mount calls Settle in between to be sure the tool sees the change.
func (s *Server) Settle() {
	if s.inv != nil {
		s.inv.flush()
	}
}

// Commit writes every file with uncommitted writes through the tree. Files
// are committed when closed or synced; Commit covers files still open.
func (s *Server) Commit() error {
	var errs []error
	for _, n := range s.m.dirtyNodes() {
		if errno := n.commit(); errno != 0 {
			errs = append(errs, fmt.Errorf("commit %s: %w", n.path(), errno))
		}
	}
	return errors.Join(errs...)
}

// Unmount commits open files and unmounts. It fails (and stays mounted)
// while a process uses the mount (EBUSY); UnmountLazy detaches anyway.
func (s *Server) Unmount() error {
	cerr := s.Commit()
	// The kernel releases the files of a process that just exited
	// asynchronously; give it a few seconds before reporting busy.
	deadline := time.Now().Add(unmountBusyWait)
	for {
		err := s.srv.Unmount()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return errors.Join(cerr, fmt.Errorf("unmount %s: %w", s.dir, err))
		}
		time.Sleep(100 * time.Millisecond)
	}
	<-s.done
	return errors.Join(cerr, s.close())
}

// UnmountLazy commits open files and detaches the mount at once, even if
// it is busy (umount -l): processes still using it get errors once this
// process exits.
func (s *Server) UnmountLazy() error {
	cerr := s.Commit()
	if err := Unmount(s.dir, true); err != nil {
		return errors.Join(cerr, err)
	}
	return cerr
}

func (s *Server) close() error {
	var err error
	s.closeOnce.Do(func() {
		err = s.Commit()
		if s.unwatch != nil {
			s.unwatch()
		}
		s.m.stopHost()
		if s.inv != nil {
			s.inv.stop()
		}
		s.cancel()
	})
	return err
}

// Serve mounts fsys on dir and serves until ctx is done (Ctrl-C, SIGTERM:
// the caller's signal.NotifyContext) or the mount is unmounted from
// outside. On ctx done it commits open files and unmounts, detaching lazily
// when the mount is busy, so nothing is left mounted. ready, if not nil, is
// called once the mount is live.
func Serve(ctx context.Context, dir string, fsys vfs.FileSystem, opts Options, ready func(*Server)) error {
	s, err := Mount(dir, fsys, opts)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(s)
	}
	select {
	case <-s.Done():
		return s.close()
	case <-ctx.Done():
	}
	if err := s.Unmount(); err == nil {
		return nil
	}
	lerr := s.UnmountLazy()
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		// Busy files keep the detached connection open; exiting closes it.
	}
	return errors.Join(lerr, s.close())
}

// CheckMountpoint checks that dir can be mounted on: an existing, empty
// directory that is not a mountpoint already. It returns dir made absolute.
func CheckMountpoint(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, syscall.ENOTCONN):
		return "", fmt.Errorf("mountpoint %s: a stale mount is there (its server died); run `julyfs unmount %s`", abs, abs)
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("mountpoint %s does not exist", abs)
	case err != nil:
		return "", fmt.Errorf("mountpoint %s: %w", abs, err)
	case !fi.IsDir():
		return "", fmt.Errorf("mountpoint %s is not a directory", abs)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	mounted, _, err := mountedAt(abs)
	if err != nil {
		return "", err
	}
	if mounted {
		return "", fmt.Errorf("mountpoint %s is already mounted", abs)
	}
	f, err := os.Open(abs)
	if err != nil {
		return "", fmt.Errorf("mountpoint %s: %w", abs, err)
	}
	names, err := f.Readdirnames(1)
	f.Close()
	if len(names) > 0 {
		return "", fmt.Errorf("mountpoint %s is not empty", abs)
	}
	return abs, nil
}

// Mounted reports whether a filesystem is mounted at dir (made absolute),
// from the mount table, without touching dir itself (a dead FUSE server
// would hang a stat of it).
func Mounted(dir string) (bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, err
	}
	ok, _, err := mountedAt(abs)
	return ok, err
}

// mountedAt reports whether a filesystem is mounted at the absolute path
// dir, and its type (see package mountinfo).
func mountedAt(dir string) (bool, string, error) {
	m, ok, err := mountinfo.At(dir)
	return ok, m.Type, err
}

// unescapeMount undoes the octal escapes (\040 for a space) of mountinfo.
func unescapeMount(s string) string { return mountinfo.Unescape(s) }

// Unmount unmounts the julyfs (FUSE) mount at dir: with umount(2) as root,
// else with fusermount3 -u. lazy detaches a busy mount (umount -l). The
// serving process then finishes and exits. dir that is not a FUSE mount is
// an error.
func Unmount(dir string, lazy bool) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	mounted, fstype, err := mountedAt(abs)
	if err != nil {
		return err
	}
	if !mounted {
		return fmt.Errorf("%s is not mounted", abs)
	}
	if !strings.HasPrefix(fstype, "fuse") {
		return fmt.Errorf("%s is a %s mount, not julyfs", abs, fstype)
	}
	if os.Geteuid() == 0 {
		flags := 0
		if lazy {
			flags = syscall.MNT_DETACH
		}
		err := syscall.Unmount(abs, flags)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EPERM) {
			return fmt.Errorf("unmount %s: %w", abs, err)
		}
	}
	bin, err := exec.LookPath("fusermount3")
	if err != nil {
		if bin, err = exec.LookPath("fusermount"); err != nil {
			return fmt.Errorf("unmount %s: not root and no fusermount3 (Debian package fuse3)", abs)
		}
	}
	args := []string{"-u"}
	if lazy {
		args = append(args, "-z")
	}
	out, err := exec.Command(bin, append(args, abs)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("unmount %s: %s: %w", abs, strings.TrimSpace(string(out)), err)
	}
	return nil
}

// closeFuseOnExec sets close-on-exec on every /dev/fuse descriptor of the
// process.
func closeFuseOnExec() {
	for _, fd := range fuseFDs() {
		syscall.CloseOnExec(fd)
	}
}

// fuseFDs returns the process's /dev/fuse descriptors (from /proc/self/fd;
// none if it cannot be read).
func fuseFDs() []int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	var fds []int
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && target == "/dev/fuse" {
			fds = append(fds, fd)
		}
	}
	return fds
}

// spareProcsOnce makes spareProcs act once per process.
var spareProcsOnce sync.Once

// spareProcs raises GOMAXPROCS to spareProcsTarget of its value, once per
// process, after go-fuse's server was made with that value (it caps its
// readers by the Ps it saw then; raising GOMAXPROCS later leaves the cap
// as it is). go-fuse starts readers as requests come, and lets up to the
// cap plus one of them wait on /dev/fuse (in poll(2), with a cap of two,
// unless Options.BlockingReads; in read(2) then). With every P held by
// a goroutine in a syscall, Go's sysmon takes a P from one of them 20-40
// µs in, and keeps checking every 20 µs while it finds Ps to take; each
// request's reader must then win a P back before it can serve. While a P
// is idle, sysmon leaves alone a syscall's P that has nothing queued (for
// up to 10 ms), and checks ever less often. On a 2-vCPU machine that made
// a warm `grep -r` through the mount about a fifth faster, and `rm -rf` a
// seventh (docs/perf/fuse.md, "spare Ps for go-fuse's readers"): one
// spare P gave half the gain, two all of it, six no more, so the two
// above the cap are an empirical choice. A GOMAXPROCS set in the environment (a positive number, as the
// runtime reads it) is the user's choice and is kept. Setting GOMAXPROCS
// stops the runtime's automatic updates of it (to a changed cgroup CPU
// limit). A later server in the same process is made with the raised
// value and caps its readers by it.
func spareProcs() {
	spareProcsOnce.Do(func() {
		if n, err := strconv.Atoi(os.Getenv("GOMAXPROCS")); err == nil && n > 0 {
			return
		}
		procs := runtime.GOMAXPROCS(0)
		if t := spareProcsTarget(procs); t > procs {
			runtime.GOMAXPROCS(t)
		}
	})
}

// spareProcsTarget is the GOMAXPROCS that leaves Ps spare beside the
// readers of a go-fuse server made with procs Ps: go-fuse's cap on its
// blocking readers (procs, within 2 to 16, as NewServer computes it) plus
// two. With readers in poll(2) the cap is two, and the target leaves at
// least as many Ps spare.
func spareProcsTarget(procs int) int {
	return max(procs, min(max(procs, 2), 16)+2)
}

// raiseReadAhead sets the readahead of the mount at dir to size bytes
// (/sys/class/bdi/MAJOR:MINOR/read_ahead_kb of its device; needs root).
// The kernel starts a FUSE mount at its default of 128 KiB whatever the
// daemon's INIT reply asks for, so a sequential reader's READs are 128
// to 256 KiB each; at the size of the largest request (MaxWrite, which
// sets max_pages) they are 1 MiB each: a quarter of the round trips.
func raiseReadAhead(dir string, size int) error {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return err
	}
	p := fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(st.Dev), unix.Minor(st.Dev))
	return os.WriteFile(p, []byte(strconv.Itoa(size>>10)), 0)
}
