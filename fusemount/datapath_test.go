package fusemount

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestWrittenInPlaceHostWatch: on the default mount, which watches its
// host directory and hears each of the daemon's writes in place (a new
// file, a laid-out file that held no data: the host watch leaves the
// kernel's pages of those writes alone, see ownWrite), what is read back
// is what was written, and a new version behind the mount is read from
// the host.
func TestWrittenInPlaceHostWatch(t *testing.T) {
	requireFUSE(t)
	root, s := localMount(t, nil, Options{})
	want, small := writeThrough(t, root, s)
	got := sh(t, `cat "$M/new.dat" "$M/laid.dat" "$M/small.txt"`, "M="+s.Dir())
	assert.True(t, got == want+want+small, "read back: %d bytes, want %d", len(got), 2*len(want)+len(small))
	replaceBehind(t, root, s, len(want))
}

// writeThrough writes, through mount s of host directory root, a new
// 3 MiB file new.dat, a laid-out file laid.dat (in place: it holds no
// data) and a small new file small.txt, and waits for their release. It
// returns what the large files and the small one hold.
func writeThrough(t *testing.T, root string, s *Server) (big, small string) {
	t.Helper()
	layOut(t, filepath.Join(root, "laid.dat"), 3<<20)
	big = strings.Repeat("0123456789abcdef", 3<<16) // 3 MiB, above WholeFileLimit
	small = "small file\n"
	src := filepath.Join(t.TempDir(), "src")
	require.NoError(t, os.WriteFile(src, []byte(big), 0o644))
	sh(t, `cat "$SRC" > "$M/new.dat"; dd if="$SRC" of="$M/laid.dat" bs=1M conv=notrunc status=none; printf %s "$SMALL" > "$M/small.txt"`,
		"M="+s.Dir(), "SRC="+src, "SMALL="+small)
	assert.Equal(t, int64(1), s.m.ptDataless.Load(), "the laid-out file written in place")
	for _, name := range []string{"new.dat", "laid.dat", "small.txt"} {
		waitReleased(t, s, name)
	}
	return big, small
}

// replaceBehind puts new versions of new.dat (renamed over it) and
// laid.dat (rewritten), size bytes each, on the host behind mount s, and
// checks that they are read through the mount.
func replaceBehind(t *testing.T, root string, s *Server, size int) {
	t.Helper()
	other := strings.Repeat("X", size)
	tmp := filepath.Join(root, ".new")
	require.NoError(t, os.WriteFile(tmp, []byte(other), 0o644))
	require.NoError(t, os.Rename(tmp, filepath.Join(root, "new.dat")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "laid.dat"), []byte(other), 0o644))
	s.Settle()
	var got string
	require.Eventually(t, func() bool {
		got = sh(t, `cat "$M/new.dat"; cat "$M/laid.dat"`, "M="+s.Dir())
		return got == other+other
	}, toolTimeout, 20*time.Millisecond, "the host's new versions read through the mount (%d bytes, %d of them X)", len(got), strings.Count(got, "X"))
}

// TestReadAheadRaised: the mount's readahead is the largest request
// (DefaultMaxIO), not the kernel's 128 KiB, so a sequential read of a
// file through the daemon comes in requests of up to 1 MiB: an 8 MiB
// file in at most 17 READs (at 128 KiB of readahead the kernel sends 32
// or more). (Without passthrough: with it the kernel reads the host file
// itself.)
func TestReadAheadRaised(t *testing.T) {
	requireFUSE(t)
	root, s := localMount(t, nil, Options{NoPassthrough: true})
	var st unix.Stat_t
	require.NoError(t, unix.Stat(s.Dir(), &st))
	ra, err := os.ReadFile(fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(st.Dev), unix.Minor(st.Dev)))
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(DefaultMaxIO>>10), strings.TrimSpace(string(ra)), "read_ahead_kb of the mount")
	data := strings.Repeat("0123456789abcdef", 8<<16) + "end" // 8 MiB and a short tail
	require.NoError(t, os.WriteFile(filepath.Join(root, "big.dat"), []byte(data), 0o644))
	before := s.m.fileReads.Load()
	got := sh(t, `cat "$M/big.dat"`, "M="+s.Dir())
	reads := s.m.fileReads.Load() - before
	assert.True(t, got == data, "read back: %d bytes, want %d", len(got), len(data))
	assert.LessOrEqual(t, reads, int64(17), "READs for 8 MiB read sequentially")
	assert.Positive(t, reads, "READs for 8 MiB read sequentially")
}

// TestInPlaceForeignWriteSeen: while the mount writes a new file in place
// through the daemon (held open), another program's write to the same
// host file is read through the mount: the host watch tells it from the
// daemon's own writes by the file's size and time.
func TestInPlaceForeignWriteSeen(t *testing.T) {
	requireFUSE(t)
	root, s := localMount(t, nil, Options{})
	f, err := os.OpenFile(filepath.Join(s.Dir(), "open.dat"), os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	mine := strings.Repeat("a", 64<<10)
	writeAt(t, f, mine, 0)
	env := "M=" + s.Dir()
	assert.True(t, sh(t, `cat "$M/open.dat"`, env) == mine, "the daemon's writes read back while the file is open")
	h, err := os.OpenFile(filepath.Join(root, "open.dat"), os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = h.WriteAt([]byte("THEIRS"), 4096)
	require.NoError(t, err)
	require.NoError(t, h.Close())
	want := mine[:4096] + "THEIRS" + mine[4096+6:]
	var got string
	require.Eventually(t, func() bool {
		got = sh(t, `cat "$M/open.dat"`, env)
		return got == want
	}, toolTimeout, 20*time.Millisecond, "the other program's write read through the mount (%d bytes, %q at 4096)", len(got), got[min(len(got), 4096):min(len(got), 4102)])
	require.NoError(t, f.Close())
}
