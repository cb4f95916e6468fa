package diskstore_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/hostfiles"
	"github.com/julyfs/julyfs/vfs/hostfiles/diskstore"
	"github.com/julyfs/julyfs/vfs/hostfiles/storetest"
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

func TestStore(t *testing.T) {
	dir := t.TempDir()
	n := 0
	storetest.Run(t, storetest.Options{
		Open: func(t *testing.T) hostfiles.Store {
			s, err := diskstore.Open(dir, diskstore.Options{MaxFileSize: 4096})
			require.NoError(t, err)
			return s
		},
		Scope: func(t *testing.T) hostfiles.Scope {
			n++
			return hostfiles.Scope("t" + strconv.Itoa(n))
		},
		MaxFileSize: 4096,
	})
}

// TestStorePolling runs the suite with the change feed polling instead of
// inotify (Options.Poll).
func TestStorePolling(t *testing.T) {
	dir := t.TempDir()
	n := 0
	storetest.Run(t, storetest.Options{
		Open: func(t *testing.T) hostfiles.Store {
			s, err := diskstore.Open(dir, diskstore.Options{MaxFileSize: 4096, Poll: true})
			require.NoError(t, err)
			return s
		},
		Scope: func(t *testing.T) hostfiles.Scope {
			n++
			return hostfiles.Scope("p" + strconv.Itoa(n))
		},
		MaxFileSize: 4096,
	})
}
