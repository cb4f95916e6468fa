package fusemount

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

func TestToErrno(t *testing.T) {
	tests := []struct {
		err  error
		want syscall.Errno
		logs bool
	}{
		{nil, 0, false},
		{vfs.NotFound("/a"), syscall.ENOENT, false},
		{vfs.ReadOnly("/a"), syscall.EROFS, false},
		{vfs.NoMount("/a"), syscall.EROFS, false},
		{vfs.IsDir("/a"), syscall.EISDIR, false},
		{vfs.NewError(vfs.KindConflict, "/a", nil), syscall.EEXIST, false},
		{vfs.NewError(vfs.KindDeleteNotSupported, "/a", nil), syscall.EPERM, false},
		{vfs.InvalidGrepPattern("(", nil), syscall.EINVAL, false},
		{fmt.Errorf("op: %w", context.Canceled), syscall.EINTR, false},
		{vfs.WriteFailed("/a", syscall.ENOSPC), syscall.ENOSPC, true},
		{vfs.NewError(vfs.KindUnavailable, "/a", errors.New("down")), syscall.EIO, true},
		{errors.New("boom"), syscall.EIO, true},
	}
	for _, tt := range tests {
		var b strings.Builder
		got := toErrno(newLogger(&b), "read", "/a", tt.err)
		assert.Equal(t, tt.want, got, "toErrno(%v)", tt.err)
		assert.Equal(t, tt.logs, b.Len() > 0, "toErrno(%v) logged %q, want logging %v", tt.err, b.String(), tt.logs)
		if tt.logs {
			assert.Equal(t, 1, strings.Count(b.String(), "\n"), "toErrno(%v) logged %q, want one line naming the path", tt.err, b.String())
			assert.Contains(t, b.String(), "/a", "toErrno(%v) logged %q, want one line naming the path", tt.err, b.String())
		}
	}
}

func TestInoStableAndDistinct(t *testing.T) {
	assert.Equal(t, uint64(1), inoOf("/"), "inoOf(/)")
	seen := map[uint64]string{}
	for i := range 100000 {
		p := fmt.Sprintf("/mount%d/dir/file%d.go", i%7, i)
		ino := inoOf(p)
		require.True(t, ino == inoOf(p) && ino > 1 && ino < 1<<63, "inoOf(%q) = %d: want stable, in [2, 2^63)", p, ino)
		q, ok := seen[ino]
		require.False(t, ok, "inoOf(%q) = inoOf(%q)", p, q)
		seen[ino] = p
	}
}

func TestCheckMountpoint(t *testing.T) {
	requireFUSE(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	full := filepath.Join(dir, "full")
	os.MkdirAll(filepath.Join(full, "x"), 0o755)
	s := mountT(t, temp.MustNew(nil), Options{})
	for _, tt := range []struct{ dir, want string }{
		{filepath.Join(dir, "missing"), "does not exist"},
		{file, "not a directory"},
		{full, "not empty"},
		{s.Dir(), "already mounted"},
	} {
		_, err := Mount(tt.dir, temp.MustNew(nil), Options{})
		assert.ErrorContains(t, err, tt.want, "Mount(%s), want an error saying %q", tt.dir, tt.want)
	}
	assert.ErrorContains(t, Unmount(full, false), "not mounted", "Unmount of a plain directory")
}

// TestFSTest runs testing/fstest.TestFS over os.DirFS of the mount, in a
// child process.
func TestFSTest(t *testing.T) {
	fsys := temp.MustNew(nil)
	seedUnder(t, fsys, "/")
	s := mountT(t, fsys, Options{})
	var files []string
	for p, err := range vfs.WalkFiles(context.Background(), fsys, "/") {
		require.NoError(t, err)
		files = append(files, strings.TrimPrefix(p, "/"))
	}
	runChild(t, "TestFSTestChild", "JULYFS_MNT="+s.Dir(), "JULYFS_FILES="+strings.Join(files, "\n"))
}

// TestFSTestChild is the child half of TestFSTest.
func TestFSTestChild(t *testing.T) {
	mnt := os.Getenv("JULYFS_MNT")
	if mnt == "" || os.Getenv("JULYFS_FILES") == "" {
		t.Skip("run by TestFSTest in a child process")
	}
	require.NoError(t, fstest.TestFS(os.DirFS(mnt), strings.Split(os.Getenv("JULYFS_FILES"), "\n")...))
}

// TestAPIChangesReachShell mounts with hour-long caches: only the
// invalidations sent on the tree's notifications can make the shell see
// changes made through the API.
func TestAPIChangesReachShell(t *testing.T) {
	ctx := context.Background()
	fsys := temp.MustNew(map[string]string{"/d/a.txt": "one\n", "/d/b.txt": "bee\n"})
	hour := time.Hour
	s := mountT(t, fsys, Options{EntryTimeout: hour, AttrTimeout: hour, NegativeTimeout: hour})
	env := []string{"M=" + s.Dir()}
	// Fill the kernel's caches: data, attributes, names, a negative entry.
	sh(t, `cat "$M/d/a.txt" "$M/d/b.txt" >/dev/null; stat "$M/d/a.txt" >/dev/null; test ! -e "$M/d/new.txt"; test ! -e "$M/e"`, env...)

	require.NoError(t, fsys.Write(ctx, "/d/a.txt", []byte("two, longer\n")))
	s.Settle()
	assert.Equal(t, "two, longer\n12\n", sh(t, `cat "$M/d/a.txt"; stat -c %s "$M/d/a.txt"`, env...), "after API Write: cat, stat")
	require.NoError(t, fsys.Write(ctx, "/d/new.txt", []byte("new\n")))
	require.NoError(t, fsys.Write(ctx, "/e/f/g.txt", []byte("deep\n")))
	s.Settle()
	assert.Equal(t, "new\ndeep\n", sh(t, `cat "$M/d/new.txt" "$M/e/f/g.txt"`, env...), "after API creates: cat")
	require.NoError(t, fsys.Delete(ctx, "/d/b.txt"))
	require.NoError(t, fsys.Delete(ctx, "/e/f/g.txt"))
	s.Settle()
	sh(t, `test ! -e "$M/d/b.txt" && test ! -e "$M/e" && ls "$M/d" | grep -qvx b.txt`, env...)
}

// failingFS fails every Read of a file named "bad" with an error of no
// contract kind.
type failingFS struct{ vfs.FileSystem }

func (f failingFS) Read(ctx context.Context, p string) ([]byte, error) {
	if vfs.Base(p) == "bad" {
		return nil, vfs.NewError(vfs.KindOther, p, errors.New("disk on fire"))
	}
	return f.FileSystem.Read(ctx, p)
}

// TestBackendErrorIsEIO: a failing read is EIO with one log line naming the
// path and cause, and the daemon keeps serving.
func TestBackendErrorIsEIO(t *testing.T) {
	requireFUSE(t)
	logs := newTestLog(t)
	fsys := failingFS{temp.MustNew(map[string]string{"/bad": "x", "/good": "fine\n"})}
	s := mountT(t, fsys, Options{Logger: logs.logger()})
	_, stderr, err := shErr(t, `cat "$M/bad"`, "M="+s.Dir())
	assert.Error(t, err, "cat of a failing file, want EIO")
	assert.Contains(t, stderr, "Input/output error", "cat of a failing file: %v, want EIO", err)
	got := logs.String()
	assert.Equal(t, 1, strings.Count(got, "disk on fire"), "log = %q, want one line naming /bad and the cause", got)
	assert.Contains(t, got, "/bad", "log, want one line naming /bad and the cause")
	assert.Equal(t, "fine\nbad\ngood\n", sh(t, `cat "$M/good"; ls "$M"`, "M="+s.Dir()), "after the failure")
}

// TestReadOnlyMount refuses changes with EROFS even on a writable tree.
func TestReadOnlyMount(t *testing.T) {
	fsys := temp.MustNew(map[string]string{"/a": "a\n"})
	s := mountT(t, fsys, Options{ReadOnly: true})
	for _, script := range []string{`echo x > "$M/b"`, `echo x >> "$M/a"`, `rm "$M/a"`, `mkdir "$M/d"`, `mv "$M/a" "$M/c"`, `truncate -s 0 "$M/a"`} {
		_, stderr, err := shErr(t, script, "M="+s.Dir())
		assert.Error(t, err, "%s, want EROFS", script)
		assert.Contains(t, stderr, "Read-only file system", "%s: %v, want EROFS", script, err)
	}
	assert.Equal(t, "a\n-r--r--r--\n", sh(t, `cat "$M/a"; stat -c %A "$M/a"`, "M="+s.Dir()), "read-only mount")
}

// TestFsyncCommits: fsync returns once the tree has the data, before close.
func TestFsyncCommits(t *testing.T) {
	fsys := temp.MustNew(nil)
	s := mountT(t, fsys, Options{})
	// The child writes, fsyncs, reports, and waits for us before closing.
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", `exec 3>"$M/f"; printf 'synced' >&3; sync "$M/f"; echo synced; read _; printf ' more' >&3; exec 3>&-`)
	cmd.Env = append(os.Environ(), "M="+s.Dir())
	cmd.Dir = t.TempDir()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	require.NoError(t, cmd.Start())
	buf := make([]byte, 7)
	_, err := io.ReadFull(stdout, buf)
	require.NoError(t, err)
	got, err := fsys.Read(context.Background(), "/f")
	assert.NoError(t, err, "after fsync, before close: Read")
	assert.Equal(t, "synced", string(got), "after fsync, before close: Read")
	stdin.Write([]byte("\n"))
	require.NoError(t, cmd.Wait())
	got, err = fsys.Read(context.Background(), "/f")
	assert.NoError(t, err, "after close: Read")
	assert.Equal(t, "synced more", string(got), "after close: Read")
}

func newLogger(w io.Writer) *log.Logger { return log.New(w, "", 0) }

func requireTool(t *testing.T, name string) {
	t.Helper()
	_, err := exec.LookPath(name)
	require.NoError(t, err, "%s is not installed: scripts/test installs it (apt-get install %s)", name, name)
}

// TestFio verifies random 4 KiB writes through the mount with fio's crc32c
// verification (in a separate process).
func TestFio(t *testing.T) {
	requireFUSE(t)
	requireTool(t, "fio")
	fsys := temp.MustNew(nil)
	s := mountT(t, fsys, Options{})
	out := sh(t, `fio --name=randwrite --directory="$M" --rw=randwrite --bs=4k --size=64M --verify=crc32c --do_verify=1 --output-format=terse --terse-version=3`, "M="+s.Dir())
	if f := strings.Split(strings.TrimSpace(out), ";"); assert.GreaterOrEqual(t, len(f), 5, "fio: %s", out) {
		assert.Equal(t, "0", f[4], "fio: %s", out)
	}
	fi, err := fsys.Stat(context.Background(), "/randwrite.0.0")
	assert.NoError(t, err, "fio's file in the tree")
	assert.Equal(t, int64(64<<20), fi.Size, "fio's file in the tree: %+v, want 64 MiB", fi)
}

// stressors is the stress-ng file stressor set TestStressNG runs, each with
// one instance and data small enough for a short run. fsize is left out:
// it grows files towards the 4 GiB MaxFileSize, which a daemon holding
// written files in memory serves slowly (see docs/mount.md).
const stressors = `--hdd 1 --hdd-bytes 8M --seek 1 --seek-size 8M --fallocate 1 --fallocate-bytes 8M --fpunch 1 \
	--readahead 1 --readahead-bytes 8M --iomix 1 --iomix-bytes 8M --sync-file 1 --sync-file-bytes 8M \
	--mmap 1 --mmap-bytes 8M --mmap-file --dentry 1 --dir 1 --dirdeep 1 --getdent 1 --rename 1 --fstat 1 \
	--chmod 1 --utime 1 --touch 1 --open 1 --dup 1 --io 1 --flock 1 --lockf 1 --filename 1 --sendfile 1 --splice 1`

// TestStressNG runs a short set of stress-ng file stressors with --verify.
func TestStressNG(t *testing.T) {
	requireFUSE(t)
	requireTool(t, "stress-ng")
	s := mountT(t, temp.MustNew(nil), Options{})
	out := sh(t, `stress-ng --temp-path "$M" --verify --timeout 5s --metrics-brief `+stressors+` 2>&1`, "M="+s.Dir())
	// Not assert.Contains: its message would print the output on one line.
	assert.True(t, strings.Contains(out, "successful run completed"), "stress-ng:\n%s", out)
}

// stressNGUntrustworthy is stress-ng's exit status when every stressor
// passed but some metrics are untrustworthy (EXIT_METRICS_UNTRUSTWORTHY).
const stressNGUntrustworthy = 7

// TestStressNGLocal runs the stress-ng set on a local: mount, with and
// without passthrough to host descriptors (passthrough.go).
func TestStressNGLocal(t *testing.T) {
	requireFUSE(t)
	requireTool(t, "stress-ng")
	for name, opts := range passthroughModes {
		t.Run(name, func(t *testing.T) {
			_, s := localMount(t, nil, opts)
			out, _, err := shErr(t, `stress-ng --temp-path "$M" --verify --timeout 5s --metrics-brief `+stressors+` 2>&1`, "M="+s.Dir())
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == stressNGUntrustworthy &&
				!strings.Contains(out, "] fail:") && !strings.Contains(out, "] error:") {
				// Every stressor verified its data; one's bogo-op count
				// was not final at the end (a slow machine): not a
				// failure of the mount.
				t.Logf("stress-ng: metrics untrustworthy, no failure:\n%s", out)
				err = nil
				out += "\nsuccessful run completed"
			}
			require.NoError(t, err, "stress-ng:\n%s", out)
			assert.True(t, strings.Contains(out, "successful run completed"), "stress-ng:\n%s", out)
			checkPassthrough(t, s, opts)
		})
	}
}

// procsAtStart is the test process's GOMAXPROCS before any mount.
var procsAtStart = runtime.GOMAXPROCS(0)

func TestSpareProcsTarget(t *testing.T) {
	for procs, want := range map[int]int{1: 4, 2: 4, 3: 5, 8: 10, 16: 18, 17: 18, 18: 18, 32: 32} {
		assert.Equal(t, want, spareProcsTarget(procs), "GOMAXPROCS %d", procs)
	}
}

// A mount with SpareProcs leaves the process two Ps more than go-fuse's
// readers, so that a reader waiting in read(2) on /dev/fuse keeps its P.
func TestMountSparesProcs(t *testing.T) {
	if n, err := strconv.Atoi(os.Getenv("GOMAXPROCS")); err == nil && n > 0 {
		t.Skip("GOMAXPROCS is set in the environment: a mount keeps it")
	}
	if f := flag.Lookup("test.cpu"); f != nil && f.Value.String() != "" {
		t.Skip("-test.cpu sets GOMAXPROCS for each pass after the first mount")
	}
	mountT(t, temp.MustNew(map[string]string{"/a.txt": "one\n"}), Options{SpareProcs: true})
	assert.GreaterOrEqual(t, runtime.GOMAXPROCS(0), spareProcsTarget(procsAtStart), "GOMAXPROCS after a mount (it was %d)", procsAtStart)
}
