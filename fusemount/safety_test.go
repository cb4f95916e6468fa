package fusemount

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// The data-safety tests: what a writer through the mount may and may not
// do to the tree's file (issue "Nothing lost, nobody let in"). The tools
// are this test binary run as a child (helperChild), so every step checks
// what close(2) returns, which the shell's redirections do not.

// helperChild runs one of the helper programs below when the test binary
// is started with JULYFS_HELPER set, and reports whether it did.
func helperChild() (code int, ran bool) {
	switch os.Getenv("JULYFS_HELPER") {
	case "":
		return 0, false
	case "rewrite":
		return rewriteChild(os.Getenv("JULYFS_FILE"), os.Getenv("JULYFS_MODE")), true
	case "append":
		n, _ := strconv.Atoi(os.Getenv("JULYFS_N"))
		return appendChild(os.Getenv("JULYFS_FILE"), os.Getenv("JULYFS_TAG"), n), true
	case "rename":
		return renameChild(os.Getenv("JULYFS_FROM"), os.Getenv("JULYFS_TO")), true
	case "mmap":
		n, _ := strconv.Atoi(os.Getenv("JULYFS_N"))
		return mmapChild(os.Getenv("JULYFS_FILE"), n), true
	case "apiappend":
		n, _ := strconv.Atoi(os.Getenv("JULYFS_N"))
		return apiAppendChild(os.Getenv("JULYFS_ROOT"), os.Getenv("JULYFS_PATH"), os.Getenv("JULYFS_TAG"), n), true
	}
	fmt.Fprintln(os.Stderr, "unknown JULYFS_HELPER")
	return 2, true
}

// rewriteChild rewrites file with 64 KiB of 'N' the way `>` does (mode
// "trunc": open with O_TRUNC) or with a truncate(2) of the path while the
// file is open for writing (mode "truncpath": the SETATTR without a
// handle the kernel sends for O_TRUNC when atomic O_TRUNC is off), or
// writes it new (mode "create": O_CREAT|O_EXCL), prints
// "written", waits for its standard input to close, closes the file and
// prints "closed" or the error of close.
func rewriteChild(file, mode string) int {
	flags := os.O_WRONLY
	switch mode {
	case "trunc":
		flags |= os.O_TRUNC
	case "create":
		flags |= os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(file, flags, 0o644)
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	if mode == "truncpath" {
		if err := os.Truncate(file, 0); err != nil {
			fmt.Println("truncate:", err)
			return 1
		}
	}
	size := 64 << 10
	if s, err := strconv.Atoi(os.Getenv("JULYFS_SIZE")); err == nil {
		size = s
	}
	if _, err := f.Write(bytes.Repeat([]byte("N"), size)); err != nil {
		fmt.Println("write:", err)
		return 1
	}
	fmt.Println("written")
	io.Copy(io.Discard, os.Stdin)
	if err := f.Close(); err != nil {
		fmt.Println("close:", err)
		return 1
	}
	fmt.Println("closed")
	return 0
}

// appendChild appends n lines "TAG i" to file, each with its own open,
// write and close (as `>>` does), and prints "ok TAG i" for each append
// whose write and close succeeded.
func appendChild(file, tag string, n int) int {
	for i := range n {
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			continue
		}
		_, werr := fmt.Fprintf(f, "%s %d\n", tag, i)
		if cerr := f.Close(); werr == nil && cerr == nil {
			fmt.Printf("ok %s %d\n", tag, i)
		}
	}
	return 0
}

// apiAppendChild appends n lines "TAG i" to path of the local tree root
// through the API (apiAppend).
func apiAppendChild(root, path, tag string, n int) int {
	fsys, err := local.New(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer fsys.Close()
	if err := apiAppend(context.Background(), fsys, path, tag, n, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// apiAppend appends n lines "TAG i" to path through the API, each a
// compare-and-swap (Stat, Read, WriteIf on the etag) retried on conflict,
// and writes "ok TAG i" to out for each that landed.
func apiAppend(ctx context.Context, fsys vfs.FileSystem, path, tag string, n int, out io.Writer) error {
	for i := range n {
		for range 10000 {
			fi, err := fsys.Stat(ctx, path)
			if err != nil {
				return err
			}
			data, err := fsys.Read(ctx, path)
			if err != nil {
				return err
			}
			data = fmt.Appendf(data, "%s %d\n", tag, i)
			_, err = vfs.WriteIf(ctx, fsys, path, data, vfs.Precondition{IfMatch: fi.ETag})
			if vfs.KindOf(err) == vfs.KindConflict {
				continue
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "ok %s %d\n", tag, i)
			break
		}
	}
	return nil
}

// helper starts this test binary as the helper program name with env
// added; it is killed at cleanup.
func helper(t *testing.T, name string, env ...string) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), append([]string{"JULYFS_HELPER=" + name}, env...)...)
	cmd.Dir = t.TempDir()
	cmd.Stderr = &testWriter{t: t, prefix: name + ": "}
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, stdin, bufio.NewReader(stdout)
}

// readLine reads one line of a helper's output, failing after a timeout.
func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	ch := make(chan string, 1)
	go func() {
		line, _ := r.ReadString('\n')
		ch <- strings.TrimSpace(line)
	}()
	select {
	case line := <-ch:
		return line
	case <-time.After(toolTimeout):
		require.Failf(t, "no output from the helper", "in %v", toolTimeout)
	}
	return ""
}

// oldContent is the 1 MiB file the rewrite tests start from.
func oldContent() []byte { return bytes.Repeat([]byte("old content\n"), (1<<20)/12) }

// TestRewriteKeepsOldUntilClose: while a program rewrites a file through
// the mount (O_TRUNC, or truncate(2) of the path with the file open), the
// API and the host see the old file whole; the new one lands at close.
func TestRewriteKeepsOldUntilClose(t *testing.T) {
	for _, mode := range []string{"trunc", "truncpath"} {
		t.Run(mode, func(t *testing.T) {
			root := t.TempDir()
			host := filepath.Join(root, "t.dat")
			require.NoError(t, os.WriteFile(host, oldContent(), 0o644))
			fsys, err := local.New(root)
			require.NoError(t, err)
			t.Cleanup(func() { fsys.Close() })
			s := mountT(t, fsys, Options{})

			cmd, stdin, out := helper(t, "rewrite", "JULYFS_FILE="+filepath.Join(s.Dir(), "t.dat"), "JULYFS_MODE="+mode)
			require.Equal(t, "written", readLine(t, out))
			got, err := fsys.Read(context.Background(), "/t.dat")
			require.NoError(t, err)
			assert.True(t, bytes.Equal(got, oldContent()), "API read %d bytes mid-rewrite, want the old 1 MiB", len(got))
			fi, err := fsys.Stat(context.Background(), "/t.dat")
			require.NoError(t, err)
			assert.Equal(t, int64(len(oldContent())), fi.Size, "API stat mid-rewrite")
			onHost, err := os.ReadFile(host)
			require.NoError(t, err)
			assert.Equal(t, len(oldContent()), len(onHost), "host file mid-rewrite")

			stdin.Close()
			assert.Equal(t, "closed", readLine(t, out))
			require.NoError(t, cmd.Wait())
			onHost, err = os.ReadFile(host)
			require.NoError(t, err)
			assert.Equal(t, bytes.Repeat([]byte("N"), 64<<10), onHost, "host file after close")
		})
	}
}

// TestRewriteSurvivesKill: the server is killed (SIGKILL) while a program
// rewrites a file with O_TRUNC: the host file keeps its old content.
func TestRewriteSurvivesKill(t *testing.T) {
	root := t.TempDir()
	host := filepath.Join(root, "t.dat")
	require.NoError(t, os.WriteFile(host, oldContent(), 0o644))
	s := startServer(t, root)
	_, stdin, out := helper(t, "rewrite", "JULYFS_FILE="+filepath.Join(s.dir, "t.dat"), "JULYFS_MODE=trunc")
	require.Equal(t, "written", readLine(t, out))
	killServer(t, s)
	stdin.Close()
	onHost, err := os.ReadFile(host)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(onHost, oldContent()), "host file after the server was killed mid-rewrite: %d bytes, want the old 1 MiB", len(onHost))
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "only t.dat on the host (no temporary left)")
}

// smallDisk mounts a tmpfs of size bytes on a fresh directory (root only)
// and unmounts it at cleanup.
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	require.NoError(t, syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.Itoa(size)))
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// TestFailedWriteKeepsOldFile fills the disk under a local: mount: a cp
// over an existing file and an append to it fail, and the file keeps its
// old content (the failed staging is discarded, not committed).
func TestFailedWriteKeepsOldFile(t *testing.T) {
	root := smallDisk(t, 4<<20)
	host := filepath.Join(root, "old.txt")
	require.NoError(t, os.WriteFile(host, []byte("old\n"), 0o644))
	big := filepath.Join(t.TempDir(), "big")
	require.NoError(t, os.WriteFile(big, bytes.Repeat([]byte("B"), 8<<20), 0o644))
	fsys, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	s := mountT(t, fsys, Options{})
	env := []string{"M=" + s.Dir(), "BIG=" + big}

	_, errOut, err := shErr(t, `cp "$BIG" "$M/old.txt"`, env...)
	assert.Error(t, err, "cp of 8 MiB onto a 4 MiB disk")
	assert.Contains(t, errOut, "No space left on device")
	got, err := os.ReadFile(host)
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(got), "host file after a failed cp")

	_, errOut, err = shErr(t, `cat "$BIG" >> "$M/old.txt"`, env...)
	assert.Error(t, err, "appending 8 MiB on a 4 MiB disk")
	assert.Contains(t, errOut, "No space left on device")
	got, err = os.ReadFile(host)
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(got), "host file after a failed append")
	assert.Equal(t, "old\n", sh(t, `cat "$M/old.txt"`, env...), "the file through the mount")

	// Nothing is left taking the space: a small write goes through.
	sh(t, `echo new > "$M/old.txt"`, env...)
	got, err = os.ReadFile(host)
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(got))
}

// TestAllowOtherEnforcesPermissions mounts with AllowOther and acts as
// nobody (uid 65534): the host's modes and owners hold through the mount.
func TestAllowOtherEnforcesPermissions(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("acting as another user needs root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv (util-linux)")
	}
	root := t.TempDir()
	require.NoError(t, os.Chmod(root, 0o755))
	write := func(name string, mode os.FileMode) {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(name+"\n"), mode))
		require.NoError(t, os.Chmod(filepath.Join(root, name), mode))
	}
	write("secret", 0o600)
	write("public", 0o644)
	for name, mode := range map[string]os.FileMode{"closed": 0o755, "open": 0o777} {
		require.NoError(t, os.Mkdir(filepath.Join(root, name), mode))
		require.NoError(t, os.Chmod(filepath.Join(root, name), mode))
	}
	fsys, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	s := mountT(t, fsys, Options{AllowOther: true})
	// nobody must be able to reach the mountpoint.
	for d := filepath.Dir(s.Dir()); d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	asNobody := func(script string) (string, error) {
		out, errOut, err := shErr(t, `setpriv --reuid=65534 --regid=65534 --clear-groups bash -c "$S"`, "M="+s.Dir(), "S="+script)
		return out + errOut, err
	}

	out, err := asNobody(`cat "$M/public"`)
	assert.NoError(t, err, out)
	assert.Equal(t, "public\n", out)
	out, err = asNobody(`cat "$M/secret"`)
	assert.Error(t, err, "nobody read a 0600 root file: %s", out)
	assert.Contains(t, out, "Permission denied")
	out, err = asNobody(`echo x > "$M/closed/new"`)
	assert.Error(t, err, "nobody created a file in a 0755 root directory: %s", out)
	assert.Contains(t, out, "Permission denied")
	out, err = asNobody(`echo x >> "$M/public"`)
	assert.Error(t, err, "nobody wrote a 0644 root file: %s", out)
	assert.Contains(t, out, "Permission denied")
	_, err = os.Stat(filepath.Join(root, "closed", "new"))
	assert.True(t, errors.Is(err, os.ErrNotExist), "the refused file is not on the host")
	got, _ := os.ReadFile(filepath.Join(root, "public"))
	assert.Equal(t, "public\n", string(got))

	// Where the host allows it, nobody writes, and owns what it made.
	out, err = asNobody(`mkdir "$M/open/d" && echo mine > "$M/open/d/f" && cat "$M/open/d/f" && stat -c %u "$M/open/d/f"`)
	assert.NoError(t, err, out)
	assert.Equal(t, "mine\n65534\n", out)
	out = sh(t, `stat -c '%a %u' "$M/secret"`, "M="+s.Dir())
	assert.Equal(t, "600 0\n", out, "the mount shows the host's mode and owner")
}

// TestCommitIsCompareAndSwap: a file written through the API while a
// program has it open for writing through the mount is not overwritten at
// close: the close fails (EIO) and the API's content stays. The large
// variant stages more than the mount would read into memory to commit.
func TestCommitIsCompareAndSwap(t *testing.T) {
	for name, size := range map[string]int{"small": 64 << 10, "large": casInMemoryLimit + 1<<20} {
		t.Run(name, func(t *testing.T) { commitIsCAS(t, size) })
	}
}

func commitIsCAS(t *testing.T, size int) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "f"), []byte("old\n"), 0o644))
	fsys, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	s := mountT(t, fsys, Options{})

	cmd, stdin, out := helper(t, "rewrite", "JULYFS_FILE="+filepath.Join(s.Dir(), "f"), "JULYFS_MODE=trunc", "JULYFS_SIZE="+strconv.Itoa(size))
	require.Equal(t, "written", readLine(t, out))
	require.NoError(t, fsys.Write(context.Background(), "/f", []byte("from the API\n")))
	stdin.Close()
	line := readLine(t, out)
	assert.Contains(t, line, "close:", "the close of a writer that lost the race")
	assert.Contains(t, line, "input/output error")
	assert.Error(t, cmd.Wait())
	got, err := os.ReadFile(filepath.Join(root, "f"))
	require.NoError(t, err)
	assert.Equal(t, "from the API\n", string(got), "the API's write survives")
	s.Settle()
	assert.Equal(t, "from the API\n", sh(t, `cat "$M/f"`, "M="+s.Dir()), "and the mount shows it")
}

// TestConcurrentAppendsLoseNothing appends 300 lines through the mount
// while 300 more are appended through the API (compare-and-swap, retried)
// to the same file, from this process (the mount's own tree) and from
// another process: every append reported as done is in the file, once.
func TestConcurrentAppendsLoseNothing(t *testing.T) {
	t.Run("api-in-process", func(t *testing.T) { concurrentAppends(t, false) })
	t.Run("api-other-process", func(t *testing.T) { concurrentAppends(t, true) })
}

func concurrentAppends(t *testing.T, otherProcess bool) {
	const n = 300
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "log"), nil, 0o644))
	fsys, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	s := mountT(t, fsys, Options{})

	var wg sync.WaitGroup
	outs := make([]string, 2)
	run := func(i int, name, tag string) {
		cmd, stdin, out := helper(t, name, "JULYFS_FILE="+filepath.Join(s.Dir(), "log"),
			"JULYFS_ROOT="+root, "JULYFS_PATH=/log", "JULYFS_TAG="+tag, "JULYFS_N="+strconv.Itoa(n))
		stdin.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, _ := io.ReadAll(out)
			outs[i] = string(b)
			cmd.Wait()
		}()
	}
	run(0, "append", "m")
	if otherProcess {
		run(1, "apiappend", "a")
	} else {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var b strings.Builder
			apiAppend(context.Background(), fsys, "/log", "a", n, &b)
			outs[1] = b.String()
		}()
	}
	wg.Wait()
	data, err := os.ReadFile(filepath.Join(root, "log"))
	require.NoError(t, err)
	lines := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		assert.False(t, lines[l], "line %q twice", l)
		lines[l] = true
	}
	successes := 0
	for _, o := range outs {
		for _, l := range strings.Split(strings.TrimSpace(o), "\n") {
			if l == "" {
				continue
			}
			successes++
			line := strings.TrimPrefix(l, "ok ")
			assert.True(t, lines[line], "append %q reported done but is not in the file", line)
		}
	}
	assert.Equal(t, n, strings.Count(outs[1], "ok "), "every API append lands (retried on conflict)")
	// An append through the mount can also be in the file although its
	// close failed: one written in place (sharing the host file a handle
	// not yet released holds) is visible as it lands, and an API append
	// that read it then keeps it in the version that replaced the file,
	// while the writer's close, finding another file at the name, fails
	// (docs/mount.md, "Shared writes"). So the file holds every append
	// reported done and nothing that was not attempted.
	attempted := map[string]bool{}
	for i := range n {
		attempted[fmt.Sprintf("m %d", i)], attempted[fmt.Sprintf("a %d", i)] = true, true
	}
	for l := range lines {
		assert.True(t, attempted[l], "line %q was never appended", l)
	}
	t.Logf("%d of %d appends through the mount succeeded, %d through the API", strings.Count(outs[0], "ok "), n, strings.Count(outs[1], "ok "))
}

// swapFS deletes through a local tree and, right after deleting the file
// at swapAt, replaces its host directory with a symbolic link out of the
// root: the moment a dir/symlink swap race can hit an unlink.
type swapFS struct {
	*local.FS
	root, swapAt, outside string
}

func (f *swapFS) Delete(ctx context.Context, p string) error {
	err := f.FS.Delete(ctx, p)
	if p == f.swapAt {
		dir := filepath.Join(f.root, vfs.Parent(p))
		if rerr := os.Rename(dir, dir+".moved"); rerr == nil {
			os.Symlink(f.outside, dir)
		}
	}
	return err
}

// TestNoPhantomDirAfterSwap: a directory of a local: tree that turns into
// a link out of the root as the mount deletes its last file is not kept
// by the mount as an empty directory the tree does not have.
func TestNoPhantomDirAfterSwap(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "d", "f"), []byte("x\n"), 0o644))
	inner, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { inner.Close() })
	fsys := &swapFS{FS: inner, root: root, swapAt: "/d/f", outside: outside}
	s := mountT(t, fsys, Options{EntryTimeout: -1, AttrTimeout: -1})
	env := "M=" + s.Dir()

	sh(t, `rm "$M/d/f"`, env)
	// The host now has d.moved and a link d pointing outside (missing to
	// the tree, listed as the link it is, not as a directory); then the
	// link goes too.
	assert.Equal(t, "d\nd.moved\n", sh(t, `ls "$M"`, env))
	assert.Equal(t, "symbolic link\n", sh(t, `stat -c %F "$M/d"`, env))
	require.NoError(t, os.Remove(filepath.Join(root, "d")))
	assert.Equal(t, "d.moved\n", sh(t, `ls "$M"`, env))
	_, _, err = shErr(t, `stat "$M/d"`, env)
	assert.Error(t, err, "no phantom d")
}

// TestChmodReachesHost: chmod through a local: mount sets the host file's
// mode (it outlives the mount and holds for every program); on temp: the
// mount holds it.
func TestChmodReachesHost(t *testing.T) {
	root, s := localMount(t, map[string]string{"f": "x\n", "d/g": "y\n"}, Options{})
	env := "M=" + s.Dir()
	sh(t, `chmod 600 "$M/f"; chmod 4755 "$M/d/g"; chmod 700 "$M/d"`, env)
	for name, want := range map[string]os.FileMode{"f": 0o600, "d/g": 0o755 | os.ModeSetuid, "d": 0o700 | os.ModeDir} {
		fi, err := os.Stat(filepath.Join(root, name))
		require.NoError(t, err)
		assert.Equal(t, want, fi.Mode(), name)
	}
	assert.Equal(t, "600\n4755\n700\n", sh(t, `stat -c %a "$M/f" "$M/d/g" "$M/d"`, env))
	// A file being written keeps the mode it was given.
	sh(t, `exec 3>>"$M/f"; echo more >&3; chmod 640 "$M/f"; stat -c %a "$M/f"; exec 3>&-`, env)
	assert.Equal(t, "640\n", sh(t, `stat -c %a "$M/f"`, env))
	fi, err := os.Stat(filepath.Join(root, "f"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode())
}

// TestUnionOfTempWrites writes through the mount into the temp: part of a
// union with a local: part: the union's staging forwards a conditional
// commit its temp: staging cannot make, and the mount falls back to
// WriteIf on the version it saw.
func TestUnionOfTempWrites(t *testing.T) {
	repo, err := local.New(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { repo.Close() })
	notes := temp.MustNew(map[string]string{"/todo.md": "one\n"})
	u, err := union.New([]union.Mount{{Prefix: "/repo", FS: repo}, {Prefix: "/notes", FS: notes}})
	require.NoError(t, err)
	s := mountT(t, u, Options{})
	sh(t, `echo hi > "$M/notes/a.md"; echo more >> "$M/notes/a.md"; echo two >> "$M/notes/todo.md"; mv "$M/notes/a.md" "$M/notes/b.md"`, "M="+s.Dir())
	for p, want := range map[string]string{"/b.md": "hi\nmore\n", "/todo.md": "one\ntwo\n"} {
		got, err := notes.Read(context.Background(), p)
		require.NoError(t, err)
		assert.Equal(t, want, string(got), p)
	}
}
