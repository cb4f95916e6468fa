package fusemount

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
)

// hostOwner is "uid:gid" of the host file p, not following a link.
func hostOwner(t *testing.T, p string) [2]uint32 {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Lstat(p, &st))
	return [2]uint32{st.Uid, st.Gid}
}

// TestChownLocal: as root on a local: mount with other users allowed,
// chown and chown -h give a file, a directory and a link away on the host
// (vfs.OwnerSetter, vfs.LinkOwnerSetter), the kernel refuses a give-away
// by another user (EPERM), a file another user creates is theirs on the
// host, and tar -xpf restores the owners of an archive as on disk.
func TestChownLocal(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving files away needs root")
	}
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	s := mountT(t, newLocal(t, dir), Options{AllowOther: true})
	env := []string{"M=" + s.Dir()}
	out := sh(t, `cd "$M" && echo x > f && mkdir d && ln -s f l
chown 65534:65533 f && chown 65533 d && chown -h 65532:65532 l
stat -c '%u:%g' f d && stat -c '%u:%g' -L l && stat -c '%u:%g' l`, env...)
	assert.Equal(t, "65534:65533\n65533:0\n65534:65533\n65532:65532\n", out)
	assert.Equal(t, [2]uint32{65534, 65533}, hostOwner(t, filepath.Join(dir, "f")))
	assert.Equal(t, [2]uint32{65533, 0}, hostOwner(t, filepath.Join(dir, "d")))
	assert.Equal(t, [2]uint32{65532, 65532}, hostOwner(t, filepath.Join(dir, "l")))

	// Another user: the kernel checks (default_permissions).
	_, stderr, err := shErr(t, `cd "$M" && setpriv --reuid=65534 --regid=65534 --clear-groups chown 0 f`, env...)
	require.Error(t, err)
	assert.Contains(t, stderr, "Operation not permitted")
	assert.Equal(t, [2]uint32{65534, 65533}, hostOwner(t, filepath.Join(dir, "f")))
	sh(t, `cd "$M" && setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'echo y > d2f; mkdir nd; chmod 642 d2f'`, env...)
	assert.Equal(t, "642 65534\n", sh(t, `stat -c '%a %u' "$M/d2f"`, env...), "its maker owns it through the mount at once")
	assert.Equal(t, [2]uint32{65534, 65534}, hostOwner(t, filepath.Join(dir, "d2f")), "made by nobody")
	assert.Equal(t, [2]uint32{65534, 65534}, hostOwner(t, filepath.Join(dir, "nd")), "made by nobody")

	// tar -xpf as root restores owners, as native extraction does.
	src := t.TempDir()
	out = sh(t, `cd "$S" && mkdir -p t/sub && echo a > t/a && echo b > t/sub/b && ln -s a t/la
chown 65534:65533 t/a && chown -h 65533:65534 t/la && chown 65532:65532 t/sub
tar -cf ../own.tar t && cd "$M" && tar -xpf "$S/../own.tar" && stat -c '%n %u:%g' t/a t/sub t/sub/b && stat -c '%n %u:%g' t/la`,
		append(env, "S="+src)...)
	assert.Equal(t, "t/a 65534:65533\nt/sub 65532:65532\nt/sub/b 0:0\nt/la 65533:65534\n", out)
	assert.Equal(t, [2]uint32{65533, 65534}, hostOwner(t, filepath.Join(dir, "t", "la")))
}

// TestChownLocalPassthrough: with passthrough (a file created in place on
// the host), a file another user creates is theirs at once through the
// mount too, so they can chmod it.
func TestChownLocalPassthrough(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving files away needs root")
	}
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	s := mountT(t, newLocal(t, dir), Options{AllowOther: true, Passthrough: true})
	env := []string{"M=" + s.Dir()}
	sh(t, `cd "$M" && setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'echo y > f; chmod 642 f'`, env...)
	assert.Equal(t, "642 65534:65534\n", sh(t, `stat -c '%a %u:%g' "$M/f"`, env...))
	assert.Equal(t, [2]uint32{65534, 65534}, hostOwner(t, filepath.Join(dir, "f")))
}

// TestOwnAttrChangesNotEchoed: chmod, utimes and chown through a local:
// mount reach the host and show at once, and the tree's report of each
// (its watchers hear every change) is not sent back to the kernel as an
// invalidation: the mount made the change and the kernel has its
// attributes from the reply. tar -x sets a mode and a time on every file
// it extracts, so each echo cost a round trip and the attributes and
// pages the kernel had.
func TestOwnAttrChangesNotEchoed(t *testing.T) {
	requireFUSE(t)
	root, s := localMount(t, map[string]string{"f": "x\n"}, Options{})
	env := "M=" + s.Dir()
	sh(t, `cat "$M/f" >/dev/null; echo y > "$M/new"`, env)
	s.Settle()
	before := s.inv.queued.Load()
	script := `chmod 600 "$M/f" "$M/new" && touch -m -d @1000000000 "$M/f" "$M/new"`
	if os.Geteuid() == 0 {
		script += ` && chown 65534 "$M/f"`
	}
	sh(t, script, env)
	s.Settle()
	assert.Equal(t, before, s.inv.queued.Load(), "the mount's own changes were queued as invalidations")
	assert.Equal(t, "600 1000000000\n600 1000000000\n", sh(t, `stat -c '%a %Y' "$M/f" "$M/new"`, env))
	fi, err := os.Stat(filepath.Join(root, "f"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.Equal(t, int64(1000000000), fi.ModTime().Unix())

	// A change through the API still is (a host change is the host
	// watch's: TestHostChangesSeenPromptly).
	require.NoError(t, vfs.SetMode(t.Context(), s.m.fsys, "/new", 0o640))
	s.Settle()
	assert.Greater(t, s.inv.queued.Load(), before, "the API's chmod is sent to the kernel")
	assert.Equal(t, "600\n640\n", sh(t, `stat -c '%a' "$M/f" "$M/new"`, env))
}
