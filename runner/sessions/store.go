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
// {"message": "turn interrupted"} so the log stays well formed, first
// recording each of its calls still waiting for approval as denied
// (approval.decided by "restart": the answer could only have reached the
// process that stopped).
//
// # Event types and forward compatibility
//
// A line is a valid event when it is a JSON object with the envelope's
// fields (a type, the next index, the session's id) and, for a type this
// version knows (the Type constants), data that decodes into that type's
// struct: data of the wrong shape ({"text": 5} in message.received) is
// corruption like bad JSON, refused with FILE:LINE. Fields a newer
// version added to a known type are ignored. An event of a type this
// version does not know was written by a newer july: Resume and Read skip
// it with one [Warning] per type (it stays in the file, and keeps its
// index), so an older july can still continue a newer one's session.
//
// # session.json
//
// session.json is a summary the events can rebuild: the turns, usage,
// last message and times from the events, the agent and model from the
// first turn.started that names them, the creation time from the session
// id (a ULID holds the time it was made); what no event holds (Parent) is
// left empty. A session.json that is missing, not JSON, names another
// session or has no creation time is rebuilt that way with a [Warning], and
// written again when the session is resumed; it is never overwritten
// with zero values. A session.json that cannot be written after a turn
// (a full disk) does not fail the turn, which is durable in the log: the
// Log keeps a warning ([Log.TakeWarnings]) and removes its temporary
// file, and the next Resume recomputes it. LastMessage is a preview of at
// most [PreviewBytes] bytes.
//
// # Bounds
//
// A message.received whose text is over the Store's MaxMessageBytes
// (default [DefaultMaxMessageBytes]) is refused by Append before anything
// is written ([CheckMessage] lets a caller refuse it before it creates a
// session).
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
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"
	fastjson "github.com/segmentio/encoding/json"

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
	// LastMessage is the start of the text of the last message.received,
	// at most PreviewBytes bytes (cut on a character boundary, "..."
	// added).
	LastMessage string `json:"lastMessage"`
	// Parent is the session whose Task call started this one (a
	// subagent's session), or "".
	Parent string `json:"parent,omitempty"`
	// ForkOf is the session and turn this one was forked from (july
	// fork), or nil.
	ForkOf *Fork `json:"forkOf,omitempty"`
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

// DefaultMaxMessageBytes is the largest message a session takes by
// default.
const DefaultMaxMessageBytes = 1 << 20

// PreviewBytes bounds Meta.LastMessage.
const PreviewBytes = 200

// CheckMessage returns an error when text is over limit bytes (0:
// DefaultMaxMessageBytes), naming the bound and how to raise it.
func CheckMessage(text string, limit int64) error {
	if limit <= 0 {
		limit = DefaultMaxMessageBytes
	}
	if int64(len(text)) > limit {
		return &MessageTooLargeError{Size: int64(len(text)), Limit: limit}
	}
	return nil
}

// MessageTooLargeError is a message over the bound.
type MessageTooLargeError struct {
	Size, Limit int64
}

func (e *MessageTooLargeError) Error() string {
	return fmt.Sprintf("message of %d bytes is over the limit of %d bytes (raise it with july run --max-message BYTES)", e.Size, e.Limit)
}

// preview is the start of s, at most PreviewBytes bytes.
func preview(s string) string {
	if len(s) <= PreviewBytes {
		return s
	}
	cut := PreviewBytes - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// Store is a state root's sessions, kept by a [Backend].
type Store struct {
	b Backend
	// MaxMessageBytes bounds a message.received's text; 0 is
	// DefaultMaxMessageBytes.
	MaxMessageBytes int64
}

// New returns the store of the sessions on disk under the state root
// dir (STATE/sessions/). Nothing is created until a session is.
func New(stateRoot string) *Store {
	return &Store{b: &disk{dir: filepath.Join(stateRoot, "sessions")}}
}

// NewWithBackend returns the store of the sessions b keeps.
func NewWithBackend(b Backend) *Store { return &Store{b: b} }

// Backend returns where the store keeps its sessions.
func (st *Store) Backend() Backend { return st.b }

// Dir returns the local directory under which each session keeps its
// own files (Dir()/<id>/); on disk, the directory of the sessions.
func (st *Store) Dir() string { return st.b.Dir() }

var idPattern = regexp.MustCompile(`^ses_[0-9A-HJKMNP-TV-Z]{26}$`)

// ValidID reports whether id has the form of a session id.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// NewID returns a new session id: "ses_" and a ULID.
func NewID() string { return IDPrefix + ulid.Make().String() }

// NewTurnID returns a new turn id: "turn_" and a ULID.
func NewTurnID() string { return "turn_" + ulid.Make().String() }

// Create makes a new session with meta's Agent and Model, holds it, and
// returns its log. It fails with a clear message when the state root is
// not writable.
func (st *Store) Create(meta Meta) (*Log, error) {
	// The id's time is the creation time (to the millisecond), so that a
	// session.json rebuilt from the id has the same one.
	now := time.Now().UTC()
	meta.ID = IDPrefix + ulid.MustNew(ulid.Timestamp(now), ulid.DefaultEntropy()).String()
	meta.Created, meta.Updated = now, now
	data, err := encodeMeta(meta)
	if err != nil {
		return nil, err
	}
	j, err := st.b.Create(meta.ID, data)
	if err != nil {
		return nil, err
	}
	return &Log{st: st, id: meta.ID, j: j, meta: meta, maxMessage: st.MaxMessageBytes}, nil
}

// Resume holds the session id and returns its log with the events read
// back (see the package doc for torn and corrupt lines), and what it
// recovered from.
func (st *Store) Resume(id string) (*Log, []Warning, error) {
	if err := st.checkID(id); err != nil {
		return nil, nil, err
	}
	j, err := st.b.Hold(id)
	if err != nil {
		return nil, nil, err
	}
	l := &Log{st: st, id: id, j: j, maxMessage: st.MaxMessageBytes}
	s, err := st.b.Load(id)
	if err != nil {
		l.Close()
		return nil, nil, err
	}
	meta, events, warns, good, lines, rebuilt, err := parse(s, id)
	if err != nil {
		l.Close()
		return nil, nil, err
	}
	if int64(len(s.Events)) > good {
		if err := j.Cut(good); err != nil {
			l.Close()
			return nil, nil, fmt.Errorf("session %s: cutting the torn last line: %w", id, err)
		}
	}
	l.meta, l.events, l.next = meta, events, lines
	if rebuilt {
		if err := l.writeMeta(); err != nil {
			warns = append(warns, Warning{fmt.Sprintf("session %s: %v (the rebuilt metadata is written again after the next turn)", id, err)})
		}
	}
	if turn := openTurn(events); turn != "" {
		denied, err := l.denyWaiting(turn)
		if err == nil {
			_, err = l.Append(TypeTurnFailed, turn, TurnFailed{Message: MessageInterrupted})
		}
		if err != nil {
			l.Close()
			return nil, nil, err
		}
		warns = append(warns, Warning{fmt.Sprintf("session %s: turn %s had not ended (the process stopped mid-turn): recorded it as interrupted%s", id, turn, denied)})
	}
	return l, warns, nil
}

// Read returns a session's metadata (recomputed from its events) and its
// events without holding it.
func (st *Store) Read(id string) (Meta, []Event, []Warning, error) {
	if err := st.checkID(id); err != nil {
		return Meta{}, nil, nil, err
	}
	s, err := st.b.Load(id)
	if err != nil {
		return Meta{}, nil, nil, err
	}
	meta, events, warns, _, _, _, err := parse(s, id)
	return meta, events, warns, err
}

// EventsFrom returns session id's events from index from on, without
// holding it (events of types this version does not know skipped).
func (st *Store) EventsFrom(id string, from int64) ([]Event, error) {
	if err := st.checkID(id); err != nil {
		return nil, err
	}
	if ef, ok := st.b.(EventsFromer); ok && from > 0 {
		data, err := ef.EventsFrom(id, from)
		if err != nil {
			return nil, err
		}
		events, _, _, _, err := parseEvents(data, st.b.Name(), id, from)
		return events, err
	}
	_, events, _, err := st.Read(id)
	if err != nil {
		return nil, err
	}
	i, _ := slices.BinarySearchFunc(events, from, func(ev Event, from int64) int { return cmp.Compare(ev.Index, from) })
	return events[i:], nil
}

// Exists returns nil when session id exists, else ErrUnknown (wrapped,
// with a message saying why).
func (st *Store) Exists(id string) error {
	if err := st.checkID(id); err != nil {
		return err
	}
	_, err := st.b.Load(id)
	return err
}

// Stale reports whether session id's events are newer than its
// session.json: a turn may be under way (or was cut short).
func (st *Store) Stale(id string) bool { return ValidID(id) && st.b.Stale(id) }

// LogSize says how far session id's log reaches, in the backend's unit
// (see [Backend]): a number that moves whenever an event is appended.
func (st *Store) LogSize(id string) (int64, error) {
	if err := st.checkID(id); err != nil {
		return 0, err
	}
	return st.b.LogSize(id)
}

// List returns the metadata of every session, oldest first: session.json,
// or the totals recomputed from the events when they are newer (a turn
// under way, or cut short by a crash). A session that can be read neither
// way is listed with its id only.
func (st *Store) List() ([]Meta, error) {
	ls, err := st.b.List()
	if err != nil {
		return nil, err
	}
	out := make([]Meta, 0, len(ls))
	for _, e := range ls {
		if !ValidID(e.ID) {
			continue
		}
		m, problem := parseMeta(e.Meta, e.MetaErr, e.ID)
		// session.json is rewritten at the end of each turn: a turn under
		// way, or a process that died in one, leaves it behind the events.
		if problem != "" || e.Stale {
			if s, err := st.b.Load(e.ID); err == nil {
				if fresh, _, _, _, _, _, err := parse(s, e.ID); err == nil {
					m = fresh
				} else if problem != "" {
					m = Meta{ID: e.ID, Created: idTime(e.ID)}
				}
			} else if problem != "" {
				m = Meta{ID: e.ID, Created: idTime(e.ID)}
			}
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Meta) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// checkID refuses what is not a session id.
func (st *Store) checkID(id string) error {
	if !ValidID(id) {
		return fmt.Errorf("%w: %q is not a session id (ses_ and 26 letters and digits; july sessions lists them)", ErrUnknown, id)
	}
	return nil
}

// UnknownError is the error a Backend returns for a session it does not
// have, where is where it looked.
func UnknownError(id, where string) error {
	return fmt.Errorf("%w: %s (not in %s; july sessions lists them)", ErrUnknown, id, where)
}

// InUseError is the error a Backend returns for a session another
// process holds.
func InUseError(id string) error { return fmt.Errorf("%w: %s", ErrInUse, id) }

// parseMeta decodes session.json; problem says why it cannot be used
// (missing, not JSON, another session's), and meta is then zero but for
// the id.
func parseMeta(data []byte, readErr error, id string) (meta Meta, problem string) {
	switch {
	case readErr != nil:
		return Meta{ID: id}, readErr.Error()
	case data == nil:
		return Meta{ID: id}, "missing"
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return Meta{ID: id}, "not JSON: " + err.Error()
	}
	if meta.ID != id {
		return Meta{ID: id}, fmt.Sprintf("it names session %q", meta.ID)
	}
	if meta.Created.IsZero() {
		return Meta{ID: id}, "no creation time"
	}
	return meta, ""
}

// encodeMeta is session.json's content for meta.
func encodeMeta(meta Meta) ([]byte, error) {
	data, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// idTime is when session id was made (its ULID's time), or zero.
func idTime(id string) time.Time {
	u, err := ulid.ParseStrict(strings.TrimPrefix(id, IDPrefix))
	if err != nil {
		return time.Time{}
	}
	return ulid.Time(u.Time()).UTC()
}

// parse reads and checks a stored session. good is the length of the
// valid prefix of its log (without a torn last line), lines the number
// of events in it (those of unknown types included). rebuilt reports a
// session.json that could not be used and was rebuilt from the events.
func parse(s Stored, id string) (meta Meta, events []Event, warns []Warning, good, lines int64, rebuilt bool, err error) {
	meta, problem := parseMeta(s.Meta, s.MetaErr, id)
	events, warns, good, lines, err = parseEvents(s.Events, s.Source, id, 0)
	if err != nil {
		return meta, nil, nil, 0, 0, false, err
	}
	meta.Turns, meta.Usage, meta.LastMessage = 0, model.Usage{}, ""
	for _, ev := range events {
		meta.account(ev)
	}
	if problem != "" {
		rebuilt = true
		meta.Created = idTime(id)
		if meta.Created.IsZero() && len(events) > 0 {
			meta.Created = events[0].At
		}
		if meta.Updated.IsZero() {
			meta.Updated = meta.Created
		}
		lost := ""
		if meta.Agent == "" {
			lost = "; the log does not name the agent, left empty"
		}
		warns = append(warns, Warning{fmt.Sprintf("session %s: %s is unusable (%s): rebuilt from %s%s", id, MetaFile, problem, EventsFile, lost)})
	}
	return meta, events, warns, good, lines, rebuilt, nil
}

// parseEvents checks the log lines in data, the first of which is event
// first; source names them in messages.
func parseEvents(data []byte, source, id string, first int64) (events []Event, warns []Warning, good, lines int64, err error) {
	end := bytes.LastIndexByte(data, '\n') + 1
	if end < len(data) {
		line := bytes.Count(data[:end], []byte{'\n'}) + 1
		warns = append(warns, Warning{fmt.Sprintf("%s:%d: ignoring a torn last line (%d bytes, an event cut short by a crash)", source, line, len(data)-end)})
	}
	events = make([]Event, 0, bytes.Count(data[:end], []byte{'\n'}))
	unknown := map[string]int{}
	var unknownOrder []string
	rest := data[:end]
	n := 1
	for ; len(rest) > 0; n++ {
		i := bytes.IndexByte(rest, '\n')
		line := rest[:i]
		rest = rest[i+1:]
		ev, reason := parseEvent(line, first+int64(n-1), id)
		if reason != "" {
			return nil, nil, 0, 0, &CorruptError{File: source, Line: int(first) + n, Reason: reason, Session: id}
		}
		if !Known(ev.Type) {
			if unknown[ev.Type] == 0 {
				unknownOrder = append(unknownOrder, ev.Type)
			}
			unknown[ev.Type]++
			continue
		}
		events = append(events, ev)
	}
	for _, typ := range unknownOrder {
		warns = append(warns, Warning{fmt.Sprintf("%s: skipping %d event(s) of type %q, unknown to this version of july (written by a newer one?)", source, unknown[typ], typ)})
	}
	return events, warns, int64(end), first + int64(n-1), nil
}

// parseEvent decodes and checks one line, the index'th event of session
// id; reason says what is wrong with it.
func parseEvent(line []byte, index int64, id string) (ev Event, reason string) {
	if err := fastjson.Unmarshal(line, &ev); err != nil {
		return ev, "not JSON: " + err.Error()
	}
	switch {
	case ev.Type == "":
		return ev, "no type"
	case ev.Index != index:
		return ev, fmt.Sprintf("index %d, want %d", ev.Index, index)
	case ev.SessionID != id:
		return ev, fmt.Sprintf("sessionId %q", ev.SessionID)
	}
	newData := dataTypes[ev.Type]
	if newData == nil {
		return ev, "" // a newer version's type: the caller skips it
	}
	d := bytes.TrimLeft(ev.Data, " \t\r\n")
	if len(d) == 0 || d[0] != '{' {
		return ev, fmt.Sprintf("%s data is not a JSON object", ev.Type)
	}
	if err := fastjson.Unmarshal(ev.Data, newData()); err != nil {
		return ev, fmt.Sprintf("%s data: %v", ev.Type, err)
	}
	return ev, ""
}

// account updates the totals with one event.
func (m *Meta) account(ev Event) {
	switch ev.Type {
	case TypeMessageReceived:
		var d MessageReceived
		if fastjson.Unmarshal(ev.Data, &d) == nil {
			m.LastMessage = preview(d.Text)
		}
	case TypeTurnStarted:
		m.Turns++
		var d TurnStarted
		if fastjson.Unmarshal(ev.Data, &d) == nil {
			if d.Agent != "" && m.Agent == "" {
				m.Agent = d.Agent
			}
			if d.Model != "" && m.Model == "" {
				m.Model = d.Model
			}
		}
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
	st *Store
	id string
	j  Journal

	mu         sync.Mutex
	meta       Meta
	events     []Event
	next       int64
	buf        bytes.Buffer
	maxMessage int64
	warnings   []Warning
	closed     bool
}

// ID returns the session's id.
func (l *Log) ID() string { return l.id }

// Dir returns the session's local directory, for the files that are not
// its log (on disk, where its log is too).
func (l *Log) Dir() string { return filepath.Join(l.st.Dir(), l.id) }

// Store returns the store the session is in.
func (l *Log) Store() *Store { return l.st }

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
// makes it durable before returning it. A turn's end (turn.completed or
// turn.failed) also rewrites session.json; when that fails the event is
// still durable, and the failure is a warning ([Log.TakeWarnings]), not
// an error. A message.received over the message bound is refused before
// anything is written.
func (l *Log) Append(typ, turnID string, data any) (Event, error) {
	if typ == TypeMessageReceived {
		var text string
		switch d := data.(type) {
		case MessageReceived:
			text = d.Text
		case *MessageReceived:
			text = d.Text
		}
		if err := CheckMessage(text, l.maxMessage); err != nil {
			return Event{}, fmt.Errorf("session %s: %w", l.id, err)
		}
	}
	raw, err := marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("session %s: encoding %s: %w", l.id, typ, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return Event{}, fmt.Errorf("session %s: closed", l.id)
	}
	ev := Event{Type: typ, Index: l.next, SessionID: l.id, TurnID: turnID, At: time.Now().UTC(), Data: raw}
	l.buf.Reset()
	enc := json.NewEncoder(&l.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil { // Encode ends the line with '\n'
		return Event{}, err
	}
	if err := l.j.Append(ev.Index, l.buf.Bytes()); err != nil {
		return Event{}, fmt.Errorf("session %s: appending %s: %w", l.id, typ, err)
	}
	l.next++
	l.events = append(l.events, ev)
	l.meta.account(ev)
	if typ == TypeTurnCompleted || typ == TypeTurnFailed {
		if err := l.writeMeta(); err != nil {
			l.warnings = append(l.warnings, Warning{fmt.Sprintf("%v: the turn is kept in %s; %s is recomputed when the session is resumed", err, EventsFile, MetaFile)})
		}
	}
	return ev, nil
}

// TakeWarnings returns what went wrong without failing an Append (a
// session.json that could not be written) since the last call, and
// forgets it.
func (l *Log) TakeWarnings() []Warning {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.warnings
	l.warnings = nil
	return w
}

// writeMeta replaces session.json (l.mu held, or l not yet shared).
func (l *Log) writeMeta() error {
	data, err := encodeMeta(l.meta)
	if err == nil {
		err = l.j.WriteMeta(data)
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
	if l.closed {
		return nil
	}
	l.closed = true
	return l.j.Close()
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
