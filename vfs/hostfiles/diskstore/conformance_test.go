package diskstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/hostfiles"
	"github.com/julyfs/julyfs/vfs/hostfiles/diskstore"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

func openStore(t *testing.T, dir string) *diskstore.Store {
	t.Helper()
	s, err := diskstore.Open(dir, diskstore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		s := openStore(t, t.TempDir())
		for p, data := range files {
			_, err := s.Put(context.Background(), hostfiles.Deployment, vfs.Clean(p), data, vfs.Precondition{})
			require.NoError(t, err)
		}
		fsys, err := hostfiles.New(s, hostfiles.Deployment)
		require.NoError(t, err)
		return fsys
	}, vfstest.Options{})
}
