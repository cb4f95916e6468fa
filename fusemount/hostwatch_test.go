package fusemount

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// hostCounter is a local: tree (it keeps every capability of *local.FS,
// WatchHost included) that counts the Stat calls reaching it.
type hostCounter struct {
	*local.FS
	n atomic.Int64
}

func (c *hostCounter) Stat(ctx context.Context, p string) (vfs.FileInfo, error) {
	c.n.Add(1)
	return c.FS.Stat(ctx, p)
}

// hostWatchedMount mounts a local: tree of files with the default
// timeouts and waits (bounded) until its host directory is watched.
func hostWatchedMount(t *testing.T, files map[string]string) (string, *hostCounter, *Server) {
	t.Helper()
	return hostWatchedMountWith(t, files, Options{})
}

// hostWatchedMountWith is hostWatchedMount with opts (which must leave
// the timeouts unset).
func hostWatchedMountWith(t *testing.T, files map[string]string, opts Options) (string, *hostCounter, *Server) {
	t.Helper()
	root := hostDir(t, files)
	lfs, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { lfs.Close() })
	fsys := &hostCounter{FS: lfs}
	s := mountT(t, fsys, opts)
	require.Eventually(t, s.m.hostOK.Load, 10*time.Second, 10*time.Millisecond, "the host directory watched")
	return root, fsys, s
}

// eventually runs script in a shell until it prints want, for at most
// 10 s.
func eventually(t *testing.T, what, script, want string, env ...string) {
	t.Helper()
	var got string
	deadline := time.Now().Add(10 * time.Second)
	for {
		got = sh(t, script, env...)
		if got == want || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	assert.Equal(t, want, got, what)
}

// TestHostChangesSeenPromptly: with the default timeouts, the names and
// attributes of a local: tree stay in the kernel's caches past the
// one-second default (no Stat reaches the tree), yet a change made on the
// host behind the mount (an edit, a create, a delete, a rename, a
// directory made with a file in it, a chmod) shows through the mount
// promptly: the host watch invalidates what the kernel cached.
func TestHostChangesSeenPromptly(t *testing.T) {
	root, fsys, s := hostWatchedMount(t, map[string]string{
		"d/a.txt": "one\n", "d/b.txt": "bee\n", "d/c.txt": "see\n",
	})
	env := "M=" + s.Dir()
	host := func(p string) string { return filepath.Join(root, p) }
	require.Equal(t, "a.txt\nb.txt\nc.txt\none\n", sh(t, `ls "$M/d"; cat "$M/d/a.txt"; stat "$M/d/b.txt" "$M/d/c.txt" >/dev/null`, env))
	time.Sleep(1300 * time.Millisecond) // past DefaultEntryTimeout and DefaultAttrTimeout
	// (A read or a listing has the kernel ask for the atime again at
	// the next stat: b.txt and c.txt were only looked up.)
	before := fsys.n.Load()
	require.Equal(t, "4\n4\n", sh(t, `stat -c %s "$M/d/b.txt" "$M/d/c.txt"`, env))
	assert.Zero(t, fsys.n.Load()-before, "Stat calls that reached the tree for cached host entries after 1.3 s")

	require.NoError(t, os.WriteFile(host("d/a.txt"), []byte("two, longer\n"), 0o644))
	eventually(t, "an edit on the host", `cat "$M/d/a.txt"`, "two, longer\n", env)

	require.NoError(t, os.WriteFile(host("d/new.txt"), []byte("new\n"), 0o644))
	eventually(t, "a create on the host", `ls "$M/d"; cat "$M/d/new.txt" 2>&1`, "a.txt\nb.txt\nc.txt\nnew.txt\nnew\n", env)

	require.NoError(t, os.Remove(host("d/b.txt")))
	eventually(t, "a delete on the host", `ls "$M/d"; stat "$M/d/b.txt" >/dev/null 2>&1 || echo gone`, "a.txt\nc.txt\nnew.txt\ngone\n", env)

	require.NoError(t, os.Rename(host("d/c.txt"), host("d/e.txt")))
	eventually(t, "a rename on the host", `ls "$M/d"; cat "$M/d/e.txt"; stat "$M/d/c.txt" >/dev/null 2>&1 || echo gone`,
		"a.txt\ne.txt\nnew.txt\nsee\ngone\n", env)

	require.NoError(t, os.Rename(host("d/e.txt"), host("d/a.txt")))
	eventually(t, "a rename over a file on the host", `ls "$M/d"; cat "$M/d/a.txt"`, "a.txt\nnew.txt\nsee\n", env)

	require.NoError(t, os.Chmod(host("d/a.txt"), 0o600))
	eventually(t, "a chmod on the host", `stat -c %a "$M/d/a.txt"`, "600\n", env)

	// A new directory with a file made in it at once (before the watch
	// of the new directory can be in place), looked up through the
	// mount first so the kernel caches an empty listing if it can.
	require.NoError(t, os.Mkdir(host("nd"), 0o755))
	eventually(t, "mkdir on the host", `ls "$M/nd" && echo ok`, "ok\n", env)
	require.NoError(t, os.WriteFile(host("nd/f.txt"), []byte("f\n"), 0o644))
	require.NoError(t, os.MkdirAll(host("nd/sub/deeper"), 0o755))
	require.NoError(t, os.WriteFile(host("nd/sub/deeper/g.txt"), []byte("g\n"), 0o644))
	eventually(t, "files made in new directories on the host", `ls "$M/nd"; cat "$M/nd/f.txt" "$M/nd/sub/deeper/g.txt"`, "f.txt\nsub\nf\ng\n", env)

	// A directory moved on the host: the old name goes, the new one
	// shows, and a change in it afterwards shows too.
	require.NoError(t, os.Rename(host("nd"), host("md")))
	eventually(t, "a directory moved on the host", `ls "$M"; cat "$M/md/sub/deeper/g.txt"`, "d\nmd\ng\n", env)
	require.NoError(t, os.WriteFile(host("md/sub/deeper/g.txt"), []byte("g2\n"), 0o644))
	eventually(t, "an edit in a moved directory", `cat "$M/md/sub/deeper/g.txt"`, "g2\n", env)
}

// TestHostChangesLost: when host changes were lost (the kernel's inotify
// queue overflowed), the mount drops everything the kernel cached, so an
// edit it never heard of shows all the same; without that the kernel
// would keep the old file for ObservedTimeout.
func TestHostChangesLost(t *testing.T) {
	root, _, s := hostWatchedMount(t, map[string]string{"d/a.txt": "one\n", "e/b.txt": "bee\n"})
	env := "M=" + s.Dir()
	require.Equal(t, "one\nbee\na.txt\n", sh(t, `cat "$M/d/a.txt" "$M/e/b.txt"; ls "$M/d"`, env))
	s.m.hostDropForTest.Store(true) // the changes below are not heard
	require.NoError(t, os.WriteFile(filepath.Join(root, "d/a.txt"), []byte("two, longer\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "e/b.txt"), []byte("bee two\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "d/n.txt"), nil, 0o644))
	time.Sleep(1300 * time.Millisecond) // past the short timeouts
	want := "two, longer\nbee two\na.txt\nn.txt\n"
	require.NotEqual(t, want, sh(t, `cat "$M/d/a.txt" "$M/e/b.txt"; ls "$M/d"`, env), "changes not heard are seen")
	s.m.hostDropForTest.Store(false)
	s.inv.queueHost(local.HostChange{Path: "/", Lost: true})
	s.Settle()
	assert.Equal(t, want, sh(t, `cat "$M/d/a.txt" "$M/e/b.txt"; ls "$M/d"`, env))
}

// TestHostWatchExplicitTimeouts: explicit timeouts keep their meaning: a
// host entry is asked for again once they pass, and nothing is watched.
func TestHostWatchExplicitTimeouts(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644))
	lfs, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { lfs.Close() })
	fsys := &hostCounter{FS: lfs}
	s := mountT(t, fsys, Options{EntryTimeout: 200 * time.Millisecond, AttrTimeout: 200 * time.Millisecond})
	env := "M=" + s.Dir()
	sh(t, `stat "$M/a.txt" >/dev/null`, env)
	time.Sleep(500 * time.Millisecond)
	before := fsys.n.Load()
	sh(t, `stat "$M/a.txt" >/dev/null`, env)
	assert.NotZero(t, fsys.n.Load()-before, "a host entry asked for again after the explicit timeouts")
	assert.False(t, s.m.hostOK.Load(), "host entries cached long with explicit timeouts")
}

// TestHostChangesUnion: a union of a local: mount at / and a temp: mount
// at /notes watches the local: one; a host change shadowed by the temp:
// mount (the host directory has a notes/ of its own) leaves the watch
// complete, and a host edit of a local: file shows promptly.
func TestHostChangesUnion(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "f"), []byte("host\n"), 0o644))
	lfs, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { lfs.Close() })
	notes := temp.MustNew(map[string]string{"/n": "note\n"})
	u, err := union.New([]union.Mount{{Prefix: "/", FS: lfs}, {Prefix: "/notes", FS: notes}})
	require.NoError(t, err)
	s := mountT(t, u, Options{})
	require.Eventually(t, s.m.hostOK.Load, 10*time.Second, 10*time.Millisecond, "the host directory watched")
	env := "M=" + s.Dir()
	require.Equal(t, "host\nnote\n", sh(t, `cat "$M/f" "$M/notes/n"`, env))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "notes"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "notes", "hidden"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "f"), []byte("host two\n"), 0o644))
	eventually(t, "a host edit in a union", `cat "$M/f"; ls "$M/notes"`, "host two\nn\n", env)
	assert.True(t, s.m.hostOK.Load(), "host entries cached long after a change under the temp: mount")
}

// TestReadOnlyNoOpendir: a read-only mount answers OPENDIR with ENOSYS
// (no-opendir), and its listings, read without a handle and in several
// requests for a large directory, are what the host holds, again from
// the kernel's cache, and after a host change.
func TestReadOnlyNoOpendir(t *testing.T) {
	files := map[string]string{"big/sub/deeper/f": "f\n"}
	for i := range 3000 {
		files["big/a-rather-long-file-name-to-fill-the-listing-"+strconv.Itoa(i)] = ""
	}
	root, s := localMount(t, files, Options{ReadOnly: true})
	require.Eventually(t, s.m.hostOK.Load, 10*time.Second, 10*time.Millisecond, "the host directory watched")
	env := []string{"M=" + s.Dir(), "H=" + root}
	same := `diff <(cd "$H" && find . | sort) <(cd "$M" && find . | sort) && echo same; cat "$M/big/sub/deeper/f"`
	assert.Equal(t, "same\nf\n", sh(t, same, env...))
	assert.Positive(t, s.m.handlelessReads.Load(), "directory reads without a handle (no-opendir)")
	assert.Equal(t, "same\nf\n", sh(t, same, env...), "listed again, from the kernel's cache")
	require.NoError(t, os.WriteFile(filepath.Join(root, "big", "new"), nil, 0o644))
	require.NoError(t, os.Remove(filepath.Join(root, "big", "a-rather-long-file-name-to-fill-the-listing-7")))
	eventually(t, "a host change in a large directory", same, "same\nf\n", env...)
}

// TestOwnEntryThenHostChange: a name the mount removes and another
// program makes again at once, and a name the mount makes and another
// program removes at once, show through the mount as the host has them.
// The reports of the mount's own removal and create are taken for the
// mount's by what they report, without asking the host (ownEntry); the
// other program's change of the same name is reported after them and
// must still drop what the kernel cached of the name in between: a
// negative entry (a negative timeout is set) and a positive one, each
// cached for ObservedTimeout otherwise.
func TestOwnEntryThenHostChange(t *testing.T) {
	for name, opts := range passthroughModes {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{"d/keep": "k\n"}
			for i := range 3 {
				files[fmt.Sprintf("d/r%d", i)] = "old\n"
			}
			opts.NegativeTimeout = time.Hour
			root, _, s := hostWatchedMountWith(t, files, opts)
			env := []string{"M=" + s.Dir(), "H=" + root}
			for i := range 3 {
				require.Equal(t, "gone\n", sh(t, fmt.Sprintf(`rm "$M/d/r%d"; test -e "$M/d/r%d" || echo gone; echo new > "$H/d/r%d"`, i, i, i), env...))
				eventually(t, "a name the mount removed, made again on the host", fmt.Sprintf(`cat "$M/d/r%d" 2>/dev/null || echo missing`, i), "new\n", env...)
				require.Equal(t, "made\n", sh(t, fmt.Sprintf(`: > "$M/d/c%d"; test -e "$M/d/c%d" && echo made; rm "$H/d/c%d"`, i, i, i), env...))
				eventually(t, "a name the mount made, removed on the host", fmt.Sprintf(`test -e "$M/d/c%d" || echo gone`, i), "gone\n", env...)
			}
			assert.Equal(t, "keep\nr0\nr1\nr2\nnew\nnew\nnew\n", sh(t, `ls "$M/d"; cat "$M/d/r"*`, env...))
		})
	}
}

// TestReaddirplusAttrsFromDirectory: readdirplus's attributes of the
// files of a local: directory come from the directory held open while
// the listing is read (dirHandle, one fstatat each, not the tree's Stat
// per entry), and are the host's: sizes, modes, times, as stat shows
// them after ls -l through the mount (from the kernel's cache) and on
// the host.
func TestReaddirplusAttrsFromDirectory(t *testing.T) {
	files := map[string]string{"d/sub/x": "x"}
	for i := range 20 {
		files[fmt.Sprintf("d/f%02d", i)] = strings.Repeat("y", i*7)
	}
	root, fsys, s := hostWatchedMount(t, files)
	require.NoError(t, os.Chmod(filepath.Join(root, "d/f03"), 0o600))
	require.NoError(t, os.Chmod(filepath.Join(root, "d/f04"), 0o755))
	require.NoError(t, os.Symlink("f01", filepath.Join(root, "d/link")))
	env := []string{"M=" + s.Dir(), "H=" + root}
	list := `cd "$1/d" && stat -c '%n %F %s %a %Y' *`
	want := sh(t, `set -- "$H"; `+list, env...)
	before := fsys.n.Load()
	require.Equal(t, "ok\n", sh(t, `ls -l "$M/d" >/dev/null && echo ok`, env...))
	assert.Less(t, fsys.n.Load()-before, int64(10), "Stat calls reaching the tree for a listing of 22 entries read with readdirplus")
	assert.Equal(t, want, sh(t, `set -- "$M"; `+list, env...))
}

// TestMkdirWatchedAtOnce: a directory made through the mount is watched
// before the kernel hears of it, so the host watch's report of it is the
// mount's own, not Lost: neither it nor the files made in it through the
// mount send the kernel an invalidation of a name (before, the
// directory's creation came reported Lost and dropped everything made in
// it so far). A file another program then makes in it, or in a directory
// made in it, shows through the mount, also where the kernel had cached
// the name as missing. The same holds for a local: tree mounted under a
// prefix of a union.
func TestMkdirWatchedAtOnce(t *testing.T) {
	// The reports are waited for longer than usual: the watch is held
	// back below while the mount works.
	w := selfWindow.Swap(int64(time.Minute))
	t.Cleanup(func() { selfWindow.Store(w) })
	for _, prefix := range []string{"/", "/repo"} {
		t.Run(prefix, func(t *testing.T) {
			logs := newTestLog(t)
			opts := Options{Debug: true, Logger: logs.logger()}
			root := hostDir(t, map[string]string{"g/keep": ""})
			lfs, err := local.New(root)
			require.NoError(t, err)
			t.Cleanup(func() { lfs.Close() })
			var fsys vfs.FileSystem = lfs
			if prefix != "/" {
				fsys, err = union.New([]union.Mount{{Prefix: "/", FS: temp.MustNew(nil)}, {Prefix: prefix, FS: lfs}})
				require.NoError(t, err)
			}
			s := mountT(t, fsys, opts)
			require.Eventually(t, s.m.hostOK.Load, 10*time.Second, 10*time.Millisecond, "the host directory watched")
			env := []string{"M=" + filepath.Join(s.Dir(), prefix)}
			at := func(p string) string { return vfs.Join(prefix, p) }
			// The watch's goroutine waits at the report of /g/gate while
			// the mount works, as a busy one would: the reports of the
			// mount's changes come after the mount made and filled its
			// directories. (One that comes first, before the mount
			// watched the directory, is reported Lost before the kernel
			// hears of the directory, when nothing under it can be
			// cached yet.)
			gate, held := make(chan struct{}), make(chan struct{})
			var once sync.Once
			open := func() { once.Do(func() { close(gate) }) }
			t.Cleanup(open)
			var mu sync.Mutex
			var lost []string
			hook := func(c local.HostChange) {
				if c.Path == at("/g/gate") && c.Entry {
					close(held)
					<-gate
				}
				if c.Lost {
					mu.Lock()
					lost = append(lost, c.Path)
					mu.Unlock()
				}
			}
			s.m.hostHookForTest.Store(&hook)
			require.NoError(t, os.WriteFile(filepath.Join(root, "g", "gate"), nil, 0o644))
			select {
			case <-held:
			case <-time.After(10 * time.Second):
				require.Fail(t, "the creation of /g/gate was not reported")
			}
			sh(t, `mkdir "$M/nd"; for i in 1 2 3 4 5 6 7 8; do echo $i > "$M/nd/f$i"; done; mkdir "$M/nd/sub"; echo g > "$M/nd/sub/g"
test -e "$M/nd/late" || test -e "$M/nd/sub/late" || echo missing`, env...)
			open()
			// The host watch reports in order: once another program's
			// files show, the reports of the mount's own changes were
			// handled.
			require.NoError(t, os.WriteFile(filepath.Join(root, "nd", "late"), []byte("late\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(root, "nd", "sub", "late"), []byte("later\n"), 0o644))
			eventually(t, "files another program made in directories the mount made", `cat "$M/nd/late" "$M/nd/sub/late" "$M/nd/f8" "$M/nd/sub/g" 2>/dev/null || true`, "late\nlater\n8\ng\n", env...)
			mu.Lock()
			assert.Empty(t, lost, "changes reported Lost")
			mu.Unlock()
			var own []string
			for _, line := range strings.Split(logs.String(), "\n") {
				// The daemon's notifications, not the kernel's answers.
				if strings.Contains(line, "tx 0:") && strings.Contains(line, "NOTIFY_INVAL_ENTRY") && !strings.Contains(line, `"late"`) {
					own = append(own, line)
				}
			}
			assert.Empty(t, own, "invalidations of the names of the mount's own directories and files")
			assert.Equal(t, "f1\nf2\nf3\nf4\nf5\nf6\nf7\nf8\nlate\nsub\n", sh(t, `ls "$M/nd"`, env...))
		})
	}
}
