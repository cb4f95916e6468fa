package fusemount

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
)

// The tests of new files written in place (passthrough.go, "New files
// written in place"): with passthrough or without, a file created through a local:
// mount is the host file from the create on, its writes reported at
// its release (its close sends no FLUSH), a lost race logged, and a crash
// leaves what was written; an existing file is still rewritten through a
// staging.

// ptAvailable reports whether this machine lets a mount pass through
// (root on Linux 6.9+), by mounting one.
func ptAvailable(t *testing.T) bool {
	t.Helper()
	_, s := localMount(t, nil, Options{Passthrough: true})
	return s.m.pt.Load()
}

// namesIn lists the names in host directory dir.
func namesIn(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestCreateWritesInPlace: a program creating a file through a local:
// mount (with passthrough the kernel, without it the daemon) writes the
// host file itself: the host and the
// API see its writes before it closes the file, no temporary file or
// staging is made, the create and (at close) the writes are reported to
// the tree's watchers.
func TestCreateWritesInPlace(t *testing.T) {
	for name, opts := range passthroughModes {
		t.Run(name, func(t *testing.T) { testCreateWritesInPlace(t, opts) })
	}
}

func testCreateWritesInPlace(t *testing.T, opts Options) {
	root, s := localMount(t, map[string]string{"old.txt": "old\n"}, opts)
	if !opts.NoPassthrough && !s.m.pt.Load() {
		t.Skip("no FUSE passthrough here (root on Linux 6.9+)")
	}
	fsys := s.m.fsys
	wrote := writesReported(t, fsys)
	count := func() int { return wrote("/new.dat") }
	want := bytes.Repeat([]byte("N"), 64<<10)

	cmd, stdin, out := helper(t, "rewrite", "JULYFS_FILE="+filepath.Join(s.Dir(), "new.dat"), "JULYFS_MODE=create")
	require.Equal(t, "written", readLine(t, out))
	onHost, err := os.ReadFile(filepath.Join(root, "new.dat"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, onHost), "host file before the close: %d bytes, want the 64 KiB written", len(onHost))
	fi, err := fsys.Stat(context.Background(), "/new.dat")
	require.NoError(t, err)
	assert.Equal(t, int64(len(want)), fi.Size, "API stat before the close")
	assert.Equal(t, []string{"new.dat", "old.txt"}, namesIn(t, root), "no temporary file on the host")
	assert.Equal(t, 1, count(), "changes reported before the close (the create)")

	stdin.Close()
	assert.Equal(t, "closed", readLine(t, out))
	require.NoError(t, cmd.Wait())
	// The writes are reported at the release, which the kernel sends
	// after the close returns (the creator's close sends no FLUSH).
	assert.Eventually(t, func() bool { return count() == 2 }, 10*time.Second, 5*time.Millisecond,
		"changes reported after the release (the create, the writes): %d", count())
	got, err := fsys.Read(context.Background(), "/new.dat")
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got), "API read after the close")
	assert.Equal(t, "65536 644\n", sh(t, `stat -c '%s %a' "$M/new.dat"`, "M="+s.Dir()), "size and mode through the mount")
	checkPassthrough(t, s, opts)
}

// TestCreateInPlaceReplaced: a file replaced on the host while the
// program that created it through the mount still writes it (a rename
// over it) keeps the other writer's version. The creator's close
// succeeds, as on a local disk: it sends no FLUSH (FOPEN_NOFLUSH, one
// request fewer for every file made), and the release that follows finds
// the conflict and logs it, naming the file.
func TestCreateInPlaceReplaced(t *testing.T) {
	for name, opts := range passthroughModes {
		t.Run(name, func(t *testing.T) { testCreateInPlaceReplaced(t, opts) })
	}
}

func testCreateInPlaceReplaced(t *testing.T, opts Options) {
	root, s, logs := loggedLocalMount(t, nil, opts)
	if !opts.NoPassthrough && !s.m.pt.Load() {
		t.Skip("no FUSE passthrough here (root on Linux 6.9+)")
	}
	cmd, stdin, out := helper(t, "rewrite", "JULYFS_FILE="+filepath.Join(s.Dir(), "new.dat"), "JULYFS_MODE=create")
	require.Equal(t, "written", readLine(t, out))
	other := filepath.Join(root, "theirs")
	require.NoError(t, os.WriteFile(other, []byte("theirs\n"), 0o644))
	require.NoError(t, os.Rename(other, filepath.Join(root, "new.dat")))
	stdin.Close()
	assert.Equal(t, "closed", readLine(t, out), "the creator's close")
	require.NoError(t, cmd.Wait())
	assert.Eventually(t, func() bool {
		return strings.Contains(logs.String(), "write /new.dat: the file was replaced or removed on the host")
	}, 10*time.Second, 5*time.Millisecond, "the release logs the conflict: %q", logs.String())
	onHost, err := os.ReadFile(filepath.Join(root, "new.dat"))
	require.NoError(t, err)
	assert.Equal(t, "theirs\n", string(onHost), "the other writer's version stays")
}

// TestCreateSurvivesKill: the server (with passthrough and without) is
// killed while one program rewrites an existing file (O_TRUNC) and
// another writes a new one: the existing file keeps its old content (its
// rewrite is staged), the new file holds what was written to it before
// the kill (written in place), and no temporary file is left.
func TestCreateSurvivesKill(t *testing.T) {
	for name, env := range map[string]string{"default": "JULYFS_SERVE_PASSTHROUGH=", "no-passthrough": "JULYFS_SERVE_PASSTHROUGH=off"} {
		t.Run(name, func(t *testing.T) { testCreateSurvivesKill(t, env) })
	}
}

func testCreateSurvivesKill(t *testing.T, env string) {
	root := t.TempDir()
	old := filepath.Join(root, "old.dat")
	require.NoError(t, os.WriteFile(old, oldContent(), 0o644))
	s := startServer(t, root, env)
	_, stdinOld, outOld := helper(t, "rewrite", "JULYFS_FILE="+filepath.Join(s.dir, "old.dat"), "JULYFS_MODE=trunc")
	require.Equal(t, "written", readLine(t, outOld))
	_, stdinNew, outNew := helper(t, "rewrite", "JULYFS_FILE="+filepath.Join(s.dir, "new.dat"), "JULYFS_MODE=create")
	require.Equal(t, "written", readLine(t, outNew))
	killServer(t, s)
	stdinOld.Close()
	stdinNew.Close()

	onHost, err := os.ReadFile(old)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(onHost, oldContent()), "existing file after the kill: %d bytes, want the old 1 MiB", len(onHost))
	created, err := os.ReadFile(filepath.Join(root, "new.dat"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(created, bytes.Repeat([]byte("N"), 64<<10)), "new file after the kill: %d bytes, want the 64 KiB written in place", len(created))
	assert.Equal(t, []string{"new.dat", "old.dat"}, namesIn(t, root), "no temporary file left")
}

// TestOwnEntryChangesSkipped: the host watch's reports of the mount's own
// creates and unlinks are dropped (the kernel knows them: they count as
// no host change), while another program's change of the same names a
// moment later still shows through the mount.
func TestOwnEntryChangesSkipped(t *testing.T) {
	for name, opts := range passthroughModes {
		t.Run(name, func(t *testing.T) {
			root, _, s := hostWatchedMountWith(t, map[string]string{"d/gone.txt": "g\n", "d/keep.txt": "k\n"}, opts)
			env := "M=" + s.Dir()
			require.NoError(t, os.Mkdir(filepath.Join(root, "d/sub"), 0o755))
			eventually(t, "a directory made on the host", `ls "$M/d"`, "gone.txt\nkeep.txt\nsub\n", env)
			before := s.m.hostGen.Load()
			sh(t, `: > "$M/d/new.txt"; rm "$M/d/gone.txt"; rmdir "$M/d/sub"`, env)
			waiting := func() int {
				s.m.selfMu.Lock()
				defer s.m.selfMu.Unlock()
				return len(s.m.selfEntries)
			}
			require.Eventually(t, func() bool { return waiting() == 0 }, 10*time.Second, 5*time.Millisecond,
				"the host watch's reports of the mount's create, unlink and rmdir taken as the mount's")
			// (The rmdir's second report, of the directory's own watch,
			// is heard as a host change.)
			assert.LessOrEqual(t, s.m.hostGen.Load()-before, uint64(1), "host changes heard for a create, an unlink and an rmdir, all the mount's")
			// The watch still hears another program.
			require.NoError(t, os.Mkdir(filepath.Join(root, "marker"), 0o755))
			require.Eventually(t, func() bool { return s.m.hostGen.Load() != before }, 10*time.Second, 5*time.Millisecond, "a mkdir on the host heard")

			// Another program's changes of those names right after
			// are seen.
			require.NoError(t, os.WriteFile(filepath.Join(root, "d/gone.txt"), []byte("back\n"), 0o644))
			require.NoError(t, os.Remove(filepath.Join(root, "d/new.txt")))
			eventually(t, "host changes of the same names", `ls "$M/d"; cat "$M/d/gone.txt"`, "gone.txt\nkeep.txt\nback\n", env)

			// A report the other way than expected (a create where
			// the mount expects a removal, a removal where it
			// expects a create) is never taken for the mount's.
			before = s.m.hostGen.Load()
			s.m.expectEntry("/d/x.txt", false)
			s.m.expectEntry("/d/keep.txt", true)
			require.NoError(t, os.WriteFile(filepath.Join(root, "d/x.txt"), []byte("x\n"), 0o644))
			require.NoError(t, os.Remove(filepath.Join(root, "d/keep.txt")))
			// Three host changes: x.txt made and written, keep.txt
			// removed.
			require.Eventually(t, func() bool { return s.m.hostGen.Load()-before >= 3 }, 10*time.Second, 5*time.Millisecond,
				"host changes the other way than expected heard as host changes")
			eventually(t, "host changes the other way than expected", `ls "$M/d"`, "gone.txt\nx.txt\n", env)
		})
	}
}

// TestCreateSendsNoFlush: closing a file created through the mount sends
// the daemon no FLUSH (FOPEN_NOFLUSH in the CREATE reply: the writes are
// on the host already and the release reports them), with passthrough
// and without; a writer opening an existing file still gets one at each
// close, where its writes are committed and a failure is reported.
func TestCreateSendsNoFlush(t *testing.T) {
	for name, opts := range passthroughModes {
		t.Run(name, func(t *testing.T) {
			opts.Debug = true
			root, s, logs := loggedLocalMount(t, map[string]string{"old.txt": "old\n"}, opts)
			env := "M=" + s.Dir()
			// go-fuse's own poll probe at mount (node ^0) aside.
			flushes := func() int {
				return strings.Count(logs.String(), ": FLUSH ") - strings.Count(logs.String(), ": FLUSH n18446744073709551615 ")
			}
			sh(t, `for i in 1 2 3; do echo "file $i" > "$M/f$i"; done; cp "$M/old.txt" "$M/copy.txt"`, env)
			assert.Equal(t, 0, flushes(), "FLUSH requests for four files created")
			for i := 1; i <= 3; i++ {
				got, err := os.ReadFile(filepath.Join(root, fmt.Sprintf("f%d", i)))
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprintf("file %d\n", i), string(got))
			}
			sh(t, `echo more >> "$M/old.txt"`, env)
			assert.Positive(t, flushes(), "FLUSH requests for a writer of an existing file")
			got, err := os.ReadFile(filepath.Join(root, "old.txt"))
			require.NoError(t, err)
			assert.Equal(t, "old\nmore\n", string(got))
		})
	}
}

// TestCreatedMovedBeforeRelease: a program writes a file through the
// mount, closes it and at once renames it into place, removes it, or
// renames the directory holding it (git, editors, compilers): the
// creator's writes are checked and reported at the release, which the
// kernel sends a moment after the close and may be handled while the
// rename or unlink is. None of these is taken for another writer's
// replace (no conflict logged), and each renamed file's writes are
// reported.
func TestCreatedMovedBeforeRelease(t *testing.T) {
	for name, opts := range passthroughModes {
		t.Run(name, func(t *testing.T) {
			_, s, logs := loggedLocalMount(t, nil, opts)
			wrote := writesReported(t, s.m.fsys)
			const n, workers = 150, 2
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					write := func(p string) bool {
						f, err := os.Create(p)
						if !assert.NoError(t, err) {
							return false
						}
						_, err = f.WriteString("data\n")
						assert.NoError(t, err)
						return assert.NoError(t, f.Close())
					}
					for i := range n {
						at := func(f string) string { return filepath.Join(s.Dir(), fmt.Sprintf(f, w, i)) }
						if !write(at("t%d-%d.tmp")) || !assert.NoError(t, os.Rename(at("t%d-%d.tmp"), at("f%d-%d"))) {
							return
						}
						if !write(at("u%d-%d")) || !assert.NoError(t, os.Remove(at("u%d-%d"))) {
							return
						}
						if !assert.NoError(t, os.Mkdir(at("d%d-%d"), 0o755)) || !write(at("d%d-%d/g")) ||
							!assert.NoError(t, os.Rename(at("d%d-%d"), at("e%d-%d"))) {
							return
						}
					}
				}()
			}
			wg.Wait()
			// A renamed file's writes are reported at either name: at the
			// temporary one (a create and the writes) when its release
			// came first.
			reported := func() int {
				k := 0
				for w := range workers {
					for i := range n {
						if wrote(fmt.Sprintf("/f%d-%d", w, i)) > 0 || wrote(fmt.Sprintf("/t%d-%d.tmp", w, i)) > 1 {
							k++
						}
					}
				}
				return k
			}
			assert.Eventually(t, func() bool { return reported() == n*workers }, 20*time.Second, 10*time.Millisecond,
				"files renamed into place whose writes were reported: %d of %d", reported(), n*workers)
			assert.NotContains(t, logs.String(), "replaced or removed on the host", "the mount's own renames and unlinks taken for another writer's")
		})
	}
}

// TestCreatedMovedByOthers: a file written through the mount is renamed,
// right after its close, by someone else (the API, here: the same tree in
// this process), or the directory holding a file still being written is
// renamed through the mount while its writer writes and syncs. A file
// moved is neither replaced nor removed: its writes are in it wherever it
// went, as on a disk, so no fsync fails and no release or flush logs a
// lost replace (a file replaced keeps failing: TestCreatedInPlaceReplaced).
func TestCreatedMovedByOthers(t *testing.T) {
	for name, opts := range passthroughModes {
		t.Run(name, func(t *testing.T) {
			_, s, logs := loggedLocalMount(t, nil, opts)
			r, ok := s.m.fsys.(vfs.Renamer)
			require.True(t, ok)
			for i := range 100 {
				require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), fmt.Sprintf("t%d", i)), []byte("data\n"), 0o644))
				require.NoError(t, r.Rename(t.Context(), fmt.Sprintf("/t%d", i), fmt.Sprintf("/f%d", i)))
			}

			a, b := filepath.Join(s.Dir(), "a"), filepath.Join(s.Dir(), "b")
			require.NoError(t, os.Mkdir(a, 0o755))
			f, err := os.Create(filepath.Join(a, "f"))
			require.NoError(t, err)
			t.Cleanup(func() { f.Close() })
			stop := make(chan struct{})
			done := make(chan error, 1)
			go func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						done <- nil
						return
					default:
					}
					from, to := a, b
					if i%2 == 1 {
						from, to = b, a
					}
					if err := os.Rename(from, to); err != nil {
						done <- err
						return
					}
				}
			}()
			fails := 0
			for range 300 {
				_, err := f.Write([]byte("x"))
				require.NoError(t, err)
				if f.Sync() != nil {
					fails++
				}
			}
			close(stop)
			require.NoError(t, <-done, "renaming the directory")
			assert.Zero(t, fails, "fsyncs of 300 that failed while the directory above was renamed")
			require.NoError(t, f.Close())

			for i := range 100 {
				data, err := s.m.fsys.Read(t.Context(), fmt.Sprintf("/f%d", i))
				require.NoError(t, err)
				assert.Equal(t, "data\n", string(data))
			}
			// The releases come a moment after the closes (a
			// millisecond or so; the check fails at once without the fix).
			time.Sleep(300 * time.Millisecond)
			assert.NotContains(t, logs.String(), "replaced or removed on the host", "moves taken for another writer's replace")
		})
	}
}

// TestLinkUnlinkedDuringRelease: a file created in place, given a
// second name, written, then closed while that second name is removed
// through the mount (UNLINKs run beside releases). The writes are still
// at the first name: the release waits for the unlink and reports them
// there, rather than skipping its check.
func TestLinkUnlinkedDuringRelease(t *testing.T) {
	for name, opts := range passthroughModes {
		t.Run(name, func(t *testing.T) {
			_, s, logs := loggedLocalMount(t, nil, opts)
			wrote := writesReported(t, s.m.fsys)
			const n = 300
			for i := range n {
				fh, _, g := createLinked(t, s.Dir(), i)
				var wg sync.WaitGroup
				wg.Add(2)
				go func() { defer wg.Done(); assert.NoError(t, fh.Close()) }()
				go func() { defer wg.Done(); assert.NoError(t, os.Remove(g)) }()
				wg.Wait()
			}
			missing := func() []int {
				var out []int
				for i := range n {
					if wrote(fmt.Sprintf("/f%d", i)) < 2 && wrote(fmt.Sprintf("/g%d", i)) < 2 { // the create (link), then the writes
						out = append(out, i)
					}
				}
				return out
			}
			assert.Eventually(t, func() bool { return len(missing()) == 0 }, 3*time.Second, 20*time.Millisecond,
				"files whose writes were never reported at their remaining name: %v of %d", missing(), n)
			assert.NotContains(t, logs.String(), "replaced or removed on the host")
		})
	}
}

// TestLastNameUnlinkedDuringRelease: a file created in place gets a
// second name, which is removed (the node still believes in two names),
// then its writer closes while its last name is removed through the mount.
// The mount's own unlink is not taken for another writer's replace: the
// release waits until go-fuse has dropped the name too.
func TestLastNameUnlinkedDuringRelease(t *testing.T) {
	for name, opts := range passthroughModes {
		t.Run(name, func(t *testing.T) {
			_, s, logs := loggedLocalMount(t, nil, opts)
			const n = 500
			for i := range n {
				fh, f, g := createLinked(t, s.Dir(), i)
				require.NoError(t, os.Remove(g))
				var wg sync.WaitGroup
				wg.Add(2)
				go func() { defer wg.Done(); assert.NoError(t, fh.Close()) }()
				go func() { defer wg.Done(); assert.NoError(t, os.Remove(f)) }()
				wg.Wait()
			}
			time.Sleep(200 * time.Millisecond)
			assert.NotContains(t, logs.String(), "replaced or removed on the host")
		})
	}
}

// writesReported counts the write reports of fsys (vfs.Watch) from now
// to the test's end: the func returned gives a path's count so far.
func writesReported(t *testing.T, fsys vfs.FileSystem) func(p string) int {
	var mu sync.Mutex
	wrote := map[string]int{}
	cancel, ok := vfs.Watch(fsys, func(c vfs.Change) {
		if c.Op == vfs.ChangeWrite {
			mu.Lock()
			wrote[c.Path]++
			mu.Unlock()
		}
	})
	require.True(t, ok)
	t.Cleanup(cancel)
	return func(p string) int {
		mu.Lock()
		defer mu.Unlock()
		return wrote[p]
	}
}

// createLinked creates f<i> in dir (a mount), gives it a second name
// g<i> and writes into it, and returns it still open.
func createLinked(t *testing.T, dir string, i int) (fh *os.File, f, g string) {
	t.Helper()
	f, g = filepath.Join(dir, fmt.Sprintf("f%d", i)), filepath.Join(dir, fmt.Sprintf("g%d", i))
	fh, err := os.Create(f)
	require.NoError(t, err)
	require.NoError(t, os.Link(f, g))
	_, err = fh.WriteString("data\n")
	require.NoError(t, err)
	return fh, f, g
}
