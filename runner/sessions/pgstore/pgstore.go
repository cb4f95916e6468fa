// Package pgstore keeps july serve's state in PostgreSQL, so several
// servers share one set of sessions, schedules and reminders: the
// sessions of a [sessions.Backend] ([DB.Sessions]) and the last fires and
// reminders of a [schedule.Store] ([DB.Schedule]), for one agent each
// (its name is the scope every row carries).
//
// # Schema
//
// Open creates the schema on first use and migrates it forward (the
// table july_schema holds the version; each migration runs in one
// transaction under an advisory lock). A session is a row of
// july_sessions (scope, id, session.json's bytes, how many events it has
// and how many it had when session.json was last written) and its log
// the rows of july_events (session, index, the event's JSON line), whose
// primary key (session, index) makes a second event at one index
// impossible whatever the locks do. An append is one statement (the
// event's insert and the session's count), durable at its commit.
// Schedules are rows of july_schedules (scope, id, last tick, state) and
// reminders rows of july_reminders (id, scope, fire count, next fire,
// disarmed, the record).
//
// # Several servers
//
// A session is held by one process at a time: Hold takes a session-level
// advisory lock (pg_try_advisory_lock on a hash of the session's id) on a
// connection of its own, which the session's appends then use, and which
// Close unlocks and returns. Another process's Hold fails with
// sessions.ErrInUse. A process that dies loses its connections, and the
// server drops their locks: no lock outlives its holder. Each process
// holds at most MaxHeld sessions at once (the july_max_held URL
// parameter, default DefaultMaxHeld); one more is an error naming the
// bound.
//
// Every process fires every schedule and reminder, and a claim makes each
// firing happen once: a tick is claimed by an INSERT … ON CONFLICT DO
// UPDATE … WHERE last_tick < the tick (the one process whose statement
// changed the row fires), a reminder's firing by an UPDATE … WHERE its
// fire count and next fire are still those the process read. There is no
// leader to lose.
//
// # Connections and errors
//
// Every call has a deadline (Options.Timeout, default DefaultTimeout). A
// call that cannot reach the server fails with an error wrapping
// sessions.ErrUnavailable that names the database (its URL without the
// password); the pools reconnect by themselves, so calls work again once
// the server is back. A held session whose connection was cut (the
// server restarted) has lost its lock: its appends fail, and it must be
// held again.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/julyfs/julyfs/internal/pgmigrate"
	hfpg "github.com/julyfs/julyfs/vfs/hostfiles/pgstore"
)

// DefaultMaxHeld is how many sessions one process holds at once, unless
// the URL's july_max_held says otherwise.
const DefaultMaxHeld = 64

// MaxHeldParam is the URL parameter that sets MaxHeld.
const MaxHeldParam = "july_max_held"

// DefaultTimeout bounds each call to the database.
const DefaultTimeout = 30 * time.Second

// Options configure a DB.
type Options struct {
	// Timeout bounds each call (0: DefaultTimeout).
	Timeout time.Duration
}

// IsURL reports whether a state root names a PostgreSQL database
// (postgres:// or postgresql://) rather than a directory.
func IsURL(stateRoot string) bool {
	return strings.HasPrefix(stateRoot, "postgres://") || strings.HasPrefix(stateRoot, "postgresql://")
}

// DB is one PostgreSQL database holding july's state. Its methods are
// safe for concurrent use.
type DB struct {
	name    string
	pool    *pgxpool.Pool // queries
	hold    *pgxpool.Pool // connections holding sessions
	held    chan struct{} // one token per held session
	maxHeld int
	timeout time.Duration
}

// Open connects to the database at rawURL, creates or migrates the
// schema, and returns it. A wrong password, a missing database or a
// server that does not answer fails here with an error naming it.
func Open(ctx context.Context, rawURL string, opts Options) (*DB, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	name := hfpg.Redact(rawURL)
	connURL, maxHeld, err := splitParams(rawURL)
	if err != nil {
		return nil, fmt.Errorf("state root %s: %w", name, err)
	}
	cfg, err := pgxpool.ParseConfig(connURL)
	if err != nil {
		return nil, fmt.Errorf("state root %s: invalid database URL: %w", name, errors.Unwrap(err))
	}
	hcfg := cfg.Copy()
	hcfg.MaxConns = int32(maxHeld)
	hcfg.MinConns = 0
	db := &DB{name: name, held: make(chan struct{}, maxHeld), maxHeld: maxHeld, timeout: opts.Timeout}
	if db.pool, err = pgxpool.NewWithConfig(context.Background(), cfg); err != nil {
		return nil, db.fail("open", err)
	}
	if db.hold, err = pgxpool.NewWithConfig(context.Background(), hcfg); err != nil {
		db.pool.Close()
		return nil, db.fail("open", err)
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	if err := schema.Migrate(ctx, db.pool); err != nil {
		db.Close()
		return nil, db.fail("open", err)
	}
	return db, nil
}

// splitParams takes the parameters of this package out of a URL.
func splitParams(raw string) (string, int, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return raw, DefaultMaxHeld, nil // pgx says what is wrong with it
	}
	q := u.Query()
	n := DefaultMaxHeld
	if v := q.Get(MaxHeldParam); v != "" {
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			return "", 0, fmt.Errorf("%s=%q: want a number of sessions, at least 1", MaxHeldParam, v)
		}
		q.Del(MaxHeldParam)
		u.RawQuery = q.Encode()
	}
	return u.String(), n, nil
}

// Name returns the server and database, without the password.
func (db *DB) Name() string { return db.name }

// Pool returns the query pool, for tests and benchmarks.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Close closes the pools; held sessions must be closed first.
func (db *DB) Close() {
	db.hold.Close()
	db.pool.Close()
}

// ctx returns the deadline of one call.
func (db *DB) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), db.timeout)
}

// fail wraps a database error with what was being done, marking the
// errors that are not the server's answer to a statement (no connection,
// a cut connection, a server shutting down, a deadline) unavailable.
func (db *DB) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P") {
		return fmt.Errorf("%w: %s: %s: %v (calls work again once the database answers)", sessionsUnavailable, db.name, op, err)
	}
	return fmt.Errorf("state store %s: %s: %w", db.name, op, err)
}

// migrations are the schema steps; migration i brings version i to i+1.
var migrations = []string{
	`CREATE TABLE july_sessions (
		id          text COLLATE "C" PRIMARY KEY,
		scope       text COLLATE "C" NOT NULL,
		meta        bytea NOT NULL,
		n_events    bigint NOT NULL DEFAULT 0,
		meta_events bigint NOT NULL DEFAULT 0
	);
	CREATE INDEX july_sessions_scope ON july_sessions (scope, id);
	CREATE TABLE july_events (
		session text COLLATE "C" NOT NULL REFERENCES july_sessions (id) ON DELETE CASCADE,
		idx     bigint NOT NULL,
		line    bytea NOT NULL,
		PRIMARY KEY (session, idx)
	);
	CREATE TABLE july_schedules (
		scope     text COLLATE "C" NOT NULL,
		id        text COLLATE "C" NOT NULL,
		last_tick timestamptz,
		state     jsonb NOT NULL,
		PRIMARY KEY (scope, id)
	);
	CREATE TABLE july_reminders (
		id         text COLLATE "C" PRIMARY KEY,
		scope      text COLLATE "C" NOT NULL,
		fire_count integer NOT NULL,
		next_fire  timestamptz,
		disarmed   text NOT NULL,
		rec        bytea NOT NULL
	);
	CREATE INDEX july_reminders_scope ON july_reminders (scope, id);`,
}

// schema is the state root's schema, its version in july_schema.
var schema = pgmigrate.Schema{Table: "july_schema", Lock: 0x6a756c792d7374 /* "july-st" */, Steps: migrations, Program: "july"}

// SchemaVersion is the version Open migrates to.
var SchemaVersion = schema.Version()

// Redact returns a database URL with any password removed, for messages.
func Redact(url string) string { return hfpg.Redact(url) }
