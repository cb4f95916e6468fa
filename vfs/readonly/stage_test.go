package readonly_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/readonly"
	"github.com/julyfs/julyfs/vfs/temp"
)

func TestOpenFileAndStage(t *testing.T) {
	ctx := t.Context()
	r := readonly.New(temp.MustNew(map[string]string{"/f": "data"}))
	f, err := vfs.OpenFile(ctx, r, "/f")
	require.NoError(t, err, "OpenFile(/f)")
	require.Equal(t, int64(4), f.Size(), "OpenFile(/f).Size()")
	f.Close()
	for _, keep := range []bool{false, true} {
		_, err := vfs.Stage(ctx, r, "/./f", keep)
		assert.EqualError(t, err, "read-only mount: /f", "Stage(/f, %v)", keep)
	}

}
