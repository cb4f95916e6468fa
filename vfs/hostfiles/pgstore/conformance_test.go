package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/hostfiles"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore/pgtest"
	"github.com/julyfs/julyfs/vfs/hostfiles/storetest"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

func openStore(t testing.TB, url string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), url, pgstore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// freshScope returns a scope no other test uses.
func freshScope(t testing.TB) hostfiles.Scope {
	var b [8]byte
	rand.Read(b[:])
	return hostfiles.Scope("test-" + hex.EncodeToString(b[:]))
}

func TestConformance(t *testing.T) {
	s := openStore(t, pgtest.URL(t))
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		sc := freshScope(t)
		for p, data := range files {
			_, err := s.Put(context.Background(), sc, vfs.Clean(p), data, vfs.Precondition{})
			require.NoError(t, err)
		}
		fsys, err := hostfiles.New(s, sc)
		require.NoError(t, err)
		return fsys
	}, vfstest.Options{})
}

func TestStore(t *testing.T) {
	url := pgtest.URL(t)
	storetest.Run(t, storetest.Options{
		Open: func(t *testing.T) hostfiles.Store {
			// A distinct URL gives a distinct pool: another "host".
			s, err := pgstore.Open(context.Background(), url+"&application_name="+string(freshScope(t)), pgstore.Options{MaxFileSize: 4096})
			require.NoError(t, err)
			return s
		},
		Scope:       func(t *testing.T) hostfiles.Scope { return freshScope(t) },
		MaxFileSize: 4096,
	})
}
