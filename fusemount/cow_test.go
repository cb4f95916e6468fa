package fusemount

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/julyfs/julyfs/third_party/go-fuse/posixtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/cow"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
)

// The copy-on-write tree (vfs/cow) through the mount: the posixtest
// subset, the shell tools, whiteouts and opaque directories, git.

func newCow(t testing.TB, base vfs.FileSystem) *cow.FS {
	t.Helper()
	c, err := cow.Open(base, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// cowBases are the bases the posix cases put a layer over (the cases
// expect an empty tree): a temp tree and a host directory.
func cowBases(t *testing.T) map[string]func() vfs.FileSystem {
	return map[string]func() vfs.FileSystem{
		"temp":  func() vfs.FileSystem { return temp.MustNew(nil) },
		"local": func() vfs.FileSystem { return newLocal(t, t.TempDir()) },
	}
}

func TestPosixCow(t *testing.T) {
	requireFUSE(t)
	for name, base := range cowBases(t) {
		t.Run(name, func(t *testing.T) {
			for _, c := range posixCases {
				t.Run(c, func(t *testing.T) {
					if posixtest.All[c] == nil {
						require.Failf(t, "unknown posixtest case", "posixtest has no %s", c)
					}
					s := mountT(t, newCow(t, base()).Tree(), Options{})
					runChild(t, "TestPosixChild", "JULYFS_POSIX_CASE="+c, "JULYFS_MNT="+s.Dir())
				})
			}
		})
	}
}

// TestShellCow: shell tools agree with the API on a layer over a host
// directory, half of the fixture changed in the layer.
func TestShellCow(t *testing.T) {
	base := newLocal(t, t.TempDir())
	seedUnder(t, base, "/")
	c := newCow(t, base)
	ctx := t.Context()
	require.NoError(t, c.Write(ctx, "/src/a.go", []byte("package a\n// TODO changed in the layer\n")))
	require.NoError(t, c.Write(ctx, "/new/n.txt", []byte("new TODO\n")))
	require.NoError(t, c.Delete(ctx, "/src/a-b.txt"))
	testShellAgrees(t, c.Tree(), "/", true, true)
}

// TestCowRemoveDirThenMkdir: rm -rf of a base directory and mkdir of the
// same name shows an empty directory (opaque); the host is untouched.
func TestCowRemoveDirThenMkdir(t *testing.T) {
	dir := t.TempDir()
	base := newLocal(t, dir)
	seedUnder(t, base, "/")
	s := mountT(t, newCow(t, base).Tree(), Options{})
	out := sh(t, `rm -rf "$M/src" && mkdir "$M/src" && ls -A "$M/src"; echo end; ls "$M"`, "M="+s.Dir())
	assert.Equal(t, "end\nREADME.md\nbin.dat\nempty.txt\nsrc\nz\n", out)
	out = sh(t, `echo x > "$M/src/a.go"; find "$M/src" | sort`, "M="+s.Dir())
	assert.Equal(t, s.Dir()+"/src\n"+s.Dir()+"/src/a.go\n", out)
	data, err := os.ReadFile(filepath.Join(dir, "src/sub/deep/f.txt"))
	require.NoError(t, err)
	assert.Equal(t, "deep\n", string(data), "the host keeps the base's files")
}

// TestModesAndTimesCow: chmod, touch and executables through a layer.
func TestModesAndTimesCow(t *testing.T) {
	base := newLocal(t, t.TempDir())
	seedUnder(t, base, "/")
	s := mountT(t, newCow(t, base).Tree(), Options{})
	out := sh(t, `printf '#!/bin/sh\necho ran\n' > "$M/script.sh"
chmod +x "$M/script.sh"
"$M/script.sh"
touch -d 2020-01-02 "$M/script.sh" "$M/README.md"
mkdir "$M/d"; chmod 700 "$M/d"; touch -d '2019-05-06 07:08:09.5' "$M/d"
chmod 600 "$M/src"
stat -c '%a %Y' "$M/script.sh" "$M/d" "$M/README.md"; stat -c %a "$M/src"; cat "$M/README.md"`, "M="+s.Dir(), "TZ=UTC")
	assert.Equal(t, "ran\n755 1577923200\n700 1557126489\n644 1577923200\n600\nhello\nTODO: one\n", out)
}

// TestGitCloneCow: git clone into a layer and git status is clean.
func TestGitCloneCow(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	base := newLocal(t, t.TempDir())
	s := mountT(t, newCow(t, base).Tree(), Options{})
	work := t.TempDir()
	env := []string{"M=" + s.Dir(), "W=" + work, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + work}
	sh(t, `cd "$W"; git init -q src; cd src
mkdir -p bin lib/sub; printf '#!/bin/sh\necho tool\n' > bin/tool; chmod +x bin/tool
echo lib > lib/sub/x.txt; ln -s ../lib/sub/x.txt bin/x; ln -s lib/sub libsub; ln -s nowhere dangling
git add -A; git commit -qm one; cd ..; git clone -q --bare src bare.git`, env...)
	out := sh(t, `git clone -q "$W/bare.git" "$M/repo"; cd "$M/repo"; git status --porcelain; bin/tool; cat bin/x libsub/x.txt; echo more >> lib/sub/x.txt; git status --porcelain`, env...)
	assert.Equal(t, "tool\nlib\nlib\n M lib/sub/x.txt\n", out)
}

// TestHostChangesCow: a layer over a local: tree is watched as the tree
// alone is: the base's entries stay cached past the one-second default,
// a change on the host to a file the layer does not shadow shows
// promptly, one to a file the layer shadows does not show at all, and a
// change to the layer through the API shows promptly.
func TestHostChangesCow(t *testing.T) {
	requireFUSE(t)
	root := hostDir(t, map[string]string{"d/a.txt": "one\n", "d/b.txt": "bee\n", "d/c.txt": "see\n"})
	lfs, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { lfs.Close() })
	base := &hostCounter{FS: lfs}
	c := newCow(t, base)
	ctx := t.Context()
	require.NoError(t, c.Write(ctx, "/d/c.txt", []byte("layer\n")))
	s := mountT(t, c.Tree(), Options{})
	require.Eventually(t, s.m.hostOK.Load, 10*time.Second, 10*time.Millisecond, "the base's host directory watched")
	env := "M=" + s.Dir()
	host := func(p string) string { return filepath.Join(root, p) }

	require.Equal(t, "a.txt\nb.txt\nc.txt\none\n", sh(t, `ls "$M/d"; cat "$M/d/a.txt"; stat "$M/d/b.txt" >/dev/null`, env))
	time.Sleep(1300 * time.Millisecond) // past DefaultEntryTimeout and DefaultAttrTimeout
	before := base.n.Load()
	require.Equal(t, "4\n", sh(t, `stat -c %s "$M/d/b.txt"`, env))
	assert.Zero(t, base.n.Load()-before, "Stat calls that reached the base for a cached entry after 1.3 s")

	require.NoError(t, os.WriteFile(host("d/a.txt"), []byte("two, longer\n"), 0o644))
	eventually(t, "an edit on the host", `cat "$M/d/a.txt"`, "two, longer\n", env)
	require.NoError(t, os.WriteFile(host("d/new.txt"), []byte("new\n"), 0o644))
	eventually(t, "a create on the host", `ls "$M/d"; cat "$M/d/new.txt" 2>&1`, "a.txt\nb.txt\nc.txt\nnew.txt\nnew\n", env)
	require.NoError(t, os.Remove(host("d/b.txt")))
	eventually(t, "a delete on the host", `ls "$M/d"; stat "$M/d/b.txt" >/dev/null 2>&1 || echo gone`, "a.txt\nc.txt\nnew.txt\ngone\n", env)

	require.NoError(t, os.WriteFile(host("d/c.txt"), []byte("host edit of a shadowed file\n"), 0o644))
	require.NoError(t, c.Write(ctx, "/d/a.txt", []byte("layer edit\n")))
	eventually(t, "an edit of the layer through the API", `cat "$M/d/a.txt" "$M/d/c.txt"`, "layer edit\nlayer\n", env)
}
