package fusemount

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrivateStage: the staging of a file whose name is gone reads what
// was written, grows with zeros, truncates, and never commits.
func TestPrivateStage(t *testing.T) {
	s := &privateStage{}
	_, err := s.WriteAt([]byte("abc"), 2)
	require.NoError(t, err)
	assert.Equal(t, int64(5), s.Size())
	b := make([]byte, 8)
	n, err := s.ReadAt(b, 0)
	assert.Equal(t, io.EOF, err)
	assert.Equal(t, "\x00\x00abc", string(b[:n]))
	require.NoError(t, s.Truncate(3))
	n, err = s.ReadAt(b[:3], 0)
	require.NoError(t, err)
	assert.Equal(t, "\x00\x00a", string(b[:n]))
	require.NoError(t, s.Truncate(600))
	n, _ = s.ReadAt(b, 595)
	assert.Equal(t, make([]byte, 5), b[:n], "growth is zero-filled")
	_, err = s.ReadAt(b, 600)
	assert.Equal(t, io.EOF, err)
	_, err = s.ReadAt(b, -1)
	assert.Error(t, err)
	assert.Error(t, s.Truncate(-1))
	assert.ErrorIs(t, s.Commit(t.Context()), errNoName)
	require.NoError(t, s.Abort())
	assert.Zero(t, s.Size())
}
