// Package sessions keeps an agent's sessions durable under a state root:
//
//	STATE/sessions/<id>/session.json    metadata: agent, model, created, turns, token totals
//	STATE/sessions/<id>/events.ndjson   the session's events, one JSON object a line
//	STATE/sessions/<id>/lock            held (flock) by the one process writing the session
//
// Every event carries the spec's envelope {type, index, sessionId, turnId,
// at, data} (see [Event]) and is appended and fsynced before Append
// returns: a crash loses at most the event being written. Session ids are
// "ses_" and a ULID, so they sort by creation time.
//
// # Errors and recovery
//
// Reopening a session ([Store.Resume]) reads the whole log. A last line
// without its newline is an event cut short by a crash: it is ignored with
// a [Warning] and cut off so the next event starts on a fresh line. A
// complete line that is not a valid event (bad JSON, a wrong index or
// session id) anywhere is corruption: Resume refuses the session with a
// *[CorruptError] naming the file and line, and never rewrites it. A
// session with no such id is [ErrUnknown]; one another process holds is
// [ErrInUse] ("session in use: <id>").
//
// A turn whose process died before it ended has turn.started but no
// turn.completed or turn.failed; Resume closes it with turn.failed
// {"message": "turn interrupted"} so the log stays well formed.
//
// # Concurrency
//
// A [Log] is one process's exclusive handle on a session (an flock on its
// lock file, held until Close); its methods are safe for concurrent use.
// Readers ([Store.Read], [Store.List]) take no lock: they may see a last
// line being written, which they ignore like a torn one.
package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
	fastjson "github.com/segmentio/encoding/json"
	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/runner/model"
)

// File names inside a session's directory.
const (
	MetaFile   = "session.json"
	EventsFile = "events.ndjson"
	LockFile   = "lock"
)

// IDPrefix starts every session id.
const IDPrefix = "ses_"

// ErrInUse is a session another process holds.
var ErrInUse = errors.New("session in use")

// ErrUnknown is a session id the state root does not have.
var ErrUnknown = errors.New("unknown session")

// Meta is session.json: what `july sessions` lists without reading the
// events. It is rewritten (atomically) after each turn; the events are the
// record, and Resume recomputes Turns, Usage and LastMessage from them.
type Meta struct {
	ID      string    `json:"id"`
	Agent   string    `json:"agent"`
	Model   string    `json:"model"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Turns counts turn.started events.
	Turns int `json:"turns"`
	// Usage sums the usage of finished turns.
	Usage model.Usage `json:"usage"`
	// LastMessage is the text of the last message.received.
	LastMessage string `json:"lastMessage"`
	// Parent is the session whose Task call started this one (a
	// subagent's session), or "".
	Parent string `json:"parent,omitempty"`
	// Mode is "task" for a session a schedule started (it runs its one
	// prompt and is not followed), "" for a conversation.
	Mode string `json:"mode,omitempty"`
	// Purpose says why the session exists ("schedule"), or "".
	Purpose string `json:"purpose,omitempty"`
	// ScheduleID is the schedule whose firing started the session, or "".
	ScheduleID string `json:"scheduleId,omitempty"`
}

// Warning is something Resume or Read recovered from.
type Warning struct {
	Message string
}

func (w Warning) String() string { return w.Message }

// CorruptError is a log line that is not a valid event.
type CorruptError struct {
	// File is the events file.
	File string
	// Line is the 1-based line number.
	Line int
	// Reason says what is wrong with the line.
	Reason string
	// Session is the session's id.
	Session string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s:%d: corrupt event (%s): refusing to continue session %s; the file is left as it is", e.File, e.Line, e.Reason, e.Session)
}

// Store is a state root's sessions.
type Store struct {
	dir string // STATE/sessions
}

// New returns the store under the state root dir. Nothing is created
// until a session is.
func New(stateRoot string) *Store {
	return &Store{dir: filepath.Join(stateRoot, "sessions")}
}

// Dir returns the directory that holds the sessions.
func (st *Store) Dir() string { return st.dir }

var idPattern = regexp.MustCompile(`^ses_[0-9A-HJKMNP-TV-Z]{26}$`)

// ValidID reports whether id has the form of a session id.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// NewID returns a new session id: "ses_" and a ULID.
func NewID() string { return IDPrefix + ulid.Make().String() }

// NewTurnID returns a new turn id: "turn_" and a ULID.
func NewTurnID() string { return "turn_" + ulid.Make().String() }

func (st *Store) sessionDir(id string) string { return filepath.Join(st.dir, id) }

// Create makes a new session with meta's Agent and Model, holds it, and
// returns its log. It fails with a clear message when the state root is
// not writable.
func (st *Store) Create(meta Meta) (*Log, error) {
	if err := os.MkdirAll(st.dir, 0o755); err != nil {
		return nil, fmt.Errorf("state root %s is not writable: %w", filepath.Dir(st.dir), unwrapPath(err))
	}
	meta.ID = NewID()
	now := time.Now().UTC()
	meta.Created, meta.Updated = now, now
	dir := st.sessionDir(meta.ID)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("state root %s is not writable: %w", filepath.Dir(st.dir), unwrapPath(err))
	}
	l, err := openLog(dir, meta.ID)
	if err != nil {
		return nil, err
	}
	l.meta = meta
	if err := l.writeMeta(); err != nil {
		l.Close()
		return nil, err
	}
	if err := syncDir(dir); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Resume holds the session id and returns its log with the events read
// back (see the package doc for torn and corrupt lines), and what it
// recovered from.
func (st *Store) Resume(id string) (*Log, []Warning, error) {
	dir, err := st.existing(id)
	if err != nil {
		return nil, nil, err
	}
	l, err := openLog(dir, id)
	if err != nil {
		return nil, nil, err
	}
	meta, events, warns, good, err := load(dir, id)
	if err != nil {
		l.Close()
		return nil, nil, err
	}
	if fi, err := l.f.Stat(); err == nil && fi.Size() > good {
		if err := l.f.Truncate(good); err != nil {
			l.Close()
			return nil, nil, fmt.Errorf("session %s: cutting the torn last line: %w", id, err)
		}
	}
	l.meta, l.events, l.next = meta, events, int64(len(events))
	if turn := openTurn(events); turn != "" {
		if _, err := l.Append(TypeTurnFailed, turn, TurnFailed{Message: MessageInterrupted}); err != nil {
			l.Close()
			return nil, nil, err
		}
		warns = append(warns, Warning{fmt.Sprintf("session %s: turn %s had not ended (the process stopped mid-turn): recorded it as interrupted", id, turn)})
	}
	return l, warns, nil
}

// Read returns a session's metadata (recomputed from its events) and its
// events without holding it.
func (st *Store) Read(id string) (Meta, []Event, []Warning, error) {
	dir, err := st.existing(id)
	if err != nil {
		return Meta{}, nil, nil, err
	}
	meta, events, warns, _, err := load(dir, id)
	return meta, events, warns, err
}

// List returns the metadata of every session, oldest first: session.json,
// or the totals recomputed from the events when they are newer (a turn
// under way, or cut short by a crash). A session that can be read neither
// way is listed with its id only.
func (st *Store) List() ([]Meta, error) {
	entries, err := os.ReadDir(st.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Meta
	for _, e := range entries {
		if !e.IsDir() || !ValidID(e.Name()) {
			continue
		}
		dir := filepath.Join(st.dir, e.Name())
		m := Meta{ID: e.Name()}
		if data, err := os.ReadFile(filepath.Join(dir, MetaFile)); err == nil {
			json.Unmarshal(data, &m)
			m.ID = e.Name()
		}
		// session.json is rewritten at the end of each turn: a turn under
		// way, or a process that died in one, leaves it behind the events.
		if mi, err := os.Stat(filepath.Join(dir, MetaFile)); err != nil || newer(filepath.Join(dir, EventsFile), mi.ModTime()) {
			if fresh, _, _, _, err := load(dir, e.Name()); err == nil {
				m = fresh
			}
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Meta) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// newer reports whether file was modified after t.
func newer(file string, t time.Time) bool {
	fi, err := os.Stat(file)
	return err == nil && fi.ModTime().After(t)
}

// existing returns the directory of session id, or ErrUnknown.
func (st *Store) existing(id string) (string, error) {
	if !ValidID(id) {
		return "", fmt.Errorf("%w: %q is not a session id (ses_ and 26 letters and digits; july sessions lists them)", ErrUnknown, id)
	}
	dir := st.sessionDir(id)
	if _, err := os.Stat(filepath.Join(dir, EventsFile)); err != nil {
		return "", fmt.Errorf("%w: %s (not in %s; july sessions lists them)", ErrUnknown, id, st.dir)
	}
	return dir, nil
}

// load reads and checks a session's events. good is the length of the
// valid prefix (without a torn last line).
func load(dir, id string) (meta Meta, events []Event, warns []Warning, good int64, err error) {
	file := filepath.Join(dir, EventsFile)
	data, err := os.ReadFile(file)
	if err != nil {
		return meta, nil, nil, 0, fmt.Errorf("session %s: %w", id, err)
	}
	if mdata, err := os.ReadFile(filepath.Join(dir, MetaFile)); err == nil {
		json.Unmarshal(mdata, &meta)
	}
	meta.ID = id
	end := bytes.LastIndexByte(data, '\n') + 1
	if end < len(data) {
		line := bytes.Count(data[:end], []byte{'\n'}) + 1
		warns = append(warns, Warning{fmt.Sprintf("%s:%d: ignoring a torn last line (%d bytes, an event cut short by a crash)", file, line, len(data)-end)})
	}
	events = make([]Event, 0, bytes.Count(data[:end], []byte{'\n'}))
	rest := data[:end]
	for n := 1; len(rest) > 0; n++ {
		i := bytes.IndexByte(rest, '\n')
		line := rest[:i]
		rest = rest[i+1:]
		var ev Event
		if err := fastjson.Unmarshal(line, &ev); err != nil {
			return meta, nil, nil, 0, &CorruptError{File: file, Line: n, Reason: "not JSON: " + err.Error(), Session: id}
		}
		switch {
		case ev.Type == "":
			return meta, nil, nil, 0, &CorruptError{File: file, Line: n, Reason: "no type", Session: id}
		case ev.Index != int64(n-1):
			return meta, nil, nil, 0, &CorruptError{File: file, Line: n, Reason: fmt.Sprintf("index %d, want %d", ev.Index, n-1), Session: id}
		case ev.SessionID != id:
			return meta, nil, nil, 0, &CorruptError{File: file, Line: n, Reason: fmt.Sprintf("sessionId %q", ev.SessionID), Session: id}
		}
		events = append(events, ev)
	}
	meta.Turns, meta.Usage, meta.LastMessage = 0, model.Usage{}, ""
	for _, ev := range events {
		meta.account(ev)
	}
	return meta, events, warns, int64(end), nil
}

// account updates the totals with one event.
func (m *Meta) account(ev Event) {
	switch ev.Type {
	case TypeMessageReceived:
		var d MessageReceived
		if fastjson.Unmarshal(ev.Data, &d) == nil {
			m.LastMessage = d.Text
		}
	case TypeTurnStarted:
		m.Turns++
	case TypeTurnCompleted:
		var d TurnCompleted
		if fastjson.Unmarshal(ev.Data, &d) == nil {
			m.Usage.Add(d.Usage)
		}
	case TypeTurnFailed:
		var d TurnFailed
		if fastjson.Unmarshal(ev.Data, &d) == nil && d.Usage != nil {
			m.Usage.Add(*d.Usage)
		}
	}
	if !ev.At.IsZero() {
		m.Updated = ev.At
	}
}

// openTurn returns the id of a turn that started and did not end, or "".
func openTurn(events []Event) string {
	open := ""
	for _, ev := range events {
		switch ev.Type {
		case TypeTurnStarted:
			open = ev.TurnID
		case TypeTurnCompleted, TypeTurnFailed:
			if ev.TurnID == open {
				open = ""
			}
		}
	}
	return open
}

// Log is one process's handle on a session: it appends events and keeps
// session.json current.
type Log struct {
	dir, id string
	lock    *os.File
	f       *os.File

	mu     sync.Mutex
	meta   Meta
	events []Event
	next   int64
	buf    bytes.Buffer
}

// openLog takes the session's lock and opens its events file for appending.
func openLog(dir, id string) (*Log, error) {
	lock, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, unwrapPath(err))
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrInUse, id)
		}
		return nil, fmt.Errorf("session %s: locking: %w", id, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, EventsFile), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("session %s: %w", id, unwrapPath(err))
	}
	return &Log{dir: dir, id: id, lock: lock, f: f}, nil
}

// ID returns the session's id.
func (l *Log) ID() string { return l.id }

// Dir returns the session's directory.
func (l *Log) Dir() string { return l.dir }

// Meta returns the session's metadata as of the last event.
func (l *Log) Meta() Meta {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.meta
}

// Events returns the events read back by Resume and appended since. The
// slice is the caller's; the Data of each event is shared.
func (l *Log) Events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

// Append writes one event with data (marshalled to JSON) to the log and
// fsyncs it before returning it. A turn's end (turn.completed or
// turn.failed) also rewrites session.json.
func (l *Log) Append(typ, turnID string, data any) (Event, error) {
	raw, err := marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("session %s: encoding %s: %w", l.id, typ, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return Event{}, fmt.Errorf("session %s: closed", l.id)
	}
	ev := Event{Type: typ, Index: l.next, SessionID: l.id, TurnID: turnID, At: time.Now().UTC(), Data: raw}
	l.buf.Reset()
	enc := json.NewEncoder(&l.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil { // Encode ends the line with '\n'
		return Event{}, err
	}
	if _, err := l.f.Write(l.buf.Bytes()); err != nil {
		return Event{}, fmt.Errorf("session %s: appending %s: %w", l.id, typ, err)
	}
	if err := l.f.Sync(); err != nil {
		return Event{}, fmt.Errorf("session %s: syncing %s: %w", l.id, typ, err)
	}
	l.next++
	l.events = append(l.events, ev)
	l.meta.account(ev)
	if typ == TypeTurnCompleted || typ == TypeTurnFailed {
		if err := l.writeMeta(); err != nil {
			return ev, err
		}
	}
	return ev, nil
}

// writeMeta replaces session.json atomically (write, fsync, rename).
func (l *Log) writeMeta() error {
	data, err := json.MarshalIndent(l.meta, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(l.dir, MetaFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("session %s: %w", l.id, unwrapPath(err))
	}
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(l.dir, MetaFile))
	}
	if err != nil {
		return fmt.Errorf("session %s: writing %s: %w", l.id, MetaFile, err)
	}
	return nil
}

// Close releases the session. The log must not be used afterwards.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if cerr := l.lock.Close(); err == nil { // closing drops the flock
		err = cerr
	}
	return err
}

// marshal encodes v as JSON without escaping <, > and & (the log is not
// HTML), with no trailing newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}
