package temp_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

func TestConformance(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		fsys, err := temp.New(files)
		require.NoError(t, err)

		return fsys
	}, vfstest.Options{})
}

func TestEmptyConformance(t *testing.T) {
	vfstest.Run(t, func(*testing.T, map[string][]byte) vfs.FileSystem {
		return temp.Empty()
	}, vfstest.Options{NoFiles: true})
}
