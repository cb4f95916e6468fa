package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostLog gathers the changes a HostWatch reports.
type hostLog struct {
	mu  sync.Mutex
	got []HostChange
}

func (l *hostLog) add(c HostChange) {
	l.mu.Lock()
	l.got = append(l.got, c)
	l.mu.Unlock()
}

// waitFor waits (at most 10 s) until a change matching ok was reported.
func (l *hostLog) waitFor(t *testing.T, what string, ok func(HostChange) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		for _, c := range l.got {
			if ok(c) {
				l.mu.Unlock()
				return
			}
		}
		got := fmt.Sprint(l.got)
		l.mu.Unlock()
		if time.Now().After(deadline) {
			require.Failf(t, "no host change reported", "%s; got %s", what, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (l *hostLog) reset() {
	l.mu.Lock()
	l.got = nil
	l.mu.Unlock()
}

func watchT(t *testing.T, root string) (*FS, *HostWatch, *hostLog) {
	t.Helper()
	fsys, err := New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	l := &hostLog{}
	hw, err := fsys.WatchHost(l.add)
	require.NoError(t, err)
	t.Cleanup(func() { hw.Close() })
	return fsys, hw, l
}

func is(p string, entry, lost bool) func(HostChange) bool {
	return func(c HostChange) bool { return c.Path == p && c.Entry == entry && c.Lost == lost }
}

// TestWatchHost: edits, creates, deletes and renames made on the host by
// another program are reported with their tree paths; a directory made on
// the host is watched at once (a file made in it is reported), and one
// moved keeps being watched under its new name. The package's own
// temporary files are not reported.
func TestWatchHost(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "d", "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "d", "a.txt"), []byte("one\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "d", "b.txt"), []byte("bee\n"), 0o644))
	fsys, hw, l := watchT(t, root)
	assert.True(t, hw.Complete())
	assert.Equal(t, 3, hw.Dirs(), "directories watched: /, /d, /d/sub")

	require.NoError(t, os.WriteFile(filepath.Join(root, "d", "a.txt"), []byte("two\n"), 0o644))
	l.waitFor(t, "edit of /d/a.txt", is("/d/a.txt", false, false))
	require.NoError(t, os.WriteFile(filepath.Join(root, "d", "sub", "new.txt"), nil, 0o644))
	l.waitFor(t, "create of /d/sub/new.txt", is("/d/sub/new.txt", true, false))
	require.NoError(t, os.Remove(filepath.Join(root, "d", "b.txt")))
	l.waitFor(t, "delete of /d/b.txt", is("/d/b.txt", true, false))
	require.NoError(t, os.Rename(filepath.Join(root, "d", "a.txt"), filepath.Join(root, "d", "c.txt")))
	l.waitFor(t, "rename from /d/a.txt", is("/d/a.txt", true, false))
	l.waitFor(t, "rename to /d/c.txt", is("/d/c.txt", true, false))
	require.NoError(t, os.Chmod(filepath.Join(root, "d", "c.txt"), 0o600))
	l.waitFor(t, "chmod of /d/c.txt", is("/d/c.txt", false, false))

	// New directories, and a file made in them once they are watched
	// (/n1/n2 is watched when the walk of /n1 finds it, or when its own
	// creation, reported Lost, is taken: what is made in it before is
	// covered by that Lost change, not reported one by one).
	require.NoError(t, os.MkdirAll(filepath.Join(root, "n1", "n2"), 0o755))
	l.waitFor(t, "mkdir /n1", is("/n1", true, true))
	deadline := time.Now().Add(10 * time.Second)
	for hw.Dirs() < 5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.Equal(t, 5, hw.Dirs(), "directories watched: /, /d, /d/sub, /n1, /n1/n2")
	require.NoError(t, os.WriteFile(filepath.Join(root, "n1", "n2", "f.txt"), []byte("f\n"), 0o644))
	l.waitFor(t, "create of /n1/n2/f.txt", is("/n1/n2/f.txt", true, false))

	// A directory moved: reported Lost under both names, and what
	// happens in it afterwards under the new one.
	require.NoError(t, os.Rename(filepath.Join(root, "n1"), filepath.Join(root, "m1")))
	l.waitFor(t, "move from /n1", is("/n1", true, true))
	l.waitFor(t, "move to /m1", is("/m1", true, true))
	l.reset()
	require.NoError(t, os.WriteFile(filepath.Join(root, "m1", "n2", "g.txt"), nil, 0o644))
	l.waitFor(t, "create of /m1/n2/g.txt", is("/m1/n2/g.txt", true, false))
	l.mu.Lock()
	for _, c := range l.got {
		assert.False(t, strings.HasPrefix(c.Path, "/n1"), "a change reported under the old name: %v", c)
	}
	l.mu.Unlock()

	// The package's own write: its temporary file is not reported, the
	// file written is.
	l.reset()
	require.NoError(t, fsys.Write(t.Context(), "/d/w.txt", []byte("w\n")))
	l.waitFor(t, "write of /d/w.txt", is("/d/w.txt", true, false))
	l.mu.Lock()
	for _, c := range l.got {
		assert.NotContains(t, c.Path, tempPrefix)
	}
	l.mu.Unlock()

	require.NoError(t, hw.Close())
	require.NoError(t, hw.Close(), "a second Close")
	l.reset()
	require.NoError(t, os.WriteFile(filepath.Join(root, "after.txt"), nil, 0o644))
	time.Sleep(100 * time.Millisecond)
	l.mu.Lock()
	assert.Empty(t, l.got, "changes reported after Close")
	l.mu.Unlock()
}

// TestWatchHostOverflow: when the kernel's event queue overflows (the
// subscriber was too slow), the loss is reported as a Lost change of "/".
func TestWatchHostOverflow(t *testing.T) {
	queue, err := HostQueueEvents()
	if err != nil {
		t.Skipf("no inotify limits to read: %v", err)
	}
	if queue > 110000 {
		t.Skipf("%d events wait before a loss: too many to make", queue)
	}
	root := t.TempDir()
	fsys, err := New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	block := make(chan struct{})
	l := &hostLog{}
	var once sync.Once
	hw, err := fsys.WatchHost(func(c HostChange) {
		once.Do(func() { <-block }) // the first change holds the rest up
		l.add(c)
	})
	require.NoError(t, err)
	t.Cleanup(func() { hw.Close() })
	t.Cleanup(func() {
		select {
		case <-block:
		default:
			close(block)
		}
	})
	n := queue + 2000 // more events than can wait
	for i := range n {
		f, err := os.Create(filepath.Join(root, "f"+strconv.Itoa(i)))
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	close(block)
	l.waitFor(t, "a Lost change of / after an overflow", is("/", false, true))
}

// TestWatchHostLimit: a tree with more directories than watches allowed
// cannot be watched (an error at start); a directory made later that
// cannot be watched makes the watch incomplete and is reported Lost.
func TestWatchHostLimit(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a", "b", "c"} {
		require.NoError(t, os.Mkdir(filepath.Join(root, d), 0o755))
	}
	fsys, err := New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	maxWatchesForTest.Store(3)
	t.Cleanup(func() { maxWatchesForTest.Store(0) })
	_, err = fsys.WatchHost(func(HostChange) {})
	require.Error(t, err, "four directories, three watches")
	assert.Contains(t, err.Error(), "max_user_watches")

	maxWatchesForTest.Store(5)
	l := &hostLog{}
	hw, err := fsys.WatchHost(l.add)
	require.NoError(t, err)
	t.Cleanup(func() { hw.Close() })
	require.True(t, hw.Complete())
	require.NoError(t, os.MkdirAll(filepath.Join(root, "n", "m"), 0o755))
	l.waitFor(t, "a Lost change of the new directory", is("/n", true, true))
	deadline := time.Now().Add(10 * time.Second)
	for hw.Complete() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.False(t, hw.Complete(), "the watch is complete with /n/m unwatched")
}

// TestWatchHostWith: a directory SkipDir leaves out is not watched, nor
// anything under it, and changes in it are not reported, though its own
// appearing is (an Entry change, not Lost); Barrier returns after every
// change made before it was reported, and its files (here in a skipped
// directory of the tree) are never reported.
func TestWatchHostWith(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git", "objects"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "src"), 0o755))
	fsys, err := New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	l := &hostLog{}
	hw, err := fsys.WatchHostWith(HostWatchOptions{
		SkipDir:    func(p string) bool { return filepath.Base(p) == ".git" },
		BarrierDir: filepath.Join(root, ".git"),
	}, l.add)
	require.NoError(t, err)
	t.Cleanup(func() { hw.Close() })
	assert.Equal(t, 2, hw.Dirs(), "directories watched: /, /src")

	barrier := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		require.NoError(t, hw.Barrier(ctx))
	}
	const n = 50
	for i := range n {
		require.NoError(t, os.WriteFile(filepath.Join(root, "src", "f"+strconv.Itoa(i)), nil, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "objects", "x"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "HEAD"), nil, 0o644))
	barrier()
	l.mu.Lock()
	got := slices.Clone(l.got)
	l.mu.Unlock()
	for i := range n {
		p := "/src/f" + strconv.Itoa(i)
		assert.True(t, slices.ContainsFunc(got, is(p, true, false)), "%s made before the barrier, not reported when it returned", p)
	}

	// A directory made with a skipped one in it: the new one is watched,
	// the skipped one is not, and reported as an entry only.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "m", ".git"), 0o755))
	l.waitFor(t, "mkdir /m", is("/m", true, true))
	require.NoError(t, os.Mkdir(filepath.Join(root, "src", ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "src", ".git", "y"), nil, 0o644))
	barrier()
	l.waitFor(t, "mkdir /src/.git", is("/src/.git", true, false))
	assert.Equal(t, 3, hw.Dirs(), "directories watched: /, /src, /m")

	l.mu.Lock()
	for _, c := range l.got {
		assert.NotContains(t, c.Path, "/.git/", "a change under a skipped directory: %v", c)
		assert.NotContains(t, c.Path, barrierPrefix, "a barrier's file reported: %v", c)
		assert.NotEqual(t, "/.git", c.Path, "a change in the skipped directory itself: %v", c)
	}
	l.mu.Unlock()
	entries, err := os.ReadDir(filepath.Join(root, ".git"))
	require.NoError(t, err)
	assert.Len(t, entries, 2, "barrier files left: %v", entries)

	// Without a barrier directory there is no Barrier.
	_, plain, _ := watchT(t, root)
	assert.ErrorIs(t, plain.Barrier(t.Context()), ErrNoBarrier)
}

// TestWatchMade: a directory its maker has the watch hold at once
// (WatchMade) is watched with what it already holds, its creation is
// reported as a plain create (not Lost), and what is made in it from
// then on is reported one by one. A directory the watch already holds,
// one that is not there, a file, the root and a directory reached
// through a link are refused, and their creation keeps its Lost report.
func TestWatchMade(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, "d"), 0o755))
	require.NoError(t, os.Symlink("d", filepath.Join(root, "link")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "file"), nil, 0o644))
	fsys, err := New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	// The report of /gate holds the watch's loop until gate is closed:
	// the reports after it (the creation of /m) wait behind it.
	l, gate, held := &hostLog{}, make(chan struct{}), make(chan struct{})
	var open sync.Once
	hw, err := fsys.WatchHost(func(c HostChange) {
		if c.Path == "/gate" {
			close(held)
			<-gate
		}
		l.add(c)
	})
	require.NoError(t, err)
	t.Cleanup(func() { hw.Close() })
	t.Cleanup(func() { open.Do(func() { close(gate) }) })
	require.Equal(t, 2, hw.Dirs(), "/ and /d")

	// Made, with a directory and a file in it (another program's) before
	// the watch holds it.
	require.NoError(t, os.WriteFile(filepath.Join(root, "gate"), nil, 0o644))
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		require.Fail(t, "the creation of /gate was not reported")
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "m", "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "m", "early"), nil, 0o644))
	made, err := hw.WatchMade("/m")
	require.NoError(t, err)
	assert.True(t, made, "a directory made and not yet reported")
	open.Do(func() { close(gate) })
	assert.Equal(t, 4, hw.Dirs(), "/, /d, /m and /m/sub watched when WatchMade returns")
	l.waitFor(t, "mkdir /m, not Lost", func(c HostChange) bool {
		return c.Path == "/m" && c.Entry && !c.Lost && c.Op == HostCreated
	})
	require.NoError(t, os.WriteFile(filepath.Join(root, "m", "sub", "f"), nil, 0o644))
	l.waitFor(t, "create of /m/sub/f", is("/m/sub/f", true, false))
	l.mu.Lock()
	for _, c := range l.got {
		assert.False(t, c.Path == "/m" && c.Lost, "the creation of /m reported Lost: %v", c)
	}
	l.mu.Unlock()

	// Watched already: the report came first.
	require.NoError(t, os.Mkdir(filepath.Join(root, "x"), 0o755))
	l.waitFor(t, "mkdir /x, Lost", is("/x", true, true))
	made, err = hw.WatchMade("/x")
	require.NoError(t, err)
	assert.False(t, made, "a directory the watch holds already")

	for _, p := range []string{"/", "/missing", "/file", "/d"} {
		made, err := hw.WatchMade(p)
		require.NoError(t, err, p)
		assert.False(t, made, p)
	}
	// Through a link: the host's name of the directory is another.
	require.NoError(t, os.Mkdir(filepath.Join(root, "d", "y"), 0o755))
	made, err = hw.WatchMade("/link/y")
	require.NoError(t, err)
	assert.False(t, made, "a directory reached through a link")
	l.waitFor(t, "mkdir /d/y, Lost", is("/d/y", true, true))

	// The report of a creation that is watching the directory already
	// (it will report it Lost) wins over WatchMade, even before its walk
	// has the directory watched.
	reached, resume := make(chan struct{}), make(chan struct{})
	hook := func(dir string) {
		if filepath.Base(dir) == "r" {
			close(reached)
			<-resume
		}
	}
	beforeWalkForTest.Store(&hook)
	t.Cleanup(func() { beforeWalkForTest.Store(nil) })
	require.NoError(t, os.Mkdir(filepath.Join(root, "r"), 0o755))
	select {
	case <-reached:
	case <-time.After(10 * time.Second):
		close(resume)
		require.Fail(t, "the creation of /r was not handled")
	}
	made, err = hw.WatchMade("/r")
	close(resume)
	require.NoError(t, err)
	assert.False(t, made, "a directory whose creation is being reported")
	l.waitFor(t, "mkdir /r, Lost", is("/r", true, true))
}

// TestWatchMadeRace: directories made one by one, each handed to
// WatchMade at once while the watch's loop is idle (it reads the
// creation at once, racing WatchMade): whichever wins, WatchMade's answer
// and the report agree (true: a plain create; false: Lost), and nothing
// is left waiting for a report.
func TestWatchMadeRace(t *testing.T) {
	root := t.TempDir()
	_, hw, l := watchT(t, root)
	won := 0
	for i := range 100 {
		p := fmt.Sprintf("/d%d", i)
		require.NoError(t, os.Mkdir(filepath.Join(root, p), 0o755))
		made, err := hw.WatchMade(p)
		require.NoError(t, err)
		if made {
			won++
		}
		l.waitFor(t, "mkdir "+p, is(p, true, !made))
		time.Sleep(time.Millisecond) // the loop goes idle: it reads the next creation at once
	}
	hw.mu.Lock()
	defer hw.mu.Unlock()
	assert.Empty(t, hw.made, "directories still waiting for the report of their creation")
	assert.Empty(t, hw.walking)
	assert.Equal(t, 101, len(hw.dirs), "every directory watched")
	t.Logf("WatchMade first for %d of 100", won)
}

// TestWatchShortLivedDirs: directories another program makes and at once
// removes (a tool's temporary directories) leave the watch complete: a
// directory gone before its walk is skipped (its removal is reported),
// not taken for one that could not be watched.
func TestWatchShortLivedDirs(t *testing.T) {
	root := t.TempDir()
	_, hw, l := watchT(t, root)
	for i := range 1000 {
		d := filepath.Join(root, fmt.Sprintf("tmp%d", i))
		require.NoError(t, os.Mkdir(d, 0o755))
		if i%3 == 0 {
			time.Sleep(time.Duration(i%50) * time.Microsecond)
		}
		require.NoError(t, os.Remove(d))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "last"), nil, 0o644))
	l.waitFor(t, "create of /last", is("/last", true, false)) // every earlier event handled
	assert.True(t, hw.Complete(), "the watch after directories came and went")
}
