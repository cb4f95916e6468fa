// Package httpapi is july serve's HTTP API: each agent's sessions
// (package runner/host) under /<slug>/v1/, with their events as
// Server-Sent Events, and the schedule and reminder routes over package
// runner/schedule. docs/serve.md is the reference with examples.
//
//	GET  /<slug>/v1/info                          agent, model, tools, result
//	POST /<slug>/v1/sessions                      {"message"} → {"sessionId","turnId"}
//	GET  /<slug>/v1/sessions                      every session: meta, turns, state
//	GET  /<slug>/v1/sessions/{id}                 one session
//	POST /<slug>/v1/sessions/{id}/messages        {"message"} → {"sessionId","turnId"} (queued behind a running turn)
//	POST /<slug>/v1/sessions/{id}/cancel          the running turn ends as "turn interrupted"
//	GET  /<slug>/v1/sessions/{id}/events          SSE: the log, then live (Last-Event-ID, ?after=N)
//	GET  /<slug>/v1/sessions/{id}/approvals       the calls waiting for approval (approvals.go)
//	POST /<slug>/v1/sessions/{id}/approvals/{callId} {"allow": bool} decides one: 404 unknown, 409 decided
//	POST /<slug>/v1/sessions/{id}/reminders       {delay|every|cron, prompt, until?, purpose?}
//	GET  /<slug>/v1/sessions/{id}/reminders       the session's reminders
//	GET  /<slug>/v1/schedules                     the agent's schedules, next and last fire
//	POST /<slug>/v1/dev/schedules/{id}            (--dev) fire a schedule → {"scheduleId","sessionIds"}
//	GET  /<slug>/v1/dev/reminders                 (--dev) every reminder
//	POST /<slug>/v1/dev/reminders/{id}            (--dev) fire a reminder
//	GET  /<slug>/v1/sessions/{id}/checkpoints     a copy-on-write session's checkpoints (cow.go)
//	GET  /<slug>/v1/sessions/{id}/diff            ?turn=N or ?from=A&to=B → {"files"}
//	POST /<slug>/v1/sessions/{id}/rewind|fork|apply
//	GET  /<slug>/v1/sessions/{id}/tree?path=/d    the directory's entries in the session's tree, with sizes
//	GET  /<slug>/v1/sessions/{id}/file?path=/f    the file's bytes (bounded, sandboxed content type)
//	GET  /v1/agents                               the agents served, and whether dev routes are
//
// With Options.Page, GET /, /<slug>/ and /<slug>/sessions/{id} serve
// that page (july serve's playground).
//
// # Errors
//
// Every error is JSON {"error": {"code", "message"}}: 400 bad_request (a
// body that is not the expected JSON, an empty message, a bad reminder),
// 401/403 from the access rules (package httpguard), 404 not_found (an
// unknown or malformed session, reminder or schedule id, or route), 409
// session_in_use (another process holds the session), not_running (a
// cancel with no turn), other_agent or already_decided (an approval), 413 body_too_large (over
// MaxBodyBytes), 429 queue_full, 503 shutting_down, 500 internal.
//
// # Streams
//
// An events stream sends each event as "id: <index>" and "data: <event
// JSON>" (no event: field, so EventSource's onmessage gets them all; the
// type is in the JSON), from the index after Last-Event-ID, or after
// ?after=N, or from 0. A comment line is sent every Options.Heartbeat.
// A write that takes longer than Options.WriteTimeout ends the stream (a
// stuck client); the client's disconnect ends it at once; CloseStreams
// ends them all.
//
// # Concurrency
//
// A Server is safe for concurrent use; each request runs on its own
// goroutine and a stream never blocks a turn.
package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/approval"
	"github.com/julyfs/julyfs/runner/host"
	"github.com/julyfs/julyfs/runner/httpguard"
	"github.com/julyfs/julyfs/runner/schedule"
	"github.com/julyfs/julyfs/runner/sessions"
)

// Defaults of Options.
const (
	DefaultMaxBodyBytes = 1 << 20
	DefaultHeartbeat    = 15 * time.Second
	DefaultWriteTimeout = 30 * time.Second
)

// Agent is one agent the server serves.
type Agent struct {
	// Host runs the agent's sessions. Required.
	Host *host.Host
	// Tools are the tool names /v1/info lists.
	Tools []string
	// Scheduler serves the schedules (nil: none).
	Scheduler *schedule.Scheduler
	// Reminders serves the reminders (nil: reminder routes answer 404).
	Reminders *schedule.Reminders
	// Approvals is the queue the host's sessions ask in (the host's
	// runner.SessionOptions.Approver); nil: nothing is waiting.
	Approvals *approval.Queue
}

// Options configure a Server.
type Options struct {
	// Agents are served under /<agent.yaml name>/.
	Agents []Agent
	// Token, when set, is the bearer token every request must carry.
	Token string
	// Dev serves the /v1/dev/ routes (july serve --dev).
	Dev bool
	// MaxBodyBytes bounds a request body (0: DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// Heartbeat is the interval of a stream's comment lines (0:
	// DefaultHeartbeat).
	Heartbeat time.Duration
	// WriteTimeout bounds one write to a stream (0: DefaultWriteTimeout).
	WriteTimeout time.Duration
	// AccessLog, when set, gets one JSON line per request.
	AccessLog io.Writer

	// Page, when set, is the web page served at /, /<slug>/ and
	// /<slug>/sessions/{id}, with its files under PageAssets (package
	// runner/playground); see withPage for its access rules.
	Page http.Handler
	// MaxFileBytes bounds a file the file route serves (0:
	// DefaultMaxFileBytes).
	MaxFileBytes int64
	// MaxTreeEntries bounds a directory the tree route lists (0:
	// DefaultMaxTreeEntries).
	MaxTreeEntries int
}

// Server is the HTTP API over one or more agents.
type Server struct {
	opts    Options
	handler http.Handler
	logMu   sync.Mutex

	closeOnce sync.Once
	closing   chan struct{}
}

var slugPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// New returns the server for opts. Two agents with one name, or a name
// that is not a URL path segment, are an error.
func New(opts Options) (*Server, error) {
	if len(opts.Agents) == 0 {
		return nil, errors.New("httpapi: no agent to serve")
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.MaxTreeEntries <= 0 {
		opts.MaxTreeEntries = DefaultMaxTreeEntries
	}
	s := &Server{opts: opts, closing: make(chan struct{})}
	mux := http.NewServeMux()
	seen := map[string]string{}
	var slugs []string
	for _, ag := range opts.Agents {
		if ag.Host == nil {
			return nil, errors.New("httpapi: an agent without a host")
		}
		a := ag.Host.Agent()
		slug := a.Config.Name
		if !slugPattern.MatchString(slug) {
			return nil, fmt.Errorf("agent %s (%s): its name %q is not a URL path segment (letters, digits, '.', '_', '-')", slug, a.Dir, slug)
		}
		if dir, ok := seen[slug]; ok {
			return nil, fmt.Errorf("agents %s and %s are both named %q: each agent is served under its name, which must differ", dir, a.Dir, slug)
		}
		seen[slug] = a.Dir
		slugs = append(slugs, slug)
		s.routes(mux, "/"+slug, &agentAPI{s: s, Agent: ag})
		s.cowRoutes(mux, "/"+slug, &agentAPI{s: s, Agent: ag})
	}
	mux.HandleFunc("GET /v1/agents", s.agents)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no route %s %s: the API is under /<agent name>/v1/", r.Method, r.URL.Path))
	})
	var h http.Handler = mux
	h = httpguard.Handler(h, httpguard.Options{Token: opts.Token, Deny: func(w http.ResponseWriter, _ *http.Request, status int, code, msg string) {
		writeError(w, status, code, msg)
	}})
	h = s.withPage(h, slugs)
	if opts.AccessLog != nil {
		h = s.logged(h)
	}
	s.handler = h
	return s, nil
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// CloseStreams ends every events stream (and refuses new ones), so an
// http.Server's Shutdown does not wait for them.
func (s *Server) CloseStreams() { s.closeOnce.Do(func() { close(s.closing) }) }

// agentAPI is one agent's routes.
type agentAPI struct {
	s *Server
	Agent
}

func (s *Server) routes(mux *http.ServeMux, base string, a *agentAPI) {
	mux.HandleFunc("GET "+base+"/v1/info", a.info)
	mux.HandleFunc("POST "+base+"/v1/sessions", a.create)
	mux.HandleFunc("GET "+base+"/v1/sessions", a.list)
	mux.HandleFunc("GET "+base+"/v1/sessions/{id}", a.get)
	mux.HandleFunc("POST "+base+"/v1/sessions/{id}/messages", a.send)
	mux.HandleFunc("POST "+base+"/v1/sessions/{id}/cancel", a.cancel)
	mux.HandleFunc("GET "+base+"/v1/sessions/{id}/events", a.events)
	mux.HandleFunc("POST "+base+"/v1/sessions/{id}/reminders", a.createReminder)
	mux.HandleFunc("GET "+base+"/v1/sessions/{id}/reminders", a.sessionReminders)
	mux.HandleFunc("GET "+base+"/v1/schedules", a.schedules)
	mux.HandleFunc("POST "+base+"/v1/dev/schedules/{id}", a.dev(a.dispatch))
	mux.HandleFunc("GET "+base+"/v1/dev/reminders", a.dev(a.allReminders))
	mux.HandleFunc("POST "+base+"/v1/dev/reminders/{id}", a.dev(a.fireReminder))
	a.approvalRoutes(mux, base)
	mux.HandleFunc("GET "+base+"/v1/sessions/{id}/tree", a.tree)
	mux.HandleFunc("GET "+base+"/v1/sessions/{id}/file", a.file)
}

func (a *agentAPI) dev(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !a.s.opts.Dev {
			writeError(w, http.StatusNotFound, "not_found", "the /v1/dev/ routes are served by july serve --dev only")
			return
		}
		h(w, r)
	}
}

// Info is GET /v1/info.
type Info struct {
	Agent string   `json:"agent"`
	Model string   `json:"model"`
	Tools []string `json:"tools"`
	// Result reports an end-of-turn commit (the spec's result.md).
	Result bool `json:"result"`
}

func (a *agentAPI) info(w http.ResponseWriter, r *http.Request) {
	tools := a.Tools
	if tools == nil {
		tools = []string{}
	}
	writeJSON(w, http.StatusOK, Info{Agent: a.Host.Agent().Config.Name, Model: a.Host.Model().Name(), Tools: tools, Result: a.Host.Result()})
}

// messageBody is the body of create and send.
type messageBody struct {
	Message *string `json:"message"`
}

func (a *agentAPI) readMessage(w http.ResponseWriter, r *http.Request) (string, bool) {
	var b messageBody
	if !a.s.decode(w, r, &b) {
		return "", false
	}
	if b.Message == nil || *b.Message == "" {
		writeError(w, http.StatusBadRequest, "bad_request", `the body needs a non-empty "message": {"message": "..."}`)
		return "", false
	}
	return *b.Message, true
}

func (a *agentAPI) create(w http.ResponseWriter, r *http.Request) {
	text, ok := a.readMessage(w, r)
	if !ok {
		return
	}
	st, err := a.Host.Create(r.Context(), host.Message{Text: text}, host.CreateOptions{})
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, st)
}

func (a *agentAPI) send(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	text, ok := a.readMessage(w, r)
	if !ok {
		return
	}
	st, err := a.Host.Send(r.Context(), id, host.Message{Text: text})
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, st)
}

func (a *agentAPI) list(w http.ResponseWriter, r *http.Request) {
	list, err := a.Host.List()
	if err != nil {
		writeErr(w, err)
		return
	}
	if list == nil {
		list = []host.Info{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": list})
}

func (a *agentAPI) get(w http.ResponseWriter, r *http.Request) {
	info, err := a.Host.Get(r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

func (a *agentAPI) cancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	turn, err := a.Host.Cancel(id)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, host.Started{SessionID: id, TurnID: turn})
}

func (a *agentAPI) createReminder(w http.ResponseWriter, r *http.Request) {
	if a.Reminders == nil {
		writeError(w, http.StatusNotFound, "not_found", "reminders are not served by this server")
		return
	}
	id := r.PathValue("id")
	var spec schedule.ReminderSpec
	if !a.s.decode(w, r, &spec) {
		return
	}
	if _, err := a.Host.Get(id); err != nil {
		writeErr(w, err)
		return
	}
	spec.SessionID = id
	rem, err := a.Reminders.Create(r.Context(), spec)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, rem)
}

func (a *agentAPI) sessionReminders(w http.ResponseWriter, r *http.Request) {
	if a.Reminders == nil {
		writeError(w, http.StatusNotFound, "not_found", "reminders are not served by this server")
		return
	}
	id := r.PathValue("id")
	if _, err := a.Host.Get(id); err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"reminders": nonNil(a.Reminders.List(id))})
}

func (a *agentAPI) allReminders(w http.ResponseWriter, r *http.Request) {
	if a.Reminders == nil {
		writeError(w, http.StatusNotFound, "not_found", "reminders are not served by this server")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"reminders": nonNil(a.Reminders.List(""))})
}

func (a *agentAPI) fireReminder(w http.ResponseWriter, r *http.Request) {
	if a.Reminders == nil {
		writeError(w, http.StatusNotFound, "not_found", "reminders are not served by this server")
		return
	}
	id := r.PathValue("id")
	if err := a.Reminders.Fire(r.Context(), id); err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"reminderId": id, "fired": true})
}

func (a *agentAPI) schedules(w http.ResponseWriter, r *http.Request) {
	var list []schedule.ScheduleInfo
	if a.Scheduler != nil {
		list = a.Scheduler.Schedules()
	}
	writeJSON(w, http.StatusOK, map[string]any{"schedules": nonNil(list)})
}

func (a *agentAPI) dispatch(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if a.Scheduler == nil {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("unknown schedule %s: schedules are not served by this server", id))
		return
	}
	ids, err := a.Scheduler.Dispatch(r.Context(), id)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"scheduleId": id, "sessionIds": nonNil(ids)})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// decode reads a JSON object body (at most MaxBodyBytes) into v, or
// writes the error.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the body is over %d bytes (the server's limit)", mbe.Limit))
		return false
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", "reading the body: "+err.Error())
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", "the body is not the expected JSON object: "+err.Error())
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, "bad_request", "the body has more than one JSON value")
		return false
	}
	return true
}

// writeErr writes err with the status its kind maps to.
func writeErr(w http.ResponseWriter, err error) {
	var spec *schedule.SpecError
	var other *runner.OtherAgentError
	var corrupt *sessions.CorruptError
	switch {
	case errors.Is(err, sessions.ErrUnknown), errors.Is(err, schedule.ErrUnknownReminder), errors.Is(err, schedule.ErrUnknownSchedule):
		writeError(w, http.StatusNotFound, "not_found", err.Error())
	case errors.Is(err, sessions.ErrInUse):
		writeError(w, http.StatusConflict, "session_in_use", err.Error()+" (another process holds it: a july run, or another server)")
	case errors.Is(err, host.ErrNotRunning):
		writeError(w, http.StatusConflict, "not_running", err.Error())
	case errors.As(err, &other):
		writeError(w, http.StatusConflict, "other_agent", err.Error())
	case errors.Is(err, host.ErrQueueFull):
		writeError(w, http.StatusTooManyRequests, "queue_full", err.Error())
	case errors.Is(err, host.ErrEmptyMessage), errors.As(err, &spec):
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
	case errors.Is(err, host.ErrClosed):
		writeError(w, http.StatusServiceUnavailable, "shutting_down", err.Error())
	case errors.As(err, &corrupt):
		writeError(w, http.StatusInternalServerError, "corrupt_session", err.Error())
	default:
		writeError(w, http.StatusInternalServerError, "internal", err.Error())
	}
}

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	var b errorBody
	b.Error.Code, b.Error.Message = code, msg
	writeJSON(w, status, b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// parseIndex parses an event index (Last-Event-ID, after).
func parseIndex(name, v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < -1 {
		return 0, fmt.Errorf("%s %q: want an event index (an integer, at least -1)", name, v)
	}
	return n, nil
}
