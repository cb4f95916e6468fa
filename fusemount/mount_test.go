package fusemount

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

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
		if got != tt.want {
			t.Errorf("toErrno(%v) = %v, want %v", tt.err, got, tt.want)
		}
		if logged := b.Len() > 0; logged != tt.logs {
			t.Errorf("toErrno(%v) logged %q, want logging %v", tt.err, b.String(), tt.logs)
		}
		if tt.logs && (strings.Count(b.String(), "\n") != 1 || !strings.Contains(b.String(), "/a")) {
			t.Errorf("toErrno(%v) logged %q, want one line naming the path", tt.err, b.String())
		}
	}
}

func TestInoStableAndDistinct(t *testing.T) {
	if inoOf("/") != 1 {
		t.Errorf("inoOf(/) = %d, want 1", inoOf("/"))
	}
	seen := map[uint64]string{}
	for i := range 100000 {
		p := fmt.Sprintf("/mount%d/dir/file%d.go", i%7, i)
		ino := inoOf(p)
		if ino != inoOf(p) || ino <= 1 || ino >= 1<<63 {
			t.Fatalf("inoOf(%q) = %d: want stable, in [2, 2^63)", p, ino)
		}
		if q, ok := seen[ino]; ok {
			t.Fatalf("inoOf(%q) = inoOf(%q)", p, q)
		}
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
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Mount(%s) = %v, want an error saying %q", tt.dir, err, tt.want)
		}
	}
	if err := Unmount(full, false); err == nil || !strings.Contains(err.Error(), "not mounted") {
		t.Errorf("Unmount of a plain directory = %v, want not mounted", err)
	}
}

// TestFSTest runs testing/fstest.TestFS over os.DirFS of the mount, in a
// child process.
func TestFSTest(t *testing.T) {
	fsys := temp.MustNew(nil)
	seedUnder(t, fsys, "/")
	s := mountT(t, fsys, Options{})
	var files []string
	for p, err := range vfs.WalkFiles(context.Background(), fsys, "/") {
		if err != nil {
			t.Fatal(err)
		}
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
	if err := fstest.TestFS(os.DirFS(mnt), strings.Split(os.Getenv("JULYFS_FILES"), "\n")...); err != nil {
		t.Fatal(err)
	}
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

	if err := fsys.Write(ctx, "/d/a.txt", []byte("two, longer\n")); err != nil {
		t.Fatal(err)
	}
	s.Settle()
	if got := sh(t, `cat "$M/d/a.txt"; stat -c %s "$M/d/a.txt"`, env...); got != "two, longer\n12\n" {
		t.Errorf("after API Write: cat, stat = %q", got)
	}
	if err := fsys.Write(ctx, "/d/new.txt", []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Write(ctx, "/e/f/g.txt", []byte("deep\n")); err != nil {
		t.Fatal(err)
	}
	s.Settle()
	if got := sh(t, `cat "$M/d/new.txt" "$M/e/f/g.txt"`, env...); got != "new\ndeep\n" {
		t.Errorf("after API creates: cat = %q", got)
	}
	if err := fsys.Delete(ctx, "/d/b.txt"); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Delete(ctx, "/e/f/g.txt"); err != nil {
		t.Fatal(err)
	}
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
	if err == nil || !strings.Contains(stderr, "Input/output error") {
		t.Errorf("cat of a failing file: %v, %q; want EIO", err, stderr)
	}
	if got := logs.String(); strings.Count(got, "disk on fire") != 1 || !strings.Contains(got, "/bad") {
		t.Errorf("log = %q, want one line naming /bad and the cause", got)
	}
	if got := sh(t, `cat "$M/good"; ls "$M"`, "M="+s.Dir()); got != "fine\nbad\ngood\n" {
		t.Errorf("after the failure: %q", got)
	}
}

// TestReadOnlyMount refuses changes with EROFS even on a writable tree.
func TestReadOnlyMount(t *testing.T) {
	fsys := temp.MustNew(map[string]string{"/a": "a\n"})
	s := mountT(t, fsys, Options{ReadOnly: true})
	for _, script := range []string{`echo x > "$M/b"`, `echo x >> "$M/a"`, `rm "$M/a"`, `mkdir "$M/d"`, `mv "$M/a" "$M/c"`, `truncate -s 0 "$M/a"`} {
		_, stderr, err := shErr(t, script, "M="+s.Dir())
		if err == nil || !strings.Contains(stderr, "Read-only file system") {
			t.Errorf("%s: %v, %q; want EROFS", script, err, stderr)
		}
	}
	if got := sh(t, `cat "$M/a"; stat -c %A "$M/a"`, "M="+s.Dir()); got != "a\n-r--r--r--\n" {
		t.Errorf("read-only mount: %q", got)
	}
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
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := io.ReadFull(stdout, buf); err != nil {
		t.Fatal(err)
	}
	if got, err := fsys.Read(context.Background(), "/f"); err != nil || string(got) != "synced" {
		t.Errorf("after fsync, before close: Read = %q, %v", got, err)
	}
	stdin.Write([]byte("\n"))
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if got, err := fsys.Read(context.Background(), "/f"); err != nil || string(got) != "synced more" {
		t.Errorf("after close: Read = %q, %v", got, err)
	}
}

func newLogger(w io.Writer) *log.Logger { return log.New(w, "", 0) }

func requireTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s is not installed: scripts/test installs it (apt-get install %s)", name, name)
	}
}

// TestFio verifies random 4 KiB writes through the mount with fio's crc32c
// verification (in a separate process).
func TestFio(t *testing.T) {
	requireFUSE(t)
	requireTool(t, "fio")
	fsys := temp.MustNew(nil)
	s := mountT(t, fsys, Options{})
	out := sh(t, `fio --name=randwrite --directory="$M" --rw=randwrite --bs=4k --size=64M --verify=crc32c --do_verify=1 --output-format=terse --terse-version=3`, "M="+s.Dir())
	if f := strings.Split(strings.TrimSpace(out), ";"); len(f) < 5 || f[4] != "0" {
		t.Errorf("fio: %s", out)
	}
	fi, err := fsys.Stat(context.Background(), "/randwrite.0.0")
	if err != nil || fi.Size != 64<<20 {
		t.Errorf("fio's file in the tree: %+v, %v; want 64 MiB", fi, err)
	}
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
	if !strings.Contains(out, "successful run completed") {
		t.Errorf("stress-ng:\n%s", out)
	}
}

// TestStressNGLocal runs the stress-ng set on a local: mount, with and
// without passthrough to host descriptors (passthrough.go).
func TestStressNGLocal(t *testing.T) {
	requireFUSE(t)
	requireTool(t, "stress-ng")
	for name, opts := range passthroughModes {
		t.Run(name, func(t *testing.T) {
			_, s := localMount(t, nil, opts)
			out := sh(t, `stress-ng --temp-path "$M" --verify --timeout 5s --metrics-brief `+stressors+` 2>&1`, "M="+s.Dir())
			if !strings.Contains(out, "successful run completed") {
				t.Errorf("stress-ng:\n%s", out)
			}
			checkPassthrough(t, s, opts)
		})
	}
}
