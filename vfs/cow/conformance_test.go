package cow_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/cow"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/readonly"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

// The layer keeps directories the way a host disk does: a base directory
// whose files are all deleted stays until it is removed (RemoveDir).
var opts = vfstest.Options{KeepsEmptyDirs: true}

func open(t testing.TB, base vfs.FileSystem) *cow.FS {
	t.Helper()
	c, err := cow.Open(base, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func tempBase(t testing.TB, files map[string][]byte) vfs.FileSystem {
	t.Helper()
	base, err := temp.New(files)
	require.NoError(t, err)
	return base
}

func localBase(t testing.TB, files map[string][]byte) vfs.FileSystem {
	t.Helper()
	dir := t.TempDir()
	for p, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, data, 0o644))
	}
	base, err := local.New(dir)
	require.NoError(t, err)
	return base
}

func TestConformanceOverTemp(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		return open(t, tempBase(t, files)).Tree()
	}, opts)
}

func TestConformanceOverLocal(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		return open(t, localBase(t, files)).Tree()
	}, opts)
}

func TestConformanceOverReadOnlyBase(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		return open(t, readonly.New(tempBase(t, files))).Tree()
	}, opts)
}

// decoys are base files a layered tree deletes: a layer that forgets a
// whiteout shows them again.
var decoys = map[string][]byte{
	"/src/zz-decoy.ts":        []byte("TODO decoy\n"),
	"/src/nested/deep/old.ts": []byte("deep old TODO\n"),
	"/gone/x.md":              []byte("TODO gone\n"),
	"/gone/sub/y.md":          []byte("gone too\n"),
}

// layered builds files as a layer over a base holding half of them, older
// versions of others, and decoys: the layer writes the rest, deletes the
// decoys and removes their directory, and is reopened from disk, so its
// journal is what serves.
func layered(t testing.TB, files map[string][]byte, fault func(*cow.FS)) vfs.FileSystem {
	t.Helper()
	ctx := context.Background()
	baseFiles := map[string][]byte{}
	i := 0
	for _, p := range sortedKeys(files) {
		switch i % 3 {
		case 0:
			baseFiles[p] = files[p]
		case 1:
			baseFiles[p] = []byte("an older version of " + p + " TODO\n")
		}
		i++
	}
	for p, data := range decoys {
		baseFiles[p] = data
	}
	dir := t.TempDir()
	base := tempBase(t, baseFiles)
	c, err := cow.Open(base, dir)
	require.NoError(t, err)
	for _, p := range sortedKeys(files) {
		if string(baseFiles[p]) != string(files[p]) {
			require.NoError(t, c.Write(ctx, p, files[p]))
		}
	}
	for _, p := range sortedKeys(decoys) {
		if _, ok := files[p]; !ok {
			require.NoError(t, c.Delete(ctx, p))
		}
	}
	for _, d := range []string{"/gone/sub", "/gone"} {
		require.NoError(t, c.RemoveDir(ctx, d))
	}
	require.NoError(t, c.Close())
	c, err = cow.Open(base, dir)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	if fault != nil {
		fault(c)
	}
	return c.Tree()
}

func TestConformanceLayered(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		return layered(t, files, nil)
	}, opts)
}

// TestSuiteCatchesMissingWhiteout: the layered tree with its whiteouts
// ignored must fail the suite's checks that compare a tree with its
// seed.
func TestSuiteCatchesMissingWhiteout(t *testing.T) {
	for _, name := range []string{"List/agreesWithReference", "Glob/agreesWithReference", "Grep/agreesWithReference"} {
		t.Run(name, func(t *testing.T) {
			failures := runCheck(t, name, func(t vfstest.T, files map[string][]byte) vfs.FileSystem {
				return layered(t.(testing.TB), files, cow.IgnoreWhiteouts)
			})
			if assert.NotEmpty(t, failures, "%s passed on a layer that ignores its whiteouts", name) {
				t.Logf("%s: %s", name, failures[0])
			}
		})
	}
}

// runCheck runs the suite's check name on trees from newFS and returns
// its failures.
func runCheck(t *testing.T, name string, newFS vfstest.NewFunc) []string {
	for _, c := range vfstest.Checks(opts) {
		if c.Name != name {
			continue
		}
		r := &recorder{T: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.Run(r, func(_ vfstest.T, files map[string][]byte) vfs.FileSystem { return newFS(r, files) })
		}()
		<-done
		return r.msgs
	}
	t.Fatalf("no check %s", name)
	return nil
}

// recorder is a vfstest.T that records failures instead of failing the
// test, and is a testing.TB for the fixtures' setup.
type recorder struct {
	*testing.T
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}
