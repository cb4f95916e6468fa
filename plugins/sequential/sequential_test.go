package sequential

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadAtFrontToBackOpensOnce: reading a file in order opens it once;
// reading back opens it again; every read answers the right bytes.
func TestReadAtFrontToBackOpensOnce(t *testing.T) {
	data := make([]byte, 10000)
	for i := range data {
		data[i] = byte(i % 251)
	}
	opens := 0
	open := func(context.Context) (io.ReadCloser, error) {
		opens++
		return io.NopCloser(bytes.NewReader(data)), nil
	}
	var f Files
	defer f.Close()
	ctx := t.Context()
	buf := make([]byte, 777)
	var got []byte
	for off := int64(0); ; off += int64(len(buf)) {
		n, err := f.ReadAt(ctx, "k", int64(len(data)), open, buf, off)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	assert.Equal(t, data, got)
	assert.Equal(t, 1, opens, "front to back")
	n, err := f.ReadAt(ctx, "k", int64(len(data)), open, buf[:10], 5)
	require.NoError(t, err)
	assert.Equal(t, data[5:15], buf[:n])
	assert.Equal(t, 2, opens, "a read back opens anew")
	_, err = f.ReadAt(ctx, "k", int64(len(data)+5), open, buf, int64(len(data)))
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "a stream shorter than its size")
}
