// Package pgmigrate brings a PostgreSQL schema forward, for the packages
// that keep state in PostgreSQL (vfs/hostfiles/pgstore,
// runner/sessions/pgstore).
//
// A [Schema] is a version table and a list of steps: step i brings
// version i to i+1. [Schema.Migrate] runs the steps the database has not
// had, all in one transaction under a transaction-level advisory lock,
// so several processes opening one database at once migrate it once and
// a step that fails leaves it as it was. A database whose version is
// newer than the steps is refused, naming both versions.
//
// Migrate is safe for concurrent use; the Schema is not changed.
package pgmigrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Schema is one package's schema.
type Schema struct {
	// Table is the version table's name (one row, one integer column),
	// created on first use.
	Table string
	// Lock is the advisory lock key the migration runs under; each
	// schema has its own.
	Lock int64
	// Steps are the schema's steps: Steps[i] brings version i to i+1.
	Steps []string
	// Program names what knows the schema in the message for a newer
	// database ("july", "julyfs").
	Program string
}

// Beginner starts a transaction: a *pgxpool.Pool, a *pgx.Conn.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Version is the version Migrate brings a database to.
func (s Schema) Version() int { return len(s.Steps) }

// Migrate creates the schema in the database db reaches, or brings it
// forward to Version, in one transaction.
func (s Schema) Migrate(ctx context.Context, db Beginner) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, s.Lock); err != nil {
		return err
	}
	table := pgx.Identifier{s.Table}.Sanitize()
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (version integer NOT NULL)`); err != nil {
		return err
	}
	var version int
	err = tx.QueryRow(ctx, `SELECT version FROM `+table).Scan(&version)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		if _, err := tx.Exec(ctx, `INSERT INTO `+table+` (version) VALUES (0)`); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if version > len(s.Steps) {
		return fmt.Errorf("database schema version %d is newer than this %s knows (%d)", version, s.Program, len(s.Steps))
	}
	for i := version; i < len(s.Steps); i++ {
		if _, err := tx.Exec(ctx, s.Steps[i]); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE `+table+` SET version = $1`, len(s.Steps)); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
