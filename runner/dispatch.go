package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/julyfs/julyfs/runner/tools"
)

// Dispatcher is the one way to call a tool: july call, the MCP server and
// the agent loop all go through Call. It maps argument aliases, validates
// the arguments against the tool's schema, records the call's effect, stubs
// writes in a dry run, and turns every failure (unknown tool, bad
// arguments, a tool error, even a panic) into an error Result the model
// can read.
//
// A Dispatcher is safe for concurrent use when its tools are.
type Dispatcher struct {
	tools  []*tools.Tool
	byName map[string]*entry
	opts   DispatchOptions
}

type entry struct {
	tool     *tools.Tool
	resolved *jsonschema.Resolved
	aliases  []string // sorted keys of tool.Aliases
}

// DispatchOptions configure a Dispatcher.
type DispatchOptions struct {
	// DryRun runs read tools and answers write tools with a stubbed
	// success (Result.Stubbed) without running them.
	DryRun bool
	// Observe, when set, is called after every call with its record.
	Observe func(CallRecord)
}

// CallRecord describes one finished call.
type CallRecord struct {
	Tool     string          // the name called
	Effect   tools.Effect    // 0 for an unknown tool
	Args     json.RawMessage // the arguments after alias mapping
	IsError  bool
	Stubbed  bool
	Duration time.Duration
}

// NewDispatcher returns a dispatcher over ts. Tool names must be unique and
// every schema must resolve.
func NewDispatcher(ts []*tools.Tool, opts DispatchOptions) (*Dispatcher, error) {
	return newDispatcher(ts, opts, nil)
}

// newDispatcher is NewDispatcher taking resolved schemas from cache (nil:
// resolve every schema).
func newDispatcher(ts []*tools.Tool, opts DispatchOptions, cache *schemaCache) (*Dispatcher, error) {
	d := &Dispatcher{tools: slices.Clone(ts), byName: make(map[string]*entry, len(ts)), opts: opts}
	for _, t := range ts {
		if _, dup := d.byName[t.Name]; dup {
			return nil, fmt.Errorf("runner: two tools named %s", t.Name)
		}
		c, err := cache.resolve(t)
		if err != nil {
			return nil, fmt.Errorf("runner: schema of %s: %w", t.Name, err)
		}
		d.byName[t.Name] = &entry{tool: t, resolved: c.resolved, aliases: c.aliases}
	}
	return d, nil
}

// schemaCache holds what a dispatcher derives from each of one session's
// tools (the resolved argument schema, the sorted alias names), so a turn
// does not derive it again: resolving (jsonschema's Resolve walks and
// checks every schema by reflection) was about 90% of Session.Turn. A
// session's tools are rebuilt every turn over that turn's tree, but from
// the same plan and options, so a tool's name and description stand for
// its schema for the life of the session; a tool whose name or
// description differs from every cached one (a tool set that changed) is
// resolved and cached anew. Safe for concurrent use; a nil cache derives
// everything every time.
type schemaCache struct {
	mu sync.Mutex
	m  map[schemaKey]*toolSchema
	// resolved counts resolutions, for tests.
	resolved int
}

type schemaKey struct{ name, description string }

// toolSchema is what a dispatcher derives from a tool.
type toolSchema struct {
	resolved *jsonschema.Resolved
	aliases  []string // sorted keys of tool.Aliases; shared, never modified
}

// maxCachedSchemas bounds a cache that sees ever new tools (it cannot in a
// session, whose tool set is fixed; the bound only keeps a mistake cheap).
const maxCachedSchemas = 256

func deriveSchema(t *tools.Tool) (*toolSchema, error) {
	rs, err := t.Schema.Resolve(nil)
	if err != nil {
		return nil, err
	}
	return &toolSchema{resolved: rs, aliases: slices.Sorted(maps.Keys(t.Aliases))}, nil
}

func (c *schemaCache) resolve(t *tools.Tool) (*toolSchema, error) {
	if c == nil {
		return deriveSchema(t)
	}
	k := schemaKey{t.Name, t.Description}
	c.mu.Lock()
	ts := c.m[k]
	c.mu.Unlock()
	if ts != nil && len(ts.aliases) == len(t.Aliases) {
		return ts, nil
	}
	ts, err := deriveSchema(t)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedSchemas {
		c.m = map[schemaKey]*toolSchema{}
	}
	c.m[k] = ts
	c.resolved++
	c.mu.Unlock()
	return ts, nil
}

// Tools returns the dispatcher's tools in listing order. The slice is the
// caller's; the tools are shared.
func (d *Dispatcher) Tools() []*tools.Tool { return slices.Clone(d.tools) }

// Tool returns the tool called name, or nil.
func (d *Dispatcher) Tool(name string) *tools.Tool {
	if e := d.byName[name]; e != nil {
		return e.tool
	}
	return nil
}

// Call runs the tool called name with args (a JSON object; empty or null
// means {}) and returns its result. It never returns nil.
func (d *Dispatcher) Call(ctx context.Context, name string, args json.RawMessage) (res *tools.Result) {
	start := time.Now()
	rec := CallRecord{Tool: name}
	defer func() {
		res.Tool = name
		rec.IsError, rec.Stubbed = res.IsError, res.Stubbed
		if rec.Effect != 0 {
			res.Effect = rec.Effect
		}
		rec.Duration = time.Since(start)
		if d.opts.Observe != nil {
			d.opts.Observe(rec)
		}
	}()
	e := d.byName[name]
	if e == nil {
		names := make([]string, len(d.tools))
		for i, t := range d.tools {
			names[i] = t.Name
		}
		if len(names) == 0 {
			return tools.Errorf("unknown tool %q: this agent has no tools", name)
		}
		return tools.Errorf("unknown tool %q; available: %s", name, strings.Join(names, ", "))
	}
	rec.Effect = e.tool.Effect
	norm, err := normalizeArgs(e, args)
	if err != nil {
		return tools.Errorf("invalid arguments for %s: %v", name, err)
	}
	rec.Args = norm
	if d.opts.DryRun && e.tool.Effect == tools.EffectWrite {
		r := tools.Text(fmt.Sprintf("dry run: %s was not run", name))
		r.Stubbed = true
		return r
	}
	return run(ctx, e.tool, norm)
}

// run calls the tool, turning a returned error or a panic into an error
// result.
func run(ctx context.Context, t *tools.Tool, args json.RawMessage) (res *tools.Result) {
	defer func() {
		if v := recover(); v != nil {
			res = tools.Errorf("internal error in %s: %v", t.Name, v)
		}
	}()
	if err := ctx.Err(); err != nil {
		return tools.Error(err)
	}
	r, err := t.Run(ctx, args)
	switch {
	case err != nil:
		return tools.Error(err)
	case r == nil:
		return tools.Errorf("internal error in %s: no result", t.Name)
	}
	return r
}

// normalizeArgs decodes args into an object, renames aliases onto their
// canonical names and validates the result against the tool's schema.
func normalizeArgs(e *entry, args json.RawMessage) (json.RawMessage, error) {
	m := map[string]any{}
	if trimmed := bytes.TrimSpace(args); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		if trimmed[0] != '{' {
			return nil, fmt.Errorf("arguments must be a JSON object")
		}
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
		}
		if dec.More() {
			return nil, fmt.Errorf("arguments must be one JSON object")
		}
	}
	for _, alias := range e.aliases {
		canon := e.tool.Aliases[alias]
		v, ok := m[alias]
		if !ok {
			continue
		}
		if _, both := m[canon]; both {
			return nil, fmt.Errorf("both %q and its alias %q are set; use %q", canon, alias, canon)
		}
		delete(m, alias)
		m[canon] = v
	}
	if err := e.resolved.Validate(m); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "validating root: "))
	}
	return json.Marshal(m)
}
