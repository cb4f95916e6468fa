package local_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
)

// A staging of a sparse file (what fallocate through a mount leaves, and
// fio's layout) copies its data, not its holes: same bytes, few blocks.
func TestStageKeepsHoles(t *testing.T) {
	fsys, dir := newTree(t, nil)
	const size = 256 << 20
	f, err := os.Create(filepath.Join(dir, "sparse"))
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("head"), 0)
	require.NoError(t, err)
	_, err = f.WriteAt(bytes.Repeat([]byte("m"), 1<<16), 100<<20)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("tail"), size-8)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
	require.NoError(t, f.Close())
	var src unix.Stat_t
	require.NoError(t, unix.Stat(filepath.Join(dir, "sparse"), &src))
	if src.Blocks*512 > 16<<20 {
		t.Skipf("the test directory's filesystem does not keep holes (%d blocks)", src.Blocks)
	}

	st, err := fsys.Stage(t.Context(), "/sparse", true)
	require.NoError(t, err)
	defer st.Abort()
	assert.EqualValues(t, size, st.Size())
	for _, c := range []struct {
		off  int64
		want []byte
	}{
		{0, []byte("head\x00\x00")},
		{100<<20 - 2, append([]byte{0, 0}, bytes.Repeat([]byte("m"), 1<<16)...)},
		{100<<20 + 1<<16, make([]byte, 1<<16)},
		{size - 10, []byte("\x00\x00tail\x00\x00\x00\x00")},
		{50 << 20, make([]byte, 1<<20)},
	} {
		got := make([]byte, len(c.want))
		_, err := st.ReadAt(got, c.off)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "at %d", c.off)
	}
	fd, ok := vfs.Fd(st)
	require.True(t, ok)
	var sst unix.Stat_t
	require.NoError(t, unix.Fstat(int(fd), &sst))
	assert.Less(t, sst.Blocks*512, int64(16<<20), "the staging of a sparse 256 MiB file holding 64 KiB allocates its holes")

	// And it commits as the same file.
	require.NoError(t, st.Commit(t.Context()))
	data, err := os.ReadFile(filepath.Join(dir, "sparse"))
	require.NoError(t, err)
	require.Len(t, data, size)
	assert.Equal(t, []byte("head"), data[:4])
	assert.Equal(t, []byte("tail"), data[size-8:size-4])
	assert.Equal(t, bytes.Repeat([]byte("m"), 1<<16), data[100<<20:100<<20+1<<16])
}

// A staging of a file with no holes is a whole copy.
func TestStageCopiesWhole(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	fsys, _ := newTree(t, map[string][]byte{"/d/f": data})
	st, err := fsys.Stage(t.Context(), "/d/f", true)
	require.NoError(t, err)
	defer st.Abort()
	got := make([]byte, len(data)+10)
	k, _ := st.ReadAt(got, 0)
	assert.Equal(t, len(data), k)
	assert.True(t, bytes.Equal(data, got[:k]))
	assert.EqualValues(t, len(data), st.Size())
}
