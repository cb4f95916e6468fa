package mcpclient

import (
	"context"
	"errors"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/julyfs/julyfs/runner/tools"
)

// Options configure a Set.
type Options struct {
	// Dir is the working directory of command servers (the agent's
	// directory).
	Dir string
	// LookupEnv expands ${VAR} (default os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Allow narrows the tools offered (the zero Allow offers them all).
	Allow Allow
	// InlineLimit is the largest result text shown inline, in bytes
	// (default 32 KiB); larger text goes through Spill.
	InlineLimit int
	// Spill writes a result too large to show inline and returns where
	// it put it; without it such text is cut at InlineLimit.
	Spill func(text string) (path string, err error)
	// SpillFollowUp is the sentence after a spilled result's path,
	// saying how to read it.
	SpillFollowUp string
	// Backoff is the wait before restarting a server that failed twice
	// in a row (after one failure the next call restarts it at once);
	// each further failure doubles it, up to MaxBackoff (default 1 s).
	Backoff time.Duration
}

// MaxBackoff caps the wait between restarts of a failing server.
const MaxBackoff = 30 * time.Second

// DefaultInlineLimit is the largest result text shown inline by default.
const DefaultInlineLimit = 32 << 10

func (o Options) lookup() func(string) (string, bool) {
	if o.LookupEnv != nil {
		return o.LookupEnv
	}
	return os.LookupEnv
}

func (o Options) backoff(failures int) time.Duration {
	if failures <= 1 {
		return 0 // the first failure: restart on the next call
	}
	b := o.Backoff
	if b <= 0 {
		b = time.Second
	}
	for i := 2; i < failures && b < MaxBackoff; i++ {
		b *= 2
	}
	return min(b, MaxBackoff)
}

func (o Options) inline() int {
	if o.InlineLimit > 0 {
		return o.InlineLimit
	}
	return DefaultInlineLimit
}

// Set is one session's connections to its agent's MCP servers. The
// servers start on the first call to Tools, all at once, and stop with
// Close; a server that failed to start is tried again by a later call to
// Tools once its backoff has passed. A Set is safe for concurrent use.
type Set struct {
	opts    Options
	servers []*server // by name

	mu      sync.Mutex // held while Tools starts servers
	started bool
	tools   [][]*tools.Tool // by server, as s.servers
	status  []Status
}

// Status is what starting one server found.
type Status struct {
	// Server is its name under mcp:.
	Server string
	// Tools are the model-facing names of the tools it offers, after
	// narrowing and refusals.
	Tools []string
	// Refused are its tools that are not offered because a model
	// provider would reject them, each with why.
	Refused []string
	// Listed are the names of all the tools the server lists, as the
	// server names them, before narrowing and refusals.
	Listed []string
	// Missing are tools the allowlist names that the server does not
	// list.
	Missing []string
	// Err is why it could not be started (a *ServerError), or nil.
	Err error
	// Took is how long this start took, up to its tool list (or its
	// failure); 0 for a server that was already up.
	Took time.Duration
}

// NewSet returns the connections to servers, none started yet. Servers
// the allowlist leaves out entirely are never started.
func NewSet(servers map[string]ServerConfig, opts Options) *Set {
	s := &Set{opts: opts}
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		if opts.Allow.Serves(name) {
			s.servers = append(s.servers, &server{name: name, cfg: servers[name], set: s})
		}
	}
	return s
}

// Tools starts every server in parallel and returns their tools, by
// server and then tool name, with what starting each server found. A
// server that cannot be started offers no tools and has its Status.Err
// set; the others serve. The first call starts every server; a later
// call starts again, in parallel, each server that failed to start and
// whose backoff has passed (one failure: at once), so its tools join
// once it comes up. The servers that started are not touched: one that
// dies later keeps its tools, and its next call restarts it.
func (s *Set) Tools(ctx context.Context) ([]*tools.Tool, []Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var todo []int
	if !s.started {
		s.started = true
		s.tools = make([][]*tools.Tool, len(s.servers))
		s.status = make([]Status, len(s.servers))
		for i := range s.servers {
			todo = append(todo, i)
		}
	} else {
		for i, sv := range s.servers {
			if s.status[i].Err != nil && sv.due() {
				todo = append(todo, i)
			}
		}
	}
	var wg sync.WaitGroup
	for _, i := range todo {
		wg.Go(func() { s.tools[i], s.status[i] = s.start(ctx, s.servers[i]) })
	}
	wg.Wait()
	var out []*tools.Tool
	for _, ts := range s.tools {
		out = append(out, ts...)
	}
	return out, slices.Clone(s.status)
}

// start starts sv (or finds it running) and returns the tools it offers
// and what starting it found.
func (s *Set) start(ctx context.Context, sv *server) ([]*tools.Tool, Status) {
	st := Status{Server: sv.name}
	began := time.Now()
	_, _, err := sv.session(ctx)
	st.Took = time.Since(began)
	if err != nil {
		st.Err = &ServerError{Server: sv.name, Err: sv.redact(sv.exp, err)}
		return nil, st
	}
	var ts []*tools.Tool
	for _, mt := range sv.tools() {
		st.Listed = append(st.Listed, mt.Name)
		if !s.opts.Allow.Permits(sv.name, mt.Name) {
			continue
		}
		t, err := s.tool(sv, mt)
		if err != nil {
			st.Refused = append(st.Refused, err.Error())
			continue
		}
		ts = append(ts, t)
		st.Tools = append(st.Tools, t.Name)
	}
	st.Missing = s.opts.Allow.Missing(sv.name, st.Listed)
	return ts, st
}

// Pids returns the process ids of the stdio servers running now, by
// server name (for tests and diagnostics).
func (s *Set) Pids() map[string]int {
	out := map[string]int{}
	for _, sv := range s.servers {
		if pid := sv.pid(); pid != 0 {
			out[sv.name] = pid
		}
	}
	return out
}

// Close stops every server (a stdio server's whole process group).
func (s *Set) Close() error {
	var wg sync.WaitGroup
	for _, sv := range s.servers {
		wg.Go(sv.close)
	}
	wg.Wait()
	return nil
}

// Problems returns one sentence per server that failed to start and per
// allowlisted tool a server does not list: what july validate reports.
func Problems(status []Status) []error {
	var out []error
	for _, st := range status {
		if st.Err != nil {
			out = append(out, st.Err)
		}
		for _, m := range st.Missing {
			out = append(out, &ServerError{Server: st.Server, Err: errors.New("the allowlist names tool " + m + ", which the server does not list")})
		}
	}
	return out
}
