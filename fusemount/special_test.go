package fusemount

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// TestSpecialFilesLocal: mkfifo, a UNIX socket's bind and mknod of a
// regular file through a local: mount make them on the host, shown with
// their type; they rename, link, chmod and unlink; a FIFO works as one
// through the mount; the tree's Read of it fails at once (never blocks).
func TestSpecialFilesLocal(t *testing.T) {
	dir := t.TempDir()
	fsys := newLocal(t, dir)
	s := mountT(t, fsys, Options{})
	env := []string{"M=" + s.Dir()}
	out := sh(t, `cd "$M" && mkfifo -m 600 p && python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("s")' && mknod -m 640 q p
stat -c '%n %F %a' p q s
(echo through > p &) ; cat p
mv q q2 && ln q2 q3 && chmod 604 q3 && stat -c '%n %h %a' q2 && rm q2 q3 && { ls q2 q3 2>&1 || true; } | grep -c 'No such'`, env...)
	assert.Equal(t, "p fifo 600\nq fifo 640\ns socket 755\nthrough\nq2 2 604\n2\n", out)
	fi, err := os.Lstat(filepath.Join(dir, "p"))
	require.NoError(t, err)
	assert.Equal(t, os.ModeNamedPipe, fi.Mode().Type(), "a FIFO on the host")
	fi, err = os.Lstat(filepath.Join(dir, "s"))
	require.NoError(t, err)
	assert.Equal(t, os.ModeSocket, fi.Mode().Type(), "a socket on the host")

	// The tree's verbs never open one: Read is not found at once.
	_, err = fsys.Read(t.Context(), "/p")
	assert.ErrorIs(t, err, vfs.ErrNotFound)
	st, err := fsys.Stat(t.Context(), "/p")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindMissing, st.Kind)
	assert.Equal(t, os.ModeNamedPipe, st.Special)
}

// TestSpecialListedLocal: FIFOs and sockets in a local: directory are
// listed through the mount with their types, in name order among the
// other entries (ls, find -type), also in a union, and rm -r removes a
// directory holding them.
func TestSpecialListedLocal(t *testing.T) {
	dir := t.TempDir()
	s := mountT(t, newLocal(t, dir), Options{})
	env := []string{"M=" + s.Dir()}
	out := sh(t, `cd "$M" && mkdir d && echo x > d/a && mkfifo d/b && python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("d/c")' && echo y > d/e
ls -f d | sort | tr '\n' ' '; echo; ls d | tr '\n' ' '; echo; find d -type p; find d -type s
rm -r d && { ls d 2>&1 || true; } | grep -c 'No such'`, env...)
	assert.Equal(t, ". .. a b c e \na b c e \nd/b\nd/c\n1\n", out)
	_, err := os.Stat(filepath.Join(dir, "d"))
	assert.ErrorIs(t, err, os.ErrNotExist, "removed on the host")

	// In a union, the local: mount's FIFO is listed under its prefix.
	udir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(udir, "p"), 0o600))
	u, err := union.New([]union.Mount{{Prefix: "/", FS: newLocal(t, udir)}, {Prefix: "/notes", FS: temp.MustNew(nil)}})
	require.NoError(t, err)
	us := mountT(t, u, Options{})
	assert.Equal(t, "p\n", sh(t, `cd "$M" && find . -type p | sed 's|^\./||'`, "M="+us.Dir()))
}
