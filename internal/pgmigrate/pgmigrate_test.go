package pgmigrate_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/internal/pgmigrate"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore/pgtest"
)

// fresh returns a pool and a name prefix no other test uses.
func fresh(t *testing.T) (*pgxpool.Pool, string) {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), pgtest.URL(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	var b [6]byte
	rand.Read(b[:])
	return pool, "mig_" + hex.EncodeToString(b[:])
}

func version(t *testing.T, pool *pgxpool.Pool, table string) int {
	t.Helper()
	var v int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT version FROM `+table).Scan(&v))
	return v
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// TestMigrateForward: a new database gets every step; one with fewer
// gets the rest; running again changes nothing (the steps are not
// idempotent: a second run of one would fail).
func TestMigrateForward(t *testing.T) {
	pool, p := fresh(t)
	s := pgmigrate.Schema{Table: p + "_schema", Lock: 0x7067746573741, Program: "julyfs", Steps: []string{
		`CREATE TABLE ` + p + `_a (x int)`,
	}}
	require.NoError(t, s.Migrate(ctx(t), pool))
	assert.Equal(t, 1, version(t, pool, s.Table))
	s.Steps = append(s.Steps, `CREATE TABLE `+p+`_b (y int)`)
	require.NoError(t, s.Migrate(ctx(t), pool))
	require.NoError(t, s.Migrate(ctx(t), pool))
	assert.Equal(t, 2, version(t, pool, s.Table))
	assert.Equal(t, 2, s.Version())
	_, err := pool.Exec(ctx(t), `INSERT INTO `+p+`_b (y) VALUES (1)`)
	require.NoError(t, err)
}

// TestMigrateNewerRefused: a database migrated by a newer program is
// refused, naming both versions, and not changed.
func TestMigrateNewerRefused(t *testing.T) {
	pool, p := fresh(t)
	s := pgmigrate.Schema{Table: p + "_schema", Lock: 0x7067746573742, Program: "july", Steps: []string{
		`CREATE TABLE ` + p + `_a (x int)`, `CREATE TABLE ` + p + `_b (x int)`,
	}}
	require.NoError(t, s.Migrate(ctx(t), pool))
	old := s
	old.Steps = s.Steps[:1]
	err := old.Migrate(ctx(t), pool)
	require.Error(t, err)
	assert.Equal(t, "database schema version 2 is newer than this july knows (1)", err.Error())
	assert.Equal(t, 2, version(t, pool, s.Table))
}

// TestMigrateFailedStepRollsBack: a step that fails leaves the database
// as it was (the steps before it undone, the version unchanged), and
// names the step.
func TestMigrateFailedStepRollsBack(t *testing.T) {
	pool, p := fresh(t)
	s := pgmigrate.Schema{Table: p + "_schema", Lock: 0x7067746573743, Program: "julyfs", Steps: []string{
		`CREATE TABLE ` + p + `_a (x int)`, `CREATE TABLE ` + p + `_a (x int)`,
	}}
	err := s.Migrate(ctx(t), pool)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "migration 2: ")
	var n int
	require.NoError(t, pool.QueryRow(ctx(t), `SELECT count(*) FROM pg_tables WHERE tablename IN ($1, $2)`, p+"_a", p+"_schema").Scan(&n))
	assert.Equal(t, 0, n, "nothing of the failed migration is left")
}

// TestMigrateConcurrent: processes opening one database at once migrate
// it once (a step run twice would fail).
func TestMigrateConcurrent(t *testing.T) {
	pool, p := fresh(t)
	s := pgmigrate.Schema{Table: p + "_schema", Lock: 0x7067746573744, Program: "julyfs", Steps: []string{
		`CREATE TABLE ` + p + `_a (x int)`, `INSERT INTO ` + p + `_a VALUES (1)`,
	}}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			other, err := pgxpool.New(context.Background(), pool.Config().ConnString())
			if err != nil {
				errs[i] = err
				return
			}
			defer other.Close()
			errs[i] = s.Migrate(ctx(t), other)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "process %d", i)
	}
	var n int
	require.NoError(t, pool.QueryRow(ctx(t), `SELECT count(*) FROM `+p+`_a`).Scan(&n))
	assert.Equal(t, 1, n, "each step ran once")
}
