package fusemount

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// Every tool below runs in its own process (sh runs each command of a
// script as one): the server never serves its own process.

// TestLinksLocal: ln -s through a local: mount makes a host link that
// readlink, cat and ls -l see as one; a link out of the root reads as
// missing through the tree and through the mount's own resolution, and
// nothing written through it reaches the outside; rm removes the link.
func TestLinksLocal(t *testing.T) {
	outParent := t.TempDir()
	dir, outside := filepath.Join(outParent, "root"), filepath.Join(outParent, "outside")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.Mkdir(outside, 0o755))
	secret := filepath.Join(outside, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("secret\n"), 0o644))
	fsys := newLocal(t, dir) // ../outside from the root names outside on the host
	s := mountT(t, fsys, Options{})
	env := []string{"M=" + s.Dir(), "OUT=" + secret}

	out := sh(t, `echo hi > "$M/a.txt"; mkdir "$M/d"; echo deep > "$M/d/f"
ln -s a.txt "$M/lnk"; ln -s d "$M/dlnk"
readlink "$M/lnk"; cat "$M/lnk"; cat "$M/dlnk/f"; stat -c %F "$M/lnk"
ls -l "$M" | grep '^l' | grep -o '[a-z]*lnk -> .*'`, env...)
	assert.Equal(t, "a.txt\nhi\ndeep\nsymbolic link\ndlnk -> d\nlnk -> a.txt\n", out)
	target, err := os.Readlink(filepath.Join(dir, "lnk"))
	require.NoError(t, err)
	assert.Equal(t, "a.txt", target, "a host link")
	_, stderr, err := shErr(t, `ln -s a.txt "$M/lnk"`, env...)
	assert.Error(t, err)
	assert.Contains(t, stderr, "File exists")

	// Links out of the root: one by an absolute path, one by "..".
	sh(t, `ln -s "$OUT" "$M/abs"; ln -s ../outside/secret "$M/rel"; readlink "$M/rel"`, env...)
	ctx := t.Context()
	for _, p := range []string{"/abs", "/rel"} {
		_, err := fsys.Read(ctx, p)
		assert.ErrorIs(t, err, vfs.ErrNotFound, "Read(%s) through the tree", p)
		fi, err := fsys.Stat(ctx, p)
		require.NoError(t, err)
		assert.False(t, fi.LinkModTime.IsZero(), "the link's own time")
		fi.LinkModTime = time.Time{}
		assert.NotZero(t, fi.LinkIno, "the link's own host inode")
		fi.LinkDev, fi.LinkIno, fi.LinkChangeTime = 0, 0, time.Time{}
		// The link's own owner: the daemon's, which made it.
		assert.Equal(t, vfs.FileInfo{Path: p, Kind: vfs.KindMissing, Link: true,
			LinkUID: uint32(os.Geteuid()), LinkGID: uint32(os.Getegid()), LinkHasOwner: true}, fi)
	}
	// The kernel resolves ../outside from the mount point, where there
	// is no such thing: missing, and a write through it fails.
	_, _, err = shErr(t, `cat "$M/rel"`, env...)
	assert.Error(t, err, "cat through a link out of the root")
	_, _, err = shErr(t, `echo x > "$M/rel"`, env...)
	assert.Error(t, err, "a write through a link out of the root")
	_, _, err = shErr(t, `chmod 777 "$M/rel"`, env...)
	assert.Error(t, err, "chmod through a link out of the root")
	// Through the tree, a write at the link replaces the link.
	require.NoError(t, fsys.Write(ctx, "/abs", []byte("replaced\n")))
	data, err := os.ReadFile(secret)
	require.NoError(t, err)
	assert.Equal(t, "secret\n", string(data), "nothing reached the outside")
	fi, err := os.Stat(secret)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	ents, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Len(t, ents, 1)

	// mv moves a link itself, even one that leads nowhere here.
	assert.Equal(t, "../outside/secret\na.txt\n", sh(t, `mv "$M/rel" "$M/rel2"; mv "$M/lnk" "$M/d/lnk"; readlink "$M/rel2" "$M/d/lnk"`, env...))
	sh(t, `mv "$M/rel2" "$M/rel"; mv "$M/d/lnk" "$M/lnk"`, env...)
	sh(t, `rm "$M/rel" "$M/lnk" "$M/dlnk"`, env...)
	for _, name := range []string{"rel", "lnk", "dlnk"} {
		_, err := os.Lstat(filepath.Join(dir, name))
		assert.True(t, os.IsNotExist(err), "%s removed from the host", name)
	}
	assert.FileExists(t, secret)
	assert.DirExists(t, filepath.Join(dir, "d"))
}

// TestModesAndTimesLocal: chmod +x and touch -d through a local: mount
// land on the host and are there after a remount.
func TestModesAndTimesLocal(t *testing.T) {
	dir := t.TempDir()
	s := mountT(t, newLocal(t, dir), Options{})
	env := []string{"M=" + s.Dir(), "TZ=UTC"}
	out := sh(t, `printf '#!/bin/sh\necho ran\n' > "$M/script.sh"
chmod +x "$M/script.sh"
"$M/script.sh"
touch -d 2020-01-02 "$M/script.sh"
mkdir "$M/d"; chmod 700 "$M/d"; touch -d '2019-05-06 07:08:09.5' "$M/d"
stat -c '%a %Y' "$M/script.sh" "$M/d"`, env...)
	assert.Equal(t, "ran\n755 1577923200\n700 1557126489\n", out)

	fi, err := os.Stat(filepath.Join(dir, "script.sh"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), "executable on the host")
	assert.True(t, fi.ModTime().Equal(time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC)), "host mtime %v", fi.ModTime())
	fi, err = os.Stat(filepath.Join(dir, "d"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	assert.True(t, fi.ModTime().Equal(time.Date(2019, 5, 6, 7, 8, 9, 5e8, time.UTC)), "host mtime %v", fi.ModTime())

	// A file created with a mode gets it on the host (cp, git checkout).
	sh(t, `install -m 750 /dev/null "$M/inst"; (umask 0; python3 -c 'import os; os.close(os.open(os.environ["M"]+"/made", os.O_CREAT|os.O_WRONLY, 0o711))')`, env...)
	for name, want := range map[string]os.FileMode{"inst": 0o750, "made": 0o711} {
		fi, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, want, fi.Mode().Perm(), name)
	}

	// A fresh mount of the same directory shows the same.
	s2 := mountT(t, newLocal(t, dir), Options{})
	out = sh(t, `stat -c '%a %Y' "$M/script.sh" "$M/d"`, "M="+s2.Dir())
	assert.Equal(t, "755 1577923200\n700 1557126489\n", out)
}

// TestGitCloneLocal: a repository with links and executable files cloned
// from a local bare repository into a local: mount is clean for git
// status, and its links and modes are the host's.
func TestGitCloneLocal(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	s := mountT(t, newLocal(t, dir), Options{})
	work := t.TempDir()
	env := []string{"M=" + s.Dir(), "W=" + work, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + work}
	sh(t, `cd "$W"; git init -q src; cd src
mkdir -p bin lib/sub; printf '#!/bin/sh\necho tool\n' > bin/tool; chmod +x bin/tool
echo lib > lib/sub/x.txt; ln -s ../lib/sub/x.txt bin/x; ln -s lib/sub libsub; ln -s nowhere dangling
git add -A; git commit -qm one; cd ..; git clone -q --bare src bare.git`, env...)
	out := sh(t, `git clone -q "$W/bare.git" "$M/repo"; cd "$M/repo"; git status --porcelain; bin/tool; cat bin/x libsub/x.txt; git config --default true core.symlinks; git config core.filemode`, env...)
	assert.Equal(t, "tool\nlib\nlib\ntrue\ntrue\n", out, "git status is clean")

	for name, target := range map[string]string{"bin/x": "../lib/sub/x.txt", "libsub": "lib/sub", "dangling": "nowhere"} {
		got, err := os.Readlink(filepath.Join(dir, "repo", name))
		require.NoError(t, err, name)
		assert.Equal(t, target, got, name)
	}
	fi, err := os.Stat(filepath.Join(dir, "repo/bin/tool"))
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode().Perm()&0o111, "bin/tool is executable on the host")
	// And the host's own git agrees.
	assert.Empty(t, sh(t, `cd "$D"; git status --porcelain`, append(env, "D="+filepath.Join(dir, "repo"))...))
}

// TestCpArchiveLocal: cp -a of a tree with links (to a file, to a
// directory, dangling), modes and times into a local: mount keeps them
// all on the host, links' own times too; the mount lists the copy as the
// host does, and cp -a out of it copies the same tree back.
func TestCpArchiveLocal(t *testing.T) {
	dir, src := t.TempDir(), t.TempDir()
	s := mountT(t, newLocal(t, dir), Options{})
	env := []string{"M=" + s.Dir(), "S=" + src, "TZ=UTC"}
	sh(t, `cd "$S"; mkdir -p t/private t/pub
printf '#!/bin/sh\n' > t/run.sh; chmod 755 t/run.sh
echo s > t/private/key; chmod 600 t/private/key; chmod 700 t/private
echo p > t/pub/readme; chmod 444 t/pub/readme
ln -s pub/readme t/readme-link; ln -s private t/private-link; ln -s /nonexistent t/dangling
touch -h -d 2017-03-04 t/readme-link t/private-link t/dangling; touch -d 2019-01-01 t/run.sh t/private/key t/pub/readme; touch -d 2018-06-01 t/private t/pub t
cp -a t "$M/copy"`, env...)
	list := `cd "$1"; find . ! -type l -printf '%p %y %m %T@\n' | sort; find . -type l -printf '%p -> %l %T@\n' | sort`
	want := sh(t, `f() { `+list+`; }; f "$S/t"`, env...)
	got := sh(t, `f() { `+list+`; }; f "$D"`, append(env, "D="+filepath.Join(dir, "copy"))...)
	assert.Equal(t, want, got, "the host copy")
	assert.Equal(t, 9, len(strings.Split(strings.TrimSpace(want), "\n")), "the listing covers the tree:\n%s", want)
	// Through the mount every link is there, listed as on the host, and
	// cp -a out of the mount copies the same tree back.
	assert.Equal(t, "private\n/nonexistent\npub/readme\n",
		sh(t, `cd "$M/copy"; readlink private-link dangling readme-link`, env...))
	assert.Equal(t, want, sh(t, `f() { `+list+`; }; f "$M/copy"`, env...), "the listing through the mount")
	back := filepath.Join(t.TempDir(), "back")
	sh(t, `cp -a "$M/copy" "$B"`, append(env, "B="+back)...)
	assert.Equal(t, want, sh(t, `f() { `+list+`; }; f "$B"`, append(env, "B="+back)...), "cp -a out of the mount")
}

// TestLinksListed: every link shows in a listing through the mount, as on
// disk, whatever it leads to (a file, a directory, nothing): ls -l shows
// it, find lists it without following it, find -L and ls -L follow what
// resolves, rm removes a dangling one and mv moves one (on temp: too),
// and lstat shows the link's own time, not its target's. On local:,
// temp: and both parts of a union.
func TestLinksListed(t *testing.T) {
	dir := t.TempDir()
	u, err := union.New([]union.Mount{{Prefix: "/repo", FS: newLocal(t, dir)}, {Prefix: "/notes", FS: temp.MustNew(nil)}})
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		fsys vfs.FileSystem
		sub  string
	}{
		"local":       {newLocal(t, t.TempDir()), ""},
		"temp":        {temp.MustNew(nil), ""},
		"union-local": {u, "/repo"},
		"union-temp":  {u, "/notes"},
	} {
		t.Run(name, func(t *testing.T) {
			s := mountT(t, tc.fsys, Options{})
			env := []string{"M=" + s.Dir() + tc.sub, "TZ=UTC", "C=" + filepath.Join(t.TempDir(), "copy")}
			sh(t, `mkdir -p "$M/t/d"; echo a > "$M/t/a.txt"; echo f > "$M/t/d/f"
cd "$M/t"; ln -s a.txt lnk; ln -s d dlnk; ln -s nowhere gone; ln -s ../t loop
touch -d 2020-01-02 a.txt; touch -h -d 2001-02-03 lnk gone dlnk`, env...)
			assert.Equal(t, "dlnk -> d\ngone -> nowhere\nlnk -> a.txt\nloop -> ../t\n",
				sh(t, `ls -l "$M/t" | grep '^l' | sed 's/.* \([a-z]* -> .*\)/\1/'`, env...), "ls -l")
			assert.Equal(t, "./a.txt f\n./d d\n./d/f f\n./dlnk l\n./gone l\n./lnk l\n./loop l\n",
				sh(t, `cd "$M/t"; find . -mindepth 1 -printf '%p %y\n' | sort`, env...), "find")
			// The listing's own type (d_type, which scandir trusts).
			assert.Equal(t, "['dlnk', 'gone', 'lnk', 'loop']\n", sh(t, `cd "$M/t"; python3 -c 'import os; print(sorted(e.name for e in os.scandir(".") if e.is_symlink()))'`, env...))
			out, _, _ := shErr(t, `cd "$M/t"; find -L . -mindepth 1 -printf '%p %y\n' 2>/dev/null | sort`, env...)
			assert.Contains(t, out, "./dlnk/f f\n", "find -L follows a link to a directory")
			assert.Contains(t, out, "./lnk f\n")
			assert.Equal(t, "f\n", sh(t, `ls -L "$M/t/dlnk"`, env...))
			// lstat: the link's own time; stat: the target's.
			assert.Equal(t, "981158400 981158400 1577923200\n",
				sh(t, `stat -c %Y "$M/t/lnk" "$M/t/gone" | tr '\n' ' '; stat -L -c %Y "$M/t/lnk"`, env...))
			// cp -a out of the mount copies every link as a link.
			sh(t, `cp -a "$M/t" "$C"`, env...)
			assert.Equal(t, "./a.txt f\n./d d\n./d/f f\n./dlnk l d\n./gone l nowhere\n./lnk l a.txt\n./loop l ../t\n",
				sh(t, `cd "$C"; find . -mindepth 1 -printf '%p %y %l\n' | sed 's/ $//' | sort`, env...))
			assert.Equal(t, "981158400\n", sh(t, `stat -c %Y "$C/lnk"`, env...), "cp -a keeps the link's own time")
			// mv and rm of dangling links and of a link to a directory.
			sh(t, `cd "$M/t"; mv gone gone2; readlink gone2 >/dev/null; rm gone2 dlnk loop`, env...)
			assert.Equal(t, "./a.txt f\n./d d\n./d/f f\n./lnk l\n",
				sh(t, `cd "$M/t"; find . -mindepth 1 -printf '%p %y\n' | sort`, env...), "after rm")
		})
	}
}

// TestLinksModesTimesTemp: on temp: links, modes and times are the
// tree's own, in memory: ln -s, readlink, cat, chmod +x and run, touch -d,
// all seen through the API too.
func TestLinksModesTimesTemp(t *testing.T) {
	fsys := temp.MustNew(map[string]string{"/a.txt": "hi\n"})
	s := mountT(t, fsys, Options{})
	env := []string{"M=" + s.Dir(), "TZ=UTC"}
	out := sh(t, `ln -s a.txt "$M/lnk"; readlink "$M/lnk"; cat "$M/lnk"; stat -c %F "$M/lnk"
printf '#!/bin/sh\necho ran\n' > "$M/s.sh"; chmod +x "$M/s.sh"; "$M/s.sh"
touch -d 2020-01-02 "$M/a.txt"; stat -c %a "$M/s.sh"; stat -c '%a %Y' "$M/a.txt"`, env...)
	assert.Equal(t, "a.txt\nhi\nsymbolic link\nran\n755\n644 1577923200\n", out)
	ctx := t.Context()
	target, err := fsys.Readlink(ctx, "/lnk")
	require.NoError(t, err)
	assert.Equal(t, "a.txt", target)
	fi, err := fsys.Stat(ctx, "/s.sh")
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode)
	fi, err = fsys.Stat(ctx, "/a.txt")
	require.NoError(t, err)
	assert.True(t, fi.ModTime.Equal(time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC)))
}

// TestLinksModesTimesUnion: a union routes links, modes and times to the
// tree under the path: the host for its local: part, memory for temp:.
func TestLinksModesTimesUnion(t *testing.T) {
	dir := t.TempDir()
	notes := temp.MustNew(map[string]string{"/n.md": "note\n"})
	u, err := union.New([]union.Mount{{Prefix: "/repo", FS: newLocal(t, dir)}, {Prefix: "/notes", FS: notes}})
	require.NoError(t, err)
	s := mountT(t, u, Options{})
	env := []string{"M=" + s.Dir(), "TZ=UTC"}
	out := sh(t, `printf '#!/bin/sh\necho ran\n' > "$M/repo/s.sh"; chmod +x "$M/repo/s.sh"; "$M/repo/s.sh"
ln -s s.sh "$M/repo/l"; readlink "$M/repo/l"; "$M/repo/l"
ln -s n.md "$M/notes/l"; cat "$M/notes/l"; touch -d 2020-01-02 "$M/notes/n.md" "$M/repo/s.sh"
stat -c '%a %Y' "$M/repo/s.sh" "$M/notes/n.md"`, env...)
	assert.Equal(t, "ran\ns.sh\nran\nnote\n755 1577923200\n644 1577923200\n", out)
	fi, err := os.Stat(filepath.Join(dir, "s.sh"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
	assert.True(t, fi.ModTime().Equal(time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC)))
	target, err := os.Readlink(filepath.Join(dir, "l"))
	require.NoError(t, err)
	assert.Equal(t, "s.sh", target)
	target, err = notes.Readlink(t.Context(), "/l")
	require.NoError(t, err)
	assert.Equal(t, "n.md", target)
	// A link across the union's trees is the tree's business: its text
	// is kept as given.
	_, _, err = shErr(t, `ln -s ../notes/n.md "$M/repo/cross"`, env...)
	assert.NoError(t, err)
}

// TestLinkMovesAcrossUnion: mv of a dangling link and of a link to a
// directory from one mount of a union to another (EXDEV, so mv copies
// the link and removes it) moves the links themselves.
func TestLinkMovesAcrossUnion(t *testing.T) {
	dir := t.TempDir()
	notes := temp.MustNew(map[string]string{"/n.md": "note\n"})
	u, err := union.New([]union.Mount{{Prefix: "/repo", FS: newLocal(t, dir)}, {Prefix: "/notes", FS: notes}})
	require.NoError(t, err)
	s := mountT(t, u, Options{})
	env := []string{"M=" + s.Dir()}
	sh(t, `mkdir "$M/repo/d"; ln -s nowhere "$M/repo/gone"; ln -s d "$M/repo/dlnk"
mv "$M/repo/gone" "$M/repo/dlnk" "$M/notes/"`, env...)
	for p, want := range map[string]string{"/gone": "nowhere", "/dlnk": "d"} {
		target, err := notes.Readlink(t.Context(), p)
		require.NoError(t, err, p)
		assert.Equal(t, want, target, p)
	}
	for _, name := range []string{"gone", "dlnk"} {
		_, err := os.Lstat(filepath.Join(dir, name))
		assert.True(t, os.IsNotExist(err), "%s moved off the host", name)
	}
	assert.DirExists(t, filepath.Join(dir, "d"))
}
