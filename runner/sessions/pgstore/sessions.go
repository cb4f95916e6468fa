package pgstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/julyfs/julyfs/runner/sessions"
)

var sessionsUnavailable = sessions.ErrUnavailable

// Sessions is the sessions.Backend of one agent's sessions (scope) in
// the database. Their own files (temp.json, todos.json) stay on the local
// disk under dir.
type Sessions struct {
	db    *DB
	scope string
	dir   string
}

var (
	_ sessions.Backend      = (*Sessions)(nil)
	_ sessions.EventsFromer = (*Sessions)(nil)
)

// Sessions returns the backend of the sessions of scope (an agent's
// name), whose own files are kept under the local directory dir.
func (db *DB) Sessions(scope, dir string) *Sessions {
	return &Sessions{db: db, scope: scope, dir: dir}
}

// Name names the database and the scope.
func (s *Sessions) Name() string { return s.db.name + " (agent " + s.scope + ")" }

// Dir is the local directory of the sessions' own files.
func (s *Sessions) Dir() string { return s.dir }

// lockKey is the advisory lock of session id.
const lockKey = `hashtextextended('july-session:' || $1, 0)`

// hold takes session id's advisory lock on a connection of its own.
func (s *Sessions) hold(ctx context.Context, id string) (*pgxpool.Conn, error) {
	select {
	case s.db.held <- struct{}{}:
	default:
		return nil, fmt.Errorf("session %s: this process already holds %d sessions, the most it may (raise it with ?%s=N in the state root URL; PostgreSQL's max_connections bounds it too)", id, s.db.maxHeld, MaxHeldParam)
	}
	conn, err := s.db.hold.Acquire(ctx)
	if err != nil {
		<-s.db.held
		return nil, s.db.fail("holding session "+id, err)
	}
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+lockKey+`)`, id).Scan(&ok); err != nil {
		conn.Release()
		<-s.db.held
		return nil, s.db.fail("holding session "+id, err)
	}
	if !ok {
		conn.Release()
		<-s.db.held
		return nil, sessions.InUseError(id)
	}
	return conn, nil
}

// Create inserts the session, held.
func (s *Sessions) Create(id string, meta []byte) (sessions.Journal, error) {
	ctx, cancel := s.db.ctx()
	defer cancel()
	conn, err := s.hold(ctx, id)
	if err != nil {
		return nil, err
	}
	j := &journal{s: s, id: id, conn: conn}
	if _, err := conn.Exec(ctx, `INSERT INTO july_sessions (id, scope, meta) VALUES ($1, $2, $3)`, id, s.scope, meta); err != nil {
		j.Close()
		return nil, s.db.fail("creating session "+id, err)
	}
	if err := s.mkdir(id); err != nil {
		j.Close()
		return nil, err
	}
	return j, nil
}

// mkdir makes session id's local directory, for its own files: a
// session another process made has none here yet.
func (s *Sessions) mkdir(id string) error {
	if err := os.MkdirAll(filepath.Join(s.dir, id), 0o755); err != nil {
		return fmt.Errorf("session %s: making its local directory: %w", id, err)
	}
	return nil
}

// Hold holds the existing session id.
func (s *Sessions) Hold(id string) (sessions.Journal, error) {
	ctx, cancel := s.db.ctx()
	defer cancel()
	if err := s.exists(ctx, id); err != nil {
		return nil, err
	}
	conn, err := s.hold(ctx, id)
	if err != nil {
		return nil, err
	}
	j := &journal{s: s, id: id, conn: conn}
	if err := s.mkdir(id); err != nil {
		j.Close()
		return nil, err
	}
	return j, nil
}

func (s *Sessions) exists(ctx context.Context, id string) error {
	var one int
	err := s.db.pool.QueryRow(ctx, `SELECT 1 FROM july_sessions WHERE scope = $1 AND id = $2`, s.scope, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return sessions.UnknownError(id, s.Name())
	}
	return s.db.fail("reading session "+id, err)
}

// source names session id's log in messages.
func (s *Sessions) source(id string) string { return s.db.name + "#" + id }

// Load reads the session's row and its log in one statement (one
// snapshot).
func (s *Sessions) Load(id string) (sessions.Stored, error) {
	ctx, cancel := s.db.ctx()
	defer cancel()
	var meta, events []byte
	err := s.db.pool.QueryRow(ctx, `SELECT meta,
		(SELECT string_agg(line, ''::bytea ORDER BY idx) FROM july_events WHERE session = s.id)
		FROM july_sessions s WHERE scope = $1 AND id = $2`, s.scope, id).Scan(&meta, &events)
	if errors.Is(err, pgx.ErrNoRows) {
		return sessions.Stored{}, sessions.UnknownError(id, s.Name())
	}
	if err != nil {
		return sessions.Stored{}, s.db.fail("reading session "+id, err)
	}
	return sessions.Stored{Meta: meta, Events: events, Source: s.source(id)}, nil
}

// EventsFrom reads the log from index from on.
func (s *Sessions) EventsFrom(id string, from int64) ([]byte, error) {
	ctx, cancel := s.db.ctx()
	defer cancel()
	var events []byte
	err := s.db.pool.QueryRow(ctx, `SELECT
		(SELECT string_agg(line, ''::bytea ORDER BY idx) FROM july_events WHERE session = s.id AND idx >= $3)
		FROM july_sessions s WHERE scope = $1 AND id = $2`, s.scope, id, from).Scan(&events)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, sessions.UnknownError(id, s.Name())
	}
	if err != nil {
		return nil, s.db.fail("reading session "+id, err)
	}
	return events, nil
}

// List returns the scope's sessions.
func (s *Sessions) List() ([]sessions.Listing, error) {
	ctx, cancel := s.db.ctx()
	defer cancel()
	rows, err := s.db.pool.Query(ctx, `SELECT id, meta, n_events > meta_events FROM july_sessions WHERE scope = $1 ORDER BY id`, s.scope)
	if err != nil {
		return nil, s.db.fail("listing sessions", err)
	}
	var out []sessions.Listing
	for rows.Next() {
		var l sessions.Listing
		if err := rows.Scan(&l.ID, &l.Meta, &l.Stale); err != nil {
			rows.Close()
			return nil, s.db.fail("listing sessions", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, s.db.fail("listing sessions", err)
	}
	return out, nil
}

// Stale reports events appended since session.json was written.
func (s *Sessions) Stale(id string) bool {
	ctx, cancel := s.db.ctx()
	defer cancel()
	var stale bool
	err := s.db.pool.QueryRow(ctx, `SELECT n_events > meta_events FROM july_sessions WHERE scope = $1 AND id = $2`, s.scope, id).Scan(&stale)
	return err != nil || stale
}

// LogSize is the session's count of events.
func (s *Sessions) LogSize(id string) (int64, error) {
	ctx, cancel := s.db.ctx()
	defer cancel()
	var n int64
	err := s.db.pool.QueryRow(ctx, `SELECT n_events FROM july_sessions WHERE scope = $1 AND id = $2`, s.scope, id).Scan(&n)
	if err != nil {
		return 0, s.db.fail("reading the length of session "+id, err)
	}
	return n, nil
}

// journal holds a session: its advisory lock on conn, which its writes
// use, so that a write after the lock was lost (the connection cut)
// fails instead of going through unlocked.
type journal struct {
	s    *Sessions
	id   string
	conn *pgxpool.Conn
}

func (j *journal) Append(index int64, line []byte) error {
	ctx, cancel := j.s.db.ctx()
	defer cancel()
	_, err := j.conn.Exec(ctx, `WITH e AS (INSERT INTO july_events (session, idx, line) VALUES ($1, $2, $3))
		UPDATE july_sessions SET n_events = $2 + 1 WHERE id = $1`, j.id, index, line)
	return j.s.db.fail("appending to session "+j.id, err)
}

func (j *journal) WriteMeta(meta []byte) error {
	ctx, cancel := j.s.db.ctx()
	defer cancel()
	_, err := j.conn.Exec(ctx, `UPDATE july_sessions SET meta = $2, meta_events = n_events WHERE id = $1`, j.id, meta)
	return j.s.db.fail("writing session "+j.id, err)
}

// Cut has nothing to do: a row is never torn.
func (j *journal) Cut(int64) error { return nil }

// Close unlocks the session and gives the connection back; one that
// cannot be unlocked (cut) is closed, which drops its locks.
func (j *journal) Close() error {
	if j.conn == nil {
		return nil
	}
	ctx, cancel := j.s.db.ctx()
	defer cancel()
	var ok bool
	if err := j.conn.QueryRow(ctx, `SELECT pg_advisory_unlock(`+lockKey+`)`, j.id).Scan(&ok); err != nil || !ok {
		c := j.conn.Hijack()
		c.Close(ctx)
	} else {
		j.conn.Release()
	}
	j.conn = nil
	<-j.s.db.held
	return nil
}
