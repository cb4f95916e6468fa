// Package pgstore is a [hostfiles.Store] on PostgreSQL, so many hosts
// share one set of host files with compare-and-swap and a change feed.
//
// # Schema
//
// Open creates the schema on first use and migrates it forward: the table
// julyfs_schema holds the version, and each migration runs in one
// transaction under an advisory lock, so processes that start together
// migrate once. Files live in julyfs_files (scope, key, data bytea, etag,
// size, mtime) with the primary key (scope, key) in the "C" collation:
// byte order, the order of vfs paths, and the index that serves a prefix
// listing as a range scan. Files are stored whole in a bytea of at most
// Options.MaxFileSize bytes (64 MiB by default; PostgreSQL's own bytea
// limit is 1 GB); a larger put fails with hostfiles.ErrTooLarge. Open
// (hostfiles.Opener, what grep reads through) streams a file of more than
// 1 MiB in pieces of at most 8 MiB from one REPEATABLE READ snapshot.
//
// # CAS
//
// A put or a delete is one SQL statement: the conditional INSERT, UPDATE
// or DELETE on julyfs_files, the insert of its change into julyfs_changes
// and its pg_notify, joined in one statement's CTEs. It commits whole or
// not at all: a connection lost mid-write leaves the old row. A refused
// precondition touches no row; a second query then reads the current etag
// for the *hostfiles.ConflictError. The check that a key is not under a
// file and not over a directory is part of the same statement; two
// concurrent creations of "/a" and "/a/b" are not serialized against each
// other (READ COMMITTED), which the vfs contract tolerates as a race
// between two writers.
//
// # Change feed
//
// Every change is a row in julyfs_changes (a sequence number, the scope,
// key, etag and the writing store's origin) and a NOTIFY on the channel
// julyfs_changes carrying the same fields, delivered at commit. A Store
// with watchers keeps one listening connection: it LISTENs first, then
// reads the rows after the last sequence number it has seen (less a margin
// for transactions that took a number earlier but committed later) and
// drops the ones it has already delivered, so a reconnecting listener
// catches up and never misses a change. Changes older than an hour are
// pruned (at Open, every 1024 writes of a store, and every ten minutes by
// a listener); a listener away for longer misses them, and a FUSE mount
// then revalidates by etag after its entry timeout.
//
// # Connections and errors
//
// Stores opened with the same URL in one process share one connection
// pool. A call that cannot reach the server fails with a
// *hostfiles.StoreError naming the store (the URL without its password)
// for which errors.Is(err, vfs.ErrUnavailable) holds; the pool reconnects
// by itself, so calls work again once the server is back.
package pgstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/julyfs/julyfs/internal/pgmigrate"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/hostfiles"
)

// DefaultMaxFileSize is the size limit when Options.MaxFileSize is 0.
const DefaultMaxFileSize = 64 << 20

// maxKeyLen keeps a change's NOTIFY payload under PostgreSQL's 8000 bytes.
const maxKeyLen = 4000

// channel is the NOTIFY channel of every change.
const channel = "julyfs_changes"

// Options configure a store.
type Options struct {
	// MaxFileSize refuses larger puts with hostfiles.ErrTooLarge; 0 is
	// DefaultMaxFileSize.
	MaxFileSize int64
}

// Store is a PostgreSQL database of host files.
type Store struct {
	name   string
	url    string
	pool   *pgxpool.Pool
	opts   Options
	origin string

	mu     sync.Mutex
	subs   map[hostfiles.Scope]map[int]func(hostfiles.Event)
	next   int
	smu    sync.RWMutex // held for reading while delivering
	listen *listener
	closed bool

	writes atomic.Int64 // counts writes, to prune the change table now and then
}

var (
	_ hostfiles.Store  = (*Store)(nil)
	_ hostfiles.Opener = (*Store)(nil)
)

// pools are the connection pools of this process, one per URL.
var pools = struct {
	sync.Mutex
	m map[string]*sharedPool
}{m: map[string]*sharedPool{}}

type sharedPool struct {
	pool *pgxpool.Pool
	refs int
}

// Name renders the server of cfg without a password.
func displayName(cfg *pgconn.Config) string {
	return fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}

// Redact returns url with any password removed, for messages and mount
// tables; a value that does not parse is replaced by "postgres://?".
func Redact(url string) string {
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		return "postgres://?"
	}
	return displayName(cfg)
}

// Open connects to the database at url (a postgres:// URL or a key=value
// DSN), creates or migrates the schema, and returns the store. A wrong
// password or a missing database fails here with an error naming the
// store.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("hostfiles store %s: invalid database URL: %w", Redact(url), errors.Unwrap(err))
	}
	name := displayName(cfg.ConnConfig.Config.Copy())
	pools.Lock()
	sp := pools.m[url]
	if sp == nil {
		pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
		if err != nil {
			pools.Unlock()
			return nil, &hostfiles.StoreError{Store: name, Op: "open", Err: err}
		}
		sp = &sharedPool{pool: pool}
		pools.m[url] = sp
	}
	sp.refs++
	pools.Unlock()
	var rnd [8]byte
	rand.Read(rnd[:])
	s := &Store{name: name, url: url, pool: sp.pool, opts: opts, origin: hex.EncodeToString(rnd[:]),
		subs: map[hostfiles.Scope]map[int]func(hostfiles.Event){}}
	if err := schema.Migrate(ctx, s.pool); err != nil {
		s.Close()
		return nil, s.fail("open", err)
	}
	s.prune(ctx)
	return s, nil
}

// pruneEvery is how many writes of a store pass between two prunings of
// the change table (also pruned at Open and by listeners every ten
// minutes), so it stays small even when nobody listens.
const pruneEvery = 1024

// prune deletes changes older than the retention period.
func (s *Store) prune(ctx context.Context) {
	s.pool.Exec(ctx, `DELETE FROM julyfs_changes WHERE at < now() - interval '`+retention+`'`)
}

// wrote counts a write and prunes in the background every pruneEvery.
func (s *Store) wrote() {
	if s.writes.Add(1)%pruneEvery == 0 {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s.prune(ctx)
		}()
	}
}

// Name returns the server and database, without the password.
func (s *Store) Name() string { return s.name }

// Pool returns the connection pool (shared with the process's other
// stores on the same URL), for tests and benchmarks.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close stops the listener and releases the store's share of the pool.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	l := s.listen
	s.listen = nil
	s.mu.Unlock()
	if l != nil {
		l.stop()
	}
	pools.Lock()
	defer pools.Unlock()
	if sp := pools.m[s.url]; sp != nil {
		sp.refs--
		if sp.refs == 0 {
			sp.pool.Close()
			delete(pools.m, s.url)
		}
	}
	return nil
}

// fail wraps a database error, marking errors that are not the server's
// answer to a statement (no connection, a cut connection) unavailable.
func (s *Store) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pe *pgconn.PgError
	unavailable := !errors.As(err, &pe) || strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P")
	return &hostfiles.StoreError{Store: s.name, Op: op, Err: err, Unavailable: unavailable}
}

// migrations are the schema steps; migration i brings version i to i+1.
var migrations = []string{
	`CREATE TABLE julyfs_files (
		scope text COLLATE "C" NOT NULL,
		key   text COLLATE "C" NOT NULL,
		data  bytea NOT NULL,
		etag  text NOT NULL,
		size  bigint NOT NULL,
		mtime timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (scope, key)
	);
	CREATE TABLE julyfs_changes (
		seq     bigserial PRIMARY KEY,
		scope   text COLLATE "C" NOT NULL,
		key     text COLLATE "C" NOT NULL,
		deleted boolean NOT NULL,
		etag    text NOT NULL,
		origin  text NOT NULL,
		at      timestamptz NOT NULL DEFAULT now()
	);
	CREATE INDEX julyfs_changes_at ON julyfs_changes (at);`,
}

// schema is the files' schema, its version in julyfs_schema.
var schema = pgmigrate.Schema{Table: "julyfs_schema", Lock: 0x6a756c796673 /* "julyfs" */, Steps: migrations, Program: "julyfs"}

// SchemaVersion is the version Open migrates to.
var SchemaVersion = schema.Version()

func checkArgs(ctx context.Context, sc hostfiles.Scope, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := sc.Validate(); err != nil {
		return err
	}
	if err := hostfiles.ValidKey(key); err != nil {
		return err
	}
	if len(key) > maxKeyLen {
		return fmt.Errorf("invalid key %.40q...: longer than %d bytes", key, maxKeyLen)
	}
	return nil
}

// Get returns the file at key.
func (s *Store) Get(ctx context.Context, sc hostfiles.Scope, key string) ([]byte, hostfiles.Meta, error) {
	if err := checkArgs(ctx, sc, key); err != nil {
		return nil, hostfiles.Meta{}, err
	}
	m := hostfiles.Meta{Key: key}
	var data []byte
	err := s.pool.QueryRow(ctx, `SELECT data, etag, size, mtime FROM julyfs_files WHERE scope = $1 AND key = $2`,
		string(sc), key).Scan(&data, &m.ETag, &m.Size, &m.ModTime)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, hostfiles.Meta{}, hostfiles.ErrNotFound
	}
	if err != nil {
		return nil, hostfiles.Meta{}, s.fail("get "+hostfiles.Printable(key), err)
	}
	if data == nil {
		data = []byte{}
	}
	return data, m, nil
}

// readChunk is the least of a file one query of Open's reader fetches,
// and the size up to which a file is fetched whole. A variable for tests.
var readChunk int64 = 1 << 20

// chunkFor returns the piece size Open's reader fetches a file of size
// bytes in: an eighth of the file, at least readChunk and at most
// 8*readChunk. PostgreSQL compresses a large bytea (pglz) and a substring
// of a compressed value decompresses it from the start, so n pieces cost
// about n/2 decompressions of the whole file: few pieces keep that near 4x
// (a 60 MiB log: 1.5 s instead of 10 s in 1 MiB pieces), the cap keeps
// the reader's memory at 8 MiB whatever the file.
func chunkFor(size int64) int64 {
	return min(max(size/8, readChunk), 8*readChunk)
}

// Open returns the file at key as a stream. A file of at most readChunk
// bytes is fetched by one query. A larger one is read a piece at a time
// (chunkFor; a substring of the bytea) inside a read-only REPEATABLE READ
// transaction, so every piece comes from one snapshot: a put during the
// read does not mix versions. The reader holds a pooled connection until
// it is closed.
func (s *Store) Open(ctx context.Context, sc hostfiles.Scope, key string) (io.ReadCloser, hostfiles.Meta, error) {
	if err := checkArgs(ctx, sc, key); err != nil {
		return nil, hostfiles.Meta{}, err
	}
	fail := func(err error) error { return s.fail("open "+hostfiles.Printable(key), err) }
	m := hostfiles.Meta{Key: key}
	var data []byte
	err := s.pool.QueryRow(ctx, `SELECT etag, size, mtime, CASE WHEN size <= $3 THEN data END
		FROM julyfs_files WHERE scope = $1 AND key = $2`, string(sc), key, readChunk).Scan(&m.ETag, &m.Size, &m.ModTime, &data)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, hostfiles.Meta{}, hostfiles.ErrNotFound
	case err != nil:
		return nil, hostfiles.Meta{}, fail(err)
	case m.Size <= readChunk:
		return io.NopCloser(bytes.NewReader(data)), m, nil
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, hostfiles.Meta{}, fail(err)
	}
	// The first statement fixes the snapshot: size and etag from it.
	err = tx.QueryRow(ctx, `SELECT etag, size, mtime, substring(data from 1 for $3)
		FROM julyfs_files WHERE scope = $1 AND key = $2`, string(sc), key, chunkFor(m.Size)).Scan(&m.ETag, &m.Size, &m.ModTime, &data)
	if err != nil {
		tx.Rollback(context.Background())
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, hostfiles.Meta{}, hostfiles.ErrNotFound // deleted meanwhile
		}
		return nil, hostfiles.Meta{}, fail(err)
	}
	return &chunkReader{ctx: ctx, tx: tx, fail: fail, scope: string(sc), key: key, size: m.Size, off: int64(len(data)), buf: data}, m, nil
}

// chunkReader reads a large file a chunk at a time in one transaction.
type chunkReader struct {
	ctx        context.Context
	tx         pgx.Tx
	fail       func(error) error
	scope, key string
	size, off  int64  // off: bytes fetched so far
	buf        []byte // fetched, not yet read (a part of own)
	own        []byte // the reader's buffer, reused for every piece
	err        error
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		switch {
		case r.err != nil:
			return 0, r.err
		case r.off >= r.size:
			return 0, io.EOF
		}
		chunk, err := r.fetch()
		switch {
		case err != nil:
			r.err = r.fail(err)
		case len(chunk) == 0:
			r.err = r.fail(io.ErrUnexpectedEOF) // cannot happen within the snapshot
		}
		r.off += int64(len(chunk))
		r.buf = chunk
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// fetch reads the next piece into the reader's own buffer, reused from
// piece to piece: the driver's bytes (pgtype.DriverBytes, no copy of
// their own) are copied once, so a file costs a buffer, not an
// allocation per piece.
func (r *chunkReader) fetch() ([]byte, error) {
	rows, err := r.tx.Query(r.ctx, `SELECT substring(data from $3 for $4) FROM julyfs_files WHERE scope = $1 AND key = $2`,
		r.scope, r.key, r.off+1, chunkFor(r.size))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, pgx.ErrNoRows
	}
	var b pgtype.DriverBytes
	if err := rows.Scan(&b); err != nil {
		return nil, err
	}
	r.own = append(r.own[:0], b...)
	rows.Close()
	return r.own, rows.Err()
}

// Close ends the transaction and returns its connection to the pool.
func (r *chunkReader) Close() error {
	r.buf = nil
	return r.tx.Rollback(context.Background())
}

// Stat returns the metadata of the file at key.
func (s *Store) Stat(ctx context.Context, sc hostfiles.Scope, key string) (hostfiles.Meta, error) {
	if err := checkArgs(ctx, sc, key); err != nil {
		return hostfiles.Meta{}, err
	}
	m := hostfiles.Meta{Key: key}
	err := s.pool.QueryRow(ctx, `SELECT etag, size, mtime FROM julyfs_files WHERE scope = $1 AND key = $2`,
		string(sc), key).Scan(&m.ETag, &m.Size, &m.ModTime)
	if errors.Is(err, pgx.ErrNoRows) {
		return hostfiles.Meta{}, hostfiles.ErrNotFound
	}
	if err != nil {
		return hostfiles.Meta{}, s.fail("stat "+hostfiles.Printable(key), err)
	}
	return m, nil
}

// tail is what every write statement ends with: record the change of the
// row the CTE "w" returned and notify, in the same statement. $1 is the
// scope, $2 the key; etag, deleted and origin are SQL expressions.
func tail(etag, deleted, origin string) string {
	return `,
	c AS (INSERT INTO julyfs_changes (scope, key, deleted, etag, origin)
		SELECT $1, $2, ` + deleted + `, ` + etag + `, ` + origin + ` FROM w RETURNING seq)
	SELECT w.mtime, c.seq, pg_notify('` + channel + `', json_build_object(
		's', c.seq, 'c', $1::text, 'k', $2::text, 'd', ` + deleted + `, 'e', ` + etag + `, 'o', ` + origin + `)::text)
	FROM w, c`
}

// placement is the condition that the key is neither below a file ($6,
// its ancestors) nor a directory ($7 <= key < $8 is its subtree).
const placement = `NOT EXISTS (SELECT 1 FROM julyfs_files WHERE scope = $1 AND key = ANY($6::text[]))
	AND NOT EXISTS (SELECT 1 FROM julyfs_files WHERE scope = $1 AND key >= $7 AND key < $8)`

// The write statements. Puts: $1 scope, $2 key, $3 data, $4 etag, $5 size;
// putAny and putNew: $6 ancestors, $7 and $8 the key's subtree, $9 origin;
// putMatch: $6 the etag to match, $7 origin. deleteStmt: $1 scope, $2 key,
// $3 the etag to match or NULL, $4 origin.
var (
	putAny = `WITH w AS (
		INSERT INTO julyfs_files AS f (scope, key, data, etag, size, mtime)
		SELECT $1, $2, $3, $4, $5, now() WHERE ` + placement + `
		ON CONFLICT (scope, key) DO UPDATE SET data = EXCLUDED.data, etag = EXCLUDED.etag,
			size = EXCLUDED.size, mtime = EXCLUDED.mtime
		RETURNING mtime)` + tail("$4::text", "false", "$9::text")
	putNew = `WITH w AS (
		INSERT INTO julyfs_files AS f (scope, key, data, etag, size, mtime)
		SELECT $1, $2, $3, $4, $5, now() WHERE ` + placement + `
		ON CONFLICT (scope, key) DO NOTHING
		RETURNING mtime)` + tail("$4::text", "false", "$9::text")
	putMatch = `WITH w AS (
		UPDATE julyfs_files SET data = $3, etag = $4, size = $5, mtime = now()
		WHERE scope = $1 AND key = $2 AND etag = $6
		RETURNING mtime)` + tail("$4::text", "false", "$7::text")
	deleteStmt = `WITH w AS (
		DELETE FROM julyfs_files WHERE scope = $1 AND key = $2 AND ($3::text IS NULL OR etag = $3)
		RETURNING now() AS mtime)` + tail("''", "true", "$4::text")
)

// Put writes the file at key when cond holds, in one statement.
func (s *Store) Put(ctx context.Context, sc hostfiles.Scope, key string, data []byte, cond vfs.Precondition) (hostfiles.Meta, error) {
	if err := checkArgs(ctx, sc, key); err != nil {
		return hostfiles.Meta{}, err
	}
	if int64(len(data)) > s.opts.MaxFileSize {
		return hostfiles.Meta{}, fmt.Errorf("%w: %d bytes, over the limit of %d bytes of store %s", hostfiles.ErrTooLarge, len(data), s.opts.MaxFileSize, s.name)
	}
	if data == nil {
		data = []byte{}
	}
	etag := vfs.ContentETag(data)
	lo, hi := hostfiles.DirRange(key)
	stmt, args := putAny, []any{string(sc), key, data, etag, int64(len(data)), hostfiles.Ancestors(key), lo, hi, s.origin}
	switch {
	case cond.IfMatch != "":
		stmt, args = putMatch, []any{string(sc), key, data, etag, int64(len(data)), cond.IfMatch, s.origin}
	case cond.IfNoneMatch:
		stmt = putNew
	}
	m := hostfiles.Meta{Key: key, Size: int64(len(data)), ETag: etag}
	var seq int64
	var note string
	err := s.pool.QueryRow(ctx, stmt, args...).Scan(&m.ModTime, &seq, &note)
	if errors.Is(err, pgx.ErrNoRows) {
		return hostfiles.Meta{}, s.why(ctx, sc, key, cond)
	}
	if err != nil {
		return hostfiles.Meta{}, s.fail("put "+hostfiles.Printable(key), err)
	}
	s.wrote()
	s.publish(sc, hostfiles.Event{Key: key, ETag: etag})
	return m, nil
}

// why explains a write that touched no row: the precondition failed, the
// key is a directory, or a parent is a file.
func (s *Store) why(ctx context.Context, sc hostfiles.Scope, key string, cond vfs.Precondition) error {
	var have string
	err := s.pool.QueryRow(ctx, `SELECT etag FROM julyfs_files WHERE scope = $1 AND key = $2`, string(sc), key).Scan(&have)
	exists := err == nil
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return s.fail("put "+hostfiles.Printable(key), err)
	}
	if err := hostfiles.CheckCond(key, cond, exists, have); err != nil {
		return err
	}
	if exists {
		return &hostfiles.ConflictError{Key: key, Want: cond.IfMatch, Have: have}
	}
	lo, hi := hostfiles.DirRange(key)
	var dir, below bool
	err = s.pool.QueryRow(ctx, `SELECT
		EXISTS (SELECT 1 FROM julyfs_files WHERE scope = $1 AND key >= $2 AND key < $3),
		EXISTS (SELECT 1 FROM julyfs_files WHERE scope = $1 AND key = ANY($4::text[]))`,
		string(sc), lo, hi, hostfiles.Ancestors(key)).Scan(&dir, &below)
	switch {
	case err != nil:
		return s.fail("put "+hostfiles.Printable(key), err)
	case dir:
		return hostfiles.ErrIsDir
	case below:
		return hostfiles.ErrNotDir
	}
	return hostfiles.ErrNotFound // the file went away between the statements
}

// Delete removes the file at key when cond.IfMatch is empty or matches.
func (s *Store) Delete(ctx context.Context, sc hostfiles.Scope, key string, cond vfs.Precondition) error {
	if err := checkArgs(ctx, sc, key); err != nil {
		return err
	}
	var match any
	if cond.IfMatch != "" {
		match = cond.IfMatch
	}
	lo, hi := hostfiles.DirRange(key)
	var mtime time.Time
	var seq int64
	var note string
	err := s.pool.QueryRow(ctx, deleteStmt, string(sc), key, match, s.origin).Scan(&mtime, &seq, &note)
	if errors.Is(err, pgx.ErrNoRows) {
		var have string
		err := s.pool.QueryRow(ctx, `SELECT etag FROM julyfs_files WHERE scope = $1 AND key = $2`, string(sc), key).Scan(&have)
		switch {
		case err == nil:
			return &hostfiles.ConflictError{Key: key, Want: cond.IfMatch, Have: have}
		case !errors.Is(err, pgx.ErrNoRows):
			return s.fail("delete "+hostfiles.Printable(key), err)
		}
		var dir bool
		if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM julyfs_files WHERE scope = $1 AND key >= $2 AND key < $3)`,
			string(sc), lo, hi).Scan(&dir); err != nil {
			return s.fail("delete "+hostfiles.Printable(key), err)
		}
		if dir {
			return hostfiles.ErrIsDir
		}
		return hostfiles.ErrNotFound
	}
	if err != nil {
		return s.fail("delete "+hostfiles.Printable(key), err)
	}
	s.wrote()
	s.publish(sc, hostfiles.Event{Key: key, Deleted: true})
	return nil
}

// listPage is how many rows one query of List fetches.
const listPage = 1000

// List yields the files under prefix from start in key order, a page of
// rows per query, each an index range scan on the primary key.
func (s *Store) List(ctx context.Context, sc hostfiles.Scope, prefix, start string) iter.Seq2[hostfiles.Meta, error] {
	return func(yield func(hostfiles.Meta, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(hostfiles.Meta{}, err)
			return
		}
		if err := sc.Validate(); err != nil {
			yield(hostfiles.Meta{}, err)
			return
		}
		lo := max(prefix, start)
		hi, bounded := upper(prefix)
		after := ""
		for {
			page, err := s.page(ctx, sc, lo, after, hi, bounded)
			if err != nil {
				yield(hostfiles.Meta{}, s.fail("list "+hostfiles.Printable(prefix), err))
				return
			}
			for _, m := range page {
				if !strings.HasPrefix(m.Key, prefix) {
					return
				}
				if !yield(m, nil) {
					return
				}
			}
			if len(page) < listPage {
				return
			}
			after = page[len(page)-1].Key
		}
	}
}

// ListQuery is the statement of one page of List: rows of scope $1 with
// $2 <= key, key > $3 and key < $4, in key order.
const ListQuery = `SELECT key, size, etag, mtime FROM julyfs_files
	WHERE scope = $1 AND key >= $2 AND key > $3 AND key < $4 ORDER BY key LIMIT ` + "1000"

func (s *Store) page(ctx context.Context, sc hostfiles.Scope, lo, after, hi string, bounded bool) ([]hostfiles.Meta, error) {
	if !bounded {
		hi = "\U0010FFFF"
	}
	rows, err := s.pool.Query(ctx, ListQuery, string(sc), lo, after, hi)
	if err != nil {
		return nil, err
	}
	out := make([]hostfiles.Meta, 0, 64)
	for rows.Next() {
		var m hostfiles.Meta
		if err := rows.Scan(&m.Key, &m.Size, &m.ETag, &m.ModTime); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// upper returns the least string above every string with prefix p, when
// p's last byte can be incremented within ASCII.
func upper(p string) (string, bool) {
	if p == "" || p[len(p)-1] >= 0x7f {
		return "", false
	}
	return p[:len(p)-1] + string(p[len(p)-1]+1), true
}

// payload is the JSON of a NOTIFY.
type payload struct {
	Seq     int64  `json:"s"`
	Scope   string `json:"c"`
	Key     string `json:"k"`
	Deleted bool   `json:"d"`
	ETag    string `json:"e"`
	Origin  string `json:"o"`
}

func decodePayload(s string) (payload, error) {
	var p payload
	err := json.Unmarshal([]byte(s), &p)
	return p, err
}
