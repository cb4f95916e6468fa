package fusemount

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostInoT is the host's inode number of path.
func hostInoT(t *testing.T, path string) string {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Lstat(path, &st))
	return strconv.FormatUint(st.Ino, 10)
}

// TestHostInodesLocal: through a local: mount a file, a directory and a
// link show the host's inode numbers; two names of one host file (ln, and
// a link made behind the mount) are one inode, so find -samefile finds
// both; a rename of a file and of a directory keeps the number, also
// over a name the kernel knew.
func TestHostInodesLocal(t *testing.T) {
	dir := t.TempDir()
	s := mountT(t, newLocal(t, dir), Options{})
	env := []string{"M=" + s.Dir()}

	out := sh(t, `echo a > "$M/f"; mkdir "$M/d"; ln -s f "$M/l"; ln "$M/f" "$M/g"
stat -c %i "$M/f" "$M/g" "$M/d" "$M/l"`, env...)
	f, d, l := hostInoT(t, filepath.Join(dir, "f")), hostInoT(t, filepath.Join(dir, "d")), hostInoT(t, filepath.Join(dir, "l"))
	assert.Equal(t, strings.Join([]string{f, f, d, l}, "\n")+"\n", out)
	assert.Equal(t, hostInoT(t, filepath.Join(dir, "g")), f, "one host file")
	assert.Equal(t, "/f\n/g\n", sh(t, `cd "$M" && find . -samefile g | sed 's/^\.//' | sort`, env...))

	// readdir's numbers are stat's, for names the kernel has not looked
	// up too (ls -i prints readdir's; it pads the numbers to one width,
	// which awk drops).
	require.NoError(t, os.WriteFile(filepath.Join(dir, "behind"), nil, 0o644))
	assert.Equal(t, hostInoT(t, filepath.Join(dir, "behind"))+" behind\n"+d+" d\n"+f+" f\n",
		sh(t, `ls -i "$M" | awk '$2 ~ /^(behind|d|f)$/ {print $1, $2}'`, env...))

	// chmod, chown and touch keep the number (the SETATTR reply's).
	assert.Equal(t, f+"\n", sh(t, `chmod 600 "$M/f"; stat -c %i "$M/f"`, env...))
	assert.Equal(t, f+"\n", sh(t, `chown 0:0 "$M/f"; touch "$M/f"; stat -c %i "$M/f"`, env...))
	out = sh(t, `mkfifo "$M/p"; chmod 600 "$M/p"; stat -c %i "$M/p"`, env...)
	assert.Equal(t, hostInoT(t, filepath.Join(dir, "p"))+"\n", out, "a FIFO after chmod")
	require.NoError(t, os.Remove(filepath.Join(dir, "p")))

	// A hard link made on the host behind the mount.
	require.NoError(t, os.Link(filepath.Join(dir, "f"), filepath.Join(dir, "h")))
	assert.Equal(t, f+" 3\n", sh(t, `stat -c '%i %h' "$M/h"`, env...))

	// Renames keep the number: a file over a name the kernel knows, a
	// directory into another.
	out = sh(t, `echo b > "$M/other"; stat -c %i "$M/other" >/dev/null
mv "$M/h" "$M/other"; stat -c %i "$M/other"; mkdir "$M/e"; mv "$M/d" "$M/e/d"; stat -c %i "$M/e/d"`, env...)
	assert.Equal(t, f+"\n"+d+"\n", out)
	assert.Equal(t, f, hostInoT(t, filepath.Join(dir, "other")))
	// The names left are still one file: a write through one shows
	// through the other (the host says so).
	assert.Equal(t, "a\na\n", sh(t, `cat "$M/g" "$M/other"`, env...))
}

// TestModeZeroLocal: a file created with mode 0000 (open with O_CREAT and
// each access mode), and one chmodded to 0000, show 0000 through a local:
// mount, with and without passthrough, as on the host.
func TestModeZeroLocal(t *testing.T) {
	for _, pt := range []bool{false, true} {
		t.Run("passthrough="+strconv.FormatBool(pt), func(t *testing.T) {
			dir := t.TempDir()
			s := mountT(t, newLocal(t, dir), Options{NoPassthrough: !pt})
			out := sh(t, `cd "$M"
for m in O_WRONLY O_RDWR O_RDONLY; do
  perl -MFcntl -e 'sysopen(F, $ARGV[0], O_CREAT|'$m', 0) or die "$!"; close F' $m
done
touch c; chmod 000 c; stat -c '%n %a %F' O_WRONLY O_RDWR O_RDONLY c`, "M="+s.Dir())
			assert.Equal(t, "O_WRONLY 0 regular empty file\nO_RDWR 0 regular empty file\nO_RDONLY 0 regular empty file\nc 0 regular empty file\n", out)
			fi, err := os.Stat(filepath.Join(dir, "O_RDWR"))
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0), fi.Mode().Perm(), "on the host")
		})
	}
}

// TestLinkOwnTimesLocal: a link's own change time moves at lchown, and
// its own access time set with touch -h (AT_SYMLINK_NOFOLLOW) is kept,
// apart from its target's.
func TestLinkOwnTimesLocal(t *testing.T) {
	dir := t.TempDir()
	s := mountT(t, newLocal(t, dir), Options{})
	env := []string{"M=" + s.Dir()}
	out := sh(t, `cd "$M" && echo a > f && ln -s f l && a=$(stat -c %z l) && sleep 0.05 && chown -h 65534:65534 l && b=$(stat -c %z l)
[ "$a" != "$b" ] && echo moved
touch -h -a -d @1000000000 l && stat -c %X l && [ "$(stat -L -c %X l)" != 1000000000 ] && echo target-apart`, env...)
	assert.Equal(t, "moved\n1000000000\ntarget-apart\n", out)
}
