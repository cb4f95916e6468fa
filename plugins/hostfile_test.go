package plugins_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs/local"
)

// TestHostFileRead reads a host directory through a plugin whose tree
// hands out its open files (plugins.OSFile): a large file is read by the
// host from the plugin's descriptor, and every answer (contents and
// errors) is the one the same tree gives in process, whichever way the
// contents travel.
func TestHostFileRead(t *testing.T) {
	dir := t.TempDir()
	big := make([]byte, 5<<20+17)
	_, err := rand.Read(big)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "edge.bin"), big[:256<<10], 0o644)) // the smallest handed over
	require.NoError(t, os.WriteFile(filepath.Join(dir, "small.txt"), []byte("small\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "in.bin"), big[:1<<20], 0o644))
	require.NoError(t, os.Symlink("sub/in.bin", filepath.Join(dir, "link.bin")))
	outside := filepath.Join(t.TempDir(), "secret.bin")
	require.NoError(t, os.WriteFile(outside, big[:300<<10], 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "escape.bin")))

	in, err := local.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { in.Close() })
	paths := []string{"/big.bin", "/edge.bin", "/small.txt", "/sub/in.bin", "/link.bin", "/escape.bin", "/sub", "/missing.bin", "/sub/../big.bin"}

	for name, cfg := range map[string]plugins.Config{"HostDir": {}, "HostFile": {NoHostDir: true}, "NoHostFile": {NoHostFile: true}} {
		t.Run(name, func(t *testing.T) {
			cfg.Args = map[string]string{"mode": "hostfiles", "dir": dir}
			fsys := open(t, cfg)
			for _, p := range paths {
				want, wantErr := in.Read(t.Context(), p)
				got, err := fsys.Read(t.Context(), p)
				if wantErr != nil {
					assert.EqualError(t, err, wantErr.Error(), p)
					continue
				}
				if assert.NoError(t, err, p) {
					assert.True(t, bytes.Equal(want, got), "%s: %d bytes, want %d", p, len(got), len(want))
				}
			}
			_, _, _, hostFile := plugins.Ways(fsys)
			beneath := plugins.BeneathReads(fsys)
			switch name {
			case "HostDir":
				// big, edge, small, sub/in, link, sub/../big; escape.bin is
				// an absolute link out, which the plugin refuses.
				assert.Equal(t, int64(6), beneath, "reads beneath the root")
				assert.Zero(t, hostFile)
			case "NoHostFile":
				assert.Zero(t, hostFile)
				assert.Zero(t, beneath)
			default:
				assert.Zero(t, beneath)
				// big, edge, sub/in, link, sub/../big; not small, not escape.
				assert.Equal(t, int64(5), hostFile, "reads from the plugin's descriptor")
				assert.False(t, plugins.NoHostFile(fsys), "fell back from host files")
			}
		})
	}
}

// TestHostFileReplaced: a file replaced (renamed over) on the host
// between two reads is read anew: the host opens the plugin's descriptor
// of the file the plugin opened for this call.
func TestHostFileReplaced(t *testing.T) {
	dir := t.TempDir()
	fsys := open(t, plugins.Config{NoHostDir: true, Args: map[string]string{"mode": "hostfiles", "dir": dir}})
	for i := range 3 {
		data := bytes.Repeat([]byte{byte('a' + i)}, 1<<20+i)
		tmp := filepath.Join(dir, ".tmp")
		require.NoError(t, os.WriteFile(tmp, data, 0o644))
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, "f.bin")))
		got, err := fsys.Read(t.Context(), "/f.bin")
		require.NoError(t, err)
		assert.True(t, bytes.Equal(data, got), "version %d", i)
	}
	_, _, _, hostFile := plugins.Ways(fsys)
	assert.Equal(t, int64(3), hostFile)
}

// TestHostFileHeld: the host keeps the descriptor of a large file it read
// and reads it again when the plugin says the path still names that file;
// every answer equals vfs/local's in process, whatever happened to the
// file between two reads: rewritten in place (same inode, other bytes,
// longer or shorter), truncated, replaced by a rename, shrunk under
// 256 KiB, deleted, turned into a directory. The same steps read beneath
// the tree's root directory by the host (HostDir) answer the same.
func TestHostFileHeld(t *testing.T) {
	for name, cfg := range map[string]plugins.Config{"HostFile": {NoHostDir: true}, "HostDir": {}} {
		t.Run(name, func(t *testing.T) { hostFileHeld(t, cfg) })
	}
}

func hostFileHeld(t *testing.T, cfg plugins.Config) {
	dir := t.TempDir()
	in, err := local.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { in.Close() })
	cfg.Args = map[string]string{"mode": "hostfiles", "dir": dir}
	fsys := open(t, cfg)
	p := filepath.Join(dir, "f.bin")
	data := func(n int, seed byte) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = seed + byte(i%251)
		}
		return b
	}
	steps := []struct {
		name   string
		change func() error
	}{
		{"first", func() error { return os.WriteFile(p, data(1<<20, 1), 0o644) }},
		{"again", func() error { return nil }},
		{"rewritten in place", func() error { return os.WriteFile(p, data(1<<20, 2), 0o644) }},
		{"rewritten longer", func() error { return os.WriteFile(p, data(2<<20+5, 3), 0o644) }},
		{"truncated", func() error { return os.Truncate(p, 300<<10) }},
		{"appended", func() error {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			_, err = f.Write(data(100<<10, 4))
			return errors.Join(err, f.Close())
		}},
		{"replaced", func() error {
			tmp := filepath.Join(dir, ".tmp")
			return errors.Join(os.WriteFile(tmp, data(1<<20+1, 5), 0o644), os.Rename(tmp, p))
		}},
		{"replaced by a large one", func() error { // held, read after the plugin's answer
			tmp := filepath.Join(dir, ".tmp")
			return errors.Join(os.WriteFile(tmp, data(17<<20, 9), 0o644), os.Rename(tmp, p))
		}},
		{"large one truncated", func() error { return os.Truncate(p, 16<<20+1) }},
		{"shrunk small", func() error { return os.Truncate(p, 100) }},
		{"large again", func() error { return os.WriteFile(p, data(512<<10, 6), 0o644) }},
		{"deleted", func() error { return os.Remove(p) }},
		{"a directory", func() error { return os.Mkdir(p, 0o755) }},
		{"a file again", func() error { return errors.Join(os.Remove(p), os.WriteFile(p, data(1<<20, 7), 0o644)) }},
		{"written through the tree", func() error { return fsys.Write(t.Context(), "/f.bin", data(700<<10, 8)) }},
	}
	for _, s := range steps {
		require.NoError(t, s.change(), s.name)
		want, wantErr := in.Read(t.Context(), "/f.bin")
		for range 2 {
			got, err := fsys.Read(t.Context(), "/f.bin")
			if wantErr != nil {
				assert.EqualError(t, err, wantErr.Error(), s.name)
				continue
			}
			if assert.NoError(t, err, s.name) {
				assert.True(t, bytes.Equal(want, got), "%s: %d bytes, want %d", s.name, len(got), len(want))
			}
		}
	}
	_, _, _, hostFile := plugins.Ways(fsys)
	if cfg.NoHostDir {
		assert.Equal(t, int64(24), hostFile, "reads from a descriptor of the file") // 12 large steps, twice each
		assert.Zero(t, plugins.BeneathReads(fsys))
	} else {
		assert.Zero(t, hostFile)
		assert.Equal(t, int64(26), plugins.BeneathReads(fsys), "reads beneath the root") // 13 steps with a file, twice each
	}
	assert.False(t, plugins.NoHostFile(fsys))
}

// TestHostFileDescriptorsBounded: reading many large files leaves the
// plugin holding no more than the descriptors of the last call (the host
// releases each in its next request) and the host holding at most its
// cache's worth; closing the tree closes the host's.
func TestHostFileDescriptorsBounded(t *testing.T) {
	dir := t.TempDir()
	const files = 80 // more than the host keeps
	content := bytes.Repeat([]byte("x"), 256<<10)
	for i := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.bin", i)), content, 0o644))
	}
	fsys := open(t, plugins.Config{NoHostDir: true, Args: map[string]string{"mode": "hostfiles", "dir": dir}})
	for round := range 2 {
		for i := range files {
			got, err := fsys.Read(t.Context(), fmt.Sprintf("/f%02d.bin", i))
			require.NoError(t, err)
			require.True(t, bytes.Equal(content, got), "round %d file %d", round, i)
		}
	}
	pid := plugins.Unwrap(fsys).Pid()
	require.NotZero(t, pid)
	assert.LessOrEqual(t, openIn(t, pid, dir), 1, "descriptors of the tree's files the plugin still holds")
	held := openIn(t, os.Getpid(), dir)
	assert.Positive(t, held)
	assert.LessOrEqual(t, held, plugins.HeldMax, "descriptors the host holds")
	require.NoError(t, fsys.Close())
	assert.Zero(t, openIn(t, os.Getpid(), dir), "descriptors the host holds after Close")
}

// openIn counts the descriptors of process pid open on files under dir.
func openIn(t *testing.T, pid int, dir string) int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	require.NoError(t, err)
	n := 0
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(target, dir+"/") {
			n++
		}
	}
	return n
}

// TestHostFileConcurrent: reads of the same large files from many
// goroutines while the files are replaced: every read answers one whole
// version.
func TestHostFileConcurrent(t *testing.T) {
	for name, cfg := range map[string]plugins.Config{"HostFile": {NoHostDir: true}, "HostDir": {}} {
		t.Run(name, func(t *testing.T) { hostFileConcurrent(t, cfg) })
	}
}

func hostFileConcurrent(t *testing.T, cfg plugins.Config) {
	dir := t.TempDir()
	version := func(v int) []byte { return bytes.Repeat([]byte{byte('a' + v%26)}, 300<<10+v) }
	for _, name := range []string{"a.bin", "b.bin"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), version(0), 0o644))
	}
	cfg.Args = map[string]string{"mode": "hostfiles", "dir": dir}
	fsys := open(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		for v := 1; v <= 30; v++ {
			for _, name := range []string{"a.bin", "b.bin"} {
				tmp := filepath.Join(dir, ".tmp-"+name)
				if !assert.NoError(t, os.WriteFile(tmp, version(v), 0o644)) || !assert.NoError(t, os.Rename(tmp, filepath.Join(dir, name))) {
					return
				}
			}
		}
	})
	for g := range 4 {
		wg.Go(func() {
			for i := range 40 {
				name := []string{"/a.bin", "/b.bin"}[(g+i)%2]
				got, err := fsys.Read(ctx, name)
				if !assert.NoError(t, err) {
					return
				}
				v := len(got) - 300<<10
				if assert.True(t, v >= 0 && v <= 30, "%s: %d bytes", name, len(got)) {
					assert.True(t, bytes.Equal(version(v), got), "%s: not one whole version", name)
				}
			}
		})
	}
	wg.Wait()
	if !cfg.NoHostDir {
		assert.Equal(t, int64(4*40), plugins.BeneathReads(fsys), "reads beneath the root")
	}
}
