//go:build linux

package plugins_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

// trickyTree makes a host directory with every kind of name a beneath
// resolution could get wrong, and a directory outside it with a secret.
// It returns the root and, by path, whether the host may read the file
// itself (a regular file the kernel resolves beneath the root, following
// only relative links that stay inside): true, or false where the plugin
// must answer (directories, missing names, links with absolute targets
// even inside the root, links out, loops, FIFOs).
func trickyTree(t *testing.T) (root string, host map[string]bool) {
	t.Helper()
	root = t.TempDir()
	outside := t.TempDir()
	w := func(name, data string) {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	ln := func(target, name string) { require.NoError(t, os.Symlink(target, filepath.Join(root, name))) }
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("secret\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(outside, "dir"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "dir", "in.txt"), []byte("outside dir\n"), 0o644))

	w("file.txt", "file\n")
	w("empty", "")
	w("sub/in.txt", "sub in\n")
	w("sub/deep/x.txt", "deep\n")
	w("a b\nc\x01.txt", "odd name\n")
	w("caf\xe9.txt", "not utf-8\n")
	w(".julyfs-tmp-left", "a writer's temporary file\n")
	ln("sub/in.txt", "rel")
	ln("sub", "dirlink")
	ln("../file.txt", "sub/up")
	ln("../../file.txt", "sub/deep/up2")
	ln("rel", "chain")
	ln(filepath.Join(root, "file.txt"), "abs-in")
	ln(filepath.Join(root, "sub"), "abs-dir-in")
	ln(filepath.Join(outside, "secret"), "abs-out")
	ln("../"+filepath.Base(outside)+"/secret", "rel-out")
	ln(filepath.Join(outside, "dir"), "abs-dir-out")
	ln("../../"+filepath.Base(outside)+"/secret", "sub/rel-out2")
	ln("/proc/self/root/etc/hostname", "magic")
	ln("/proc/self/cwd", "magic-dir")
	ln("nothing-here", "dangling")
	ln("loop-b", "loop-a")
	ln("loop-a", "loop-b")
	ln(".", "dot")
	ln("..", "dotdot")
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644))
	ln("fifo", "fifo-link")
	// A hard link inside the root to a file created outside: a name
	// beneath the root, so the tree reads it and so may the host.
	require.NoError(t, os.WriteFile(filepath.Join(outside, "hard"), []byte("hard\n"), 0o644))
	require.NoError(t, os.Link(filepath.Join(outside, "hard"), filepath.Join(root, "hard")))

	host = map[string]bool{
		"/file.txt": true, "/empty": true, "/sub/in.txt": true, "/sub/deep/x.txt": true,
		"/a b\nc\x01.txt": true, "/caf\xe9.txt": true, "/.julyfs-tmp-left": true,
		"/rel": true, "/dirlink/in.txt": true, "/dirlink/deep/x.txt": true, "/sub/up": true,
		"/sub/deep/up2": true, "/chain": true, "/dot/file.txt": true, "/dot/dot/sub/in.txt": true,
		"/hard": true, "/sub/../file.txt": true, "/../file.txt": true, "//sub//in.txt": true,
		"sub/in.txt": true, "/sub/./deep/../in.txt": true, "/dirlink/../file.txt": true,
		"/sub/deep/up2/": true, // Clean drops the slash; the name is a file

		"/": false, "/sub": false, "/dirlink": false, "/sub/deep": false, "/dot": false,
		"/missing": false, "/sub/missing": false, "/file.txt/child": false, "/rel/child": false,
		"/abs-in": false, "/abs-dir-in/in.txt": false, // inside, but an absolute target: the plugin resolves those by hand
		"/abs-out": false, "/rel-out": false, "/abs-dir-out/in.txt": false, "/sub/rel-out2": false,
		"/magic": false, "/magic-dir/file.txt": false, "/dangling": false, "/loop-a": false,
		"/dotdot/" + "file.txt": false, "/dotdot/" + filepath.Base(root) + "/file.txt": false,
		"/fifo": false, "/fifo-link": false, "/" + strings.Repeat("n", 300): false,
		"/bad\x00name": false,
	}
	return root, host
}

// TestBeneathEquivalence compares the host's own reads beneath a vfs/local
// tree's root directory with the tree's answers in process, on a tree of
// links in and out of the root, loops, FIFOs, odd names, and "..": the
// host reads exactly the paths it may (a regular file resolved beneath the
// root), and those read exactly what vfs/local reads; nothing outside the
// root is ever read by the host.
func TestBeneathEquivalence(t *testing.T) {
	dir, host := trickyTree(t)
	in, err := local.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { in.Close() })
	root := in.BeneathDir()
	require.NotNil(t, root, "vfs/local declares no root directory")
	checkBeneath(t, in, root, host, beneathReader{plugins.ReadBeneath, plugins.ReadAtBeneath})
	// What the tree does read among the paths left to the plugin (links
	// with an absolute target inside the root): the plugin reads them.
	data, err := in.Read(t.Context(), "/abs-in")
	require.NoError(t, err)
	assert.Equal(t, "file\n", string(data))
}

// beneathReader is a host's way to read beneath a root directory.
type beneathReader struct {
	read   func(root *os.File, p string) ([]byte, bool)
	readAt func(root *os.File, p string, b []byte, off int64) (n int, eof, ok bool)
}

// checkBeneath checks r against the tree in on the tricky tree: r reads
// exactly the paths host says it may, and those as the tree does.
func checkBeneath(t assert.TestingT, in *local.FS, root *os.File, host map[string]bool, r beneathReader) {
	ctx := context.Background()
	for p, want := range host {
		got, ok := r.read(root, p)
		assert.Equal(t, want, ok, "%q: the host reads it itself", p)
		inData, inErr := in.Read(ctx, p)
		if ok {
			if assert.NoError(t, inErr, "%q: the host read a file the tree refuses", p) {
				assert.Equal(t, inData, got, "%q", p)
			}
			assert.NotContains(t, string(got), "secret", p)
			assert.NotContains(t, string(got), "outside", p)
		}
		for _, rg := range []struct{ off, n int64 }{{0, 3}, {2, 100}, {0, 0}, {100, 4}} {
			b := make([]byte, rg.n)
			n, eof, ok := r.readAt(root, p, b, rg.off)
			assert.Equal(t, want, ok, "%q: ReadAt: the host reads it itself", p)
			if !ok {
				continue
			}
			wb := make([]byte, rg.n)
			wn, werr := in.ReadAt(ctx, p, wb, rg.off)
			if werr != nil && werr != io.EOF {
				assert.Fail(t, "the host read a file the tree refuses", "%q: %v", p, werr)
				continue
			}
			assert.Equal(t, wn, n, "%q at %d: bytes", p, rg.off)
			assert.Equal(t, werr == io.EOF, eof, "%q at %d: EOF", p, rg.off)
			assert.Equal(t, wb[:wn], b[:n], "%q at %d", p, rg.off)
		}
	}
}

// mutantOpen is an open beneath the root with one of local.OpenBeneath's
// rules broken: resolve in place of RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS,
// and any kind of file answered unless regularOnly. (A mutant without
// O_NONBLOCK would hang on the FIFO rather than fail.)
func mutantOpen(resolve uint64, regularOnly bool) beneathReader {
	open := func(root *os.File, p string) (int, int64, bool) {
		p = vfs.Clean(p)
		if p == "/" {
			return -1, 0, false
		}
		fd, err := unix.Openat2(int(root.Fd()), p[1:], &unix.OpenHow{
			Flags:   uint64(unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC),
			Resolve: resolve,
		})
		if err != nil {
			return -1, 0, false
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || regularOnly && st.Mode&unix.S_IFMT != unix.S_IFREG {
			unix.Close(fd)
			return -1, 0, false
		}
		return fd, st.Size, true
	}
	return beneathReader{
		read: func(root *os.File, p string) ([]byte, bool) {
			fd, size, ok := open(root, p)
			if !ok {
				return nil, false
			}
			defer unix.Close(fd)
			return plugins.ReadFD(fd, size)
		},
		readAt: func(root *os.File, p string, b []byte, off int64) (int, bool, bool) {
			fd, _, ok := open(root, p)
			if !ok {
				return 0, false, false
			}
			defer unix.Close(fd)
			return plugins.ReadAtFD(fd, b, off)
		},
	}
}

// failures counts the failures a check reports.
type failures struct{ n int }

func (f *failures) Errorf(string, ...any) { f.n++ }

// TestBeneathEquivalenceCatches: checkBeneath fails on opens that break
// one rule of local.OpenBeneath each, and passes on the rule itself
// written out, so the equivalence test has teeth.
func TestBeneathEquivalenceCatches(t *testing.T) {
	dir, host := trickyTree(t)
	in, err := local.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { in.Close() })
	root := in.BeneathDir()
	require.NotNil(t, root)
	rule := uint64(unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS)
	for _, c := range []struct {
		name  string
		r     beneathReader
		fails bool
	}{
		{"the rule", mutantOpen(rule, true), false},
		{"no RESOLVE_BENEATH", mutantOpen(unix.RESOLVE_NO_MAGICLINKS, true), true},
		{"no resolve rules", mutantOpen(0, true), true},
		{"no regular-file check", mutantOpen(rule, false), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f failures
			checkBeneath(&f, in, root, host, c.r)
			if c.fails {
				assert.NotZero(t, f.n, "the check passes an open with %s", c.name)
			} else {
				assert.Zero(t, f.n, "the check fails the rule itself")
			}
		})
	}
}

// TestBeneathThroughPlugin reads the tricky tree through a plugin serving
// vfs/local: every Read and ReadAt answers what the tree answers in
// process (contents and error strings), the host reading itself exactly
// the paths it may; then files are replaced, turned into directories,
// links and FIFOs, and deleted between reads, and the answers still agree.
func TestBeneathThroughPlugin(t *testing.T) {
	dir, host := trickyTree(t)
	in, err := local.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { in.Close() })
	for name, cfg := range map[string]plugins.Config{"HostDir": {}, "NoHostDir": {NoHostDir: true}} {
		t.Run(name, func(t *testing.T) {
			cfg.Args = map[string]string{"mode": "local", "dir": dir}
			fsys := open(t, cfg)
			ra, ok := fsys.(vfs.RangeReader)
			require.True(t, ok, "a vfs/local tree through a plugin has ReadAt")
			want := int64(0)
			for p, h := range host {
				if strings.ContainsRune(p, 0) {
					continue // not a name the wire's paths may carry to the tree
				}
				compareRead(t, in, fsys, p)
				compareReadAt(t, in, ra, p)
				if h {
					want += 2
				}
			}
			if cfg.NoHostDir {
				assert.Zero(t, plugins.BeneathReads(fsys))
			} else {
				assert.Equal(t, want, plugins.BeneathReads(fsys), "reads the host answered itself")
			}

			f := filepath.Join(dir, "changing")
			steps := []struct {
				name   string
				change func() error
			}{
				{"a file", func() error { return os.WriteFile(f, []byte("one\n"), 0o644) }},
				{"replaced", func() error {
					tmp := filepath.Join(dir, ".tmp-changing")
					return errors.Join(os.WriteFile(tmp, []byte("two, longer\n"), 0o644), os.Rename(tmp, f))
				}},
				{"rewritten in place", func() error { return os.WriteFile(f, []byte("3\n"), 0o644) }},
				{"a link out", func() error {
					return errors.Join(os.Remove(f), os.Symlink("/etc/hostname", f))
				}},
				{"a relative link out", func() error {
					return errors.Join(os.Remove(f), os.Symlink("../"+filepath.Base(t.TempDir())+"/x", f))
				}},
				{"a link in", func() error { return errors.Join(os.Remove(f), os.Symlink("sub/in.txt", f)) }},
				{"a directory", func() error { return errors.Join(os.Remove(f), os.Mkdir(f, 0o755)) }},
				{"a FIFO", func() error { return errors.Join(os.Remove(f), syscall.Mkfifo(f, 0o644)) }},
				{"deleted", func() error { return os.Remove(f) }},
				{"written through the tree", func() error { return fsys.Write(t.Context(), "/changing", []byte("through\n")) }},
				{"a parent replaced by a link out", func() error {
					return errors.Join(os.Rename(filepath.Join(dir, "sub"), filepath.Join(dir, "sub.old")),
						os.Symlink(filepath.Join(dir, "abs-dir-out"), filepath.Join(dir, "sub")))
				}},
				{"the parent back", func() error {
					return errors.Join(os.Remove(filepath.Join(dir, "sub")), os.Rename(filepath.Join(dir, "sub.old"), filepath.Join(dir, "sub")))
				}},
			}
			for _, s := range steps {
				require.NoError(t, s.change(), s.name)
				for _, p := range []string{"/changing", "/sub/in.txt", "/rel", "/dirlink/in.txt"} {
					t.Run(fmt.Sprintf("%s%s", s.name, p), func(t *testing.T) {
						compareRead(t, in, fsys, p)
						compareReadAt(t, in, ra, p)
					})
				}
			}
			require.NoError(t, os.RemoveAll(f))
		})
	}
}

// compareRead checks that fsys reads p as the tree in process does.
func compareRead(t *testing.T, in *local.FS, fsys vfs.FileSystem, p string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	want, wantErr := in.Read(ctx, p)
	got, err := fsys.Read(ctx, p)
	if wantErr != nil {
		assert.EqualError(t, err, wantErr.Error(), "%q", p)
		return
	}
	if assert.NoError(t, err, "%q", p) {
		assert.True(t, bytes.Equal(want, got), "%q: %q, want %q", p, got, want)
	}
}

// compareReadAt checks that ra reads 4 bytes of p at 1 as the tree in
// process does.
func compareReadAt(t *testing.T, in *local.FS, ra vfs.RangeReader, p string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	want := make([]byte, 4)
	wn, wantErr := in.ReadAt(ctx, p, want, 1)
	got := make([]byte, 4)
	n, err := ra.ReadAt(ctx, p, got, 1)
	if wantErr != nil && wantErr != io.EOF {
		assert.EqualError(t, err, wantErr.Error(), "%q", p)
		return
	}
	assert.Equal(t, wantErr, err, "%q", p)
	assert.Equal(t, want[:wn], got[:n], "%q", p)
}
