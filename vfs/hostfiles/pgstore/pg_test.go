package pgstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/hostfiles"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore/pgtest"
)

func TestBadConnection(t *testing.T) {
	url := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	good, err := pgx.ParseConfig(url)
	require.NoError(t, err)
	base := fmt.Sprintf("127.0.0.1:%d", good.Port)
	for _, c := range []struct{ url, want string }{
		{fmt.Sprintf("postgres://julyfs:wrong-password@%s/julyfs?sslmode=disable", base), "password authentication failed"},
		{fmt.Sprintf("postgres://julyfs:%s@%s/no_such_db?sslmode=disable", good.Password, base), `database "no_such_db" does not exist`},
		{"postgres://julyfs:pw@127.0.0.1:1/julyfs?sslmode=disable&connect_timeout=5", "connect"},
		{"postgres://julyfs:pw@[bad", "invalid database URL"},
	} {
		s, err := pgstore.Open(ctx, c.url, pgstore.Options{})
		if !assert.Error(t, err, c.url) {
			s.Close()
			continue
		}
		msg := err.Error()
		assert.Contains(t, msg, "hostfiles store postgres://", c.url)
		assert.Contains(t, msg, c.want, c.url)
		assert.NotContains(t, msg, "wrong-password")
		assert.NotContains(t, msg, good.Password)
	}
}

func TestPoolShared(t *testing.T) {
	url := pgtest.URL(t)
	a := openStore(t, url)
	b := openStore(t, url)
	assert.Same(t, a.Pool(), b.Pool(), "stores on one URL share the process's pool")
	require.NoError(t, a.Close())
	// b still works after a closed its share.
	_, err := b.Put(t.Context(), freshScope(t), "/x", []byte("x"), vfs.Precondition{})
	assert.NoError(t, err)
}

func TestRedact(t *testing.T) {
	assert.Equal(t, "postgres://julyfs@db.example:5433/files", pgstore.Redact("postgres://julyfs:s3cret@db.example:5433/files?sslmode=disable"))
	assert.NotContains(t, pgstore.Redact("host=h user=u password=s3cret dbname=d"), "s3cret")
}

// TestListUsesIndex checks with EXPLAIN that a prefix listing is an index
// range scan on the primary key among a million rows, so it costs the rows
// it returns, not the table.
func TestListUsesIndex(t *testing.T) {
	srv := pgtest.Start(t, "fsync = off")
	s := openStore(t, srv.URL)
	ctx := t.Context()
	_, err := s.Pool().Exec(ctx, `INSERT INTO julyfs_files (scope, key, data, etag, size)
		SELECT 'big', '/d' || (i % 100) || '/f' || lpad(i::text, 7, '0'), '', 'e', 0
		FROM generate_series(1, 1000000) AS i`)
	require.NoError(t, err)
	_, err = s.Pool().Exec(ctx, `ANALYZE julyfs_files`)
	require.NoError(t, err)
	rows, err := s.Pool().Query(ctx, "EXPLAIN "+pgstore.ListQuery, "big", "/d42/", "", "/d420")
	require.NoError(t, err)
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	text := strings.Join(plan, "\n")
	t.Log(text)
	assert.Contains(t, text, "julyfs_files_pkey", "the listing uses the primary key")
	assert.NotContains(t, text, "Seq Scan")
	// And the listing through the tree returns that directory's files.
	fsys, err := hostfiles.New(s, "big")
	require.NoError(t, err)
	n := 0
	for e, err := range fsys.List(ctx, "/d42") {
		require.NoError(t, err)
		require.Equal(t, vfs.KindFile, e.Kind)
		n++
	}
	assert.Equal(t, 10000, n)
}

// TestServerRestart stops PostgreSQL under a working store: calls fail
// with an error naming the store, nothing is written partially, and after
// the restart the same store (no new Open) works again, including its
// change feed.
func TestServerRestart(t *testing.T) {
	srv := pgtest.Start(t, "fsync = off")
	a := openStore(t, srv.URL)
	b := openStore(t, srv.URL+"&application_name=b")
	ctx := t.Context()
	fa, err := hostfiles.New(a, hostfiles.Deployment)
	require.NoError(t, err)
	fb, err := hostfiles.New(b, hostfiles.Deployment)
	require.NoError(t, err)
	changes := make(chan vfs.Change, 100)
	cancel := fb.Watch(func(c vfs.Change) { changes <- c })
	defer cancel()
	require.NoError(t, fa.Write(ctx, "/a", []byte("v1")))
	waitChange(t, changes, "/a")

	require.NoError(t, srv.Stop())
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	defer ccancel()
	_, err = fa.Read(cctx, "/a")
	require.Error(t, err)
	assert.ErrorIs(t, err, vfs.ErrUnavailable)
	assert.Contains(t, err.Error(), "/a: hostfiles store "+a.Name())
	assert.NotContains(t, err.Error(), pgtest.Password)
	err = fa.Write(cctx, "/a", []byte("v2"))
	require.Error(t, err)
	assert.ErrorIs(t, err, vfs.ErrUnavailable)
	t.Log(err)

	require.NoError(t, srv.Start())
	var data []byte
	require.Eventually(t, func() bool {
		data, err = fa.Read(ctx, "/a")
		return err == nil
	}, 30*time.Second, 50*time.Millisecond, "reads work again after the restart: %v", err)
	assert.Equal(t, "v1", string(data), "the write that failed left nothing")
	require.NoError(t, fa.Write(ctx, "/a", []byte("v2")))
	waitChange(t, changes, "/a") // b's listener reconnected
}

// TestListenerCatchesUp cuts the listening connection and writes at once:
// every change is still delivered, from the sequence table.
func TestListenerCatchesUp(t *testing.T) {
	url := pgtest.URL(t)
	a := openStore(t, url)
	app := "catchup-" + string(freshScope(t))
	b := openStore(t, url+"&application_name="+app)
	sc := freshScope(t)
	ctx := t.Context()
	fa, err := hostfiles.New(a, sc)
	require.NoError(t, err)
	fb, err := hostfiles.New(b, sc)
	require.NoError(t, err)
	changes := make(chan vfs.Change, 1000)
	cancel := fb.Watch(func(c vfs.Change) { changes <- c })
	defer cancel()
	for round := range 3 {
		var killed int
		// Every connection of b (its listener among them) is cut.
		require.NoError(t, a.Pool().QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE application_name = $1`, app).Scan(&killed))
		require.NotZero(t, killed, "round %d: b's connections", round)
		for i := range 20 {
			require.NoError(t, fa.Write(ctx, fmt.Sprintf("/r%d/f%02d", round, i), []byte("x")))
		}
		for i := range 20 {
			waitChange(t, changes, fmt.Sprintf("/r%d/f%02d", round, i))
		}
	}
}

func waitChange(t *testing.T, changes <-chan vfs.Change, path string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case c := <-changes:
			if c.Path == path {
				return
			}
		case <-deadline:
			require.Failf(t, "no change within 10 s", "no change of %s within 10 s", path)
		}
	}
}

// TestChangesPruned: changes older than the retention period are deleted
// (here at Open), so the change table does not grow without bound.
func TestChangesPruned(t *testing.T) {
	url := pgtest.URL(t)
	s := openStore(t, url)
	ctx := t.Context()
	sc := freshScope(t)
	_, err := s.Pool().Exec(ctx, `INSERT INTO julyfs_changes (scope, key, deleted, etag, origin, at)
		VALUES ($1, '/old', false, 'e', 'test', now() - interval '2 hours'), ($1, '/new', false, 'e', 'test', now())`, string(sc))
	require.NoError(t, err)
	openStore(t, url+"&application_name=prune")
	keys, err := s.Pool().Query(ctx, `SELECT key FROM julyfs_changes WHERE scope = $1 ORDER BY key`, string(sc))
	require.NoError(t, err)
	got, err := pgx.CollectRows(keys, pgx.RowTo[string])
	require.NoError(t, err)
	assert.Equal(t, []string{"/new"}, got)
}
