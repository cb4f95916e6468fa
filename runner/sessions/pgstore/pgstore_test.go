package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/runner/sessions/pgstore"
	"github.com/julyfs/julyfs/runner/sessions/sessionstest"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore/pgtest"
)

// openDB opens the database at url; each call is a pool of its own, as
// another process has.
func openDB(t testing.TB, url string) *pgstore.DB {
	t.Helper()
	db, err := pgstore.Open(context.Background(), url, pgstore.Options{})
	require.NoError(t, err)
	t.Cleanup(db.Close)
	return db
}

// freshScope returns an agent name no other test uses.
func freshScope() string {
	var b [8]byte
	rand.Read(b[:])
	return "test-" + hex.EncodeToString(b[:])
}

func TestSuite(t *testing.T) {
	url := pgtest.URL(t)
	dbA, dbB := openDB(t, url), openDB(t, url)
	sessionstest.Run(t, func(t *testing.T) (a, b *sessions.Store) {
		// Two machines: one database, a local directory each.
		scope := freshScope()
		return sessions.NewWithBackend(dbA.Sessions(scope, t.TempDir())), sessions.NewWithBackend(dbB.Sessions(scope, t.TempDir()))
	})
}
