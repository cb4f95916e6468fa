package sessions

import "errors"

// This file is where a Store keeps its sessions: a Backend. The disk
// under a state root is the default ([New]); package
// runner/sessions/pgstore keeps them in PostgreSQL ([NewWithBackend]).
// A Backend stores bytes (session.json's JSON, the log's lines) and holds
// sessions; the Store does everything else (ids, event envelopes, the
// checks on what it reads back, the totals), so every backend behaves
// the same and one suite (package runner/sessions/sessionstest) tests
// them all.

// Backend keeps a Store's sessions. Its methods are safe for concurrent
// use. Ids it is given are valid session ids ([ValidID]).
type Backend interface {
	// Name says where the sessions are kept, for messages (a directory,
	// or a database URL without its password).
	Name() string
	// Dir is the local directory under which each session keeps the
	// files that are not its log (Dir()/<id>/: temp.json, todos.json, a
	// copy-on-write layer).
	Dir() string
	// Create makes session id, empty, with meta as its session.json, and
	// holds it. It fails with a clear message when the sessions cannot
	// be written.
	Create(id string, meta []byte) (Journal, error)
	// Hold holds the existing session id: ErrUnknown (wrapped) when
	// there is none, ErrInUse (wrapped) when another process holds it.
	Hold(id string) (Journal, error)
	// Load reads session id, held or not: ErrUnknown (wrapped) when
	// there is none.
	Load(id string) (Stored, error)
	// List returns every session, in any order.
	List() ([]Listing, error)
	// Stale reports whether session id has events newer than its stored
	// metadata (a turn under way, or one cut short by a crash).
	Stale(id string) bool
	// LogSize says, cheaply, how far session id's log reaches, in a unit
	// of the backend's (bytes on disk, events in a database) that grows
	// with every event appended: a process following a session another
	// one holds reads the log again only when it moved.
	LogSize(id string) (int64, error)
}

// EventsFromer is a Backend that reads a session's log from an index
// without reading the whole of it; Store.EventsFrom falls back to Load.
type EventsFromer interface {
	// EventsFrom returns the lines of session id's log from event index
	// from on, as Stored.Events has them.
	EventsFrom(id string, from int64) ([]byte, error)
}

// Stored is a session as a Backend keeps it.
type Stored struct {
	// Meta is session.json's content; nil when there is none, and then
	// MetaErr, when set, says why it could not be read.
	Meta    []byte
	MetaErr error
	// Events is the log: one JSON event a line, each line ending in a
	// newline except a last one cut short by a crash.
	Events []byte
	// Source names the log in messages (the events file's path).
	Source string
}

// Listing is one session of Backend.List.
type Listing struct {
	ID string
	// Meta and MetaErr are as in Stored.
	Meta    []byte
	MetaErr error
	// Stale is Backend.Stale of the session.
	Stale bool
}

// Journal is one process's hold on a session. Its methods are called
// under the Log's lock, one at a time.
type Journal interface {
	// Append writes line (one event, index, ending in a newline) after
	// the log's last line, durably: it is kept once Append returns.
	Append(index int64, line []byte) error
	// WriteMeta replaces session.json, atomically.
	WriteMeta(meta []byte) error
	// Cut drops the log after its first size bytes (a torn last line).
	Cut(size int64) error
	// Close releases the session.
	Close() error
}

// ErrUnavailable is what a Backend's error wraps when it cannot reach
// where the sessions are (a database that is down or restarting): the
// same call may work again later.
var ErrUnavailable = errors.New("session store unavailable")
