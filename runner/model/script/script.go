// Package script is a model that plays a YAML script: for tests, evals and
// an offline demo. The script lists turns; each turn lists the model's
// replies in order (tool calls to request, or final text), and each reply
// may first check what the previous reply's tool calls returned:
//
//	turns:
//	  - message: {contains: Summarize}   # optional check on the person's message
//	    replies:
//	      - calls:
//	          - {tool: Read, args: {path: /a.txt}}
//	      - expect:                       # one check per result, in call order
//	          - {tool: Read, contains: hi}
//	        text: /a.txt says hi.         # text and no calls: the turn's reply
//
// A check has contains (a substring), matches (a Go regexp), tool (the
// result's tool name) and error (whether the result is an error); a reply
// may also sleep (a Go duration, honouring cancellation) or hang (the
// same, deaf to cancellation: a stuck provider, for testing what gives up
// on it) before it answers, and give args as a string of raw JSON (sent as is, malformed or
// not). A reply with calls and no expect checks nothing.
//
// The script is stateless: each Generate finds its place from the request
// (turn k is the k-th user message, reply j the j-th assistant message
// since it), so a session continued in another process picks up at the
// next turn. When the run and the script disagree (a check fails, the run
// asks for a turn or reply the script does not have) Generate fails with a
// *[MismatchError] holding a diff of what the script wanted and what the
// run had. Syntax and shape errors in the file are reported by [New] as
// FILE:LINE: message.
//
// Usage is estimated (bytes / 4) so token totals are deterministic.
//
// A Model is immutable after New and safe for concurrent use.
package script

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"
	"gopkg.in/yaml.v3"

	"github.com/julyfs/julyfs/runner/model"
)

// Provider is the spec prefix of this model: "script:FILE".
const Provider = "script"

// Model plays a script.
type Model struct {
	file  string // as given, for messages
	turns []turnSpec
}

var _ model.Model = (*Model)(nil)

type turnSpec struct {
	line    int
	message *check
	replies []reply
}

type reply struct {
	line   int
	text   string
	calls  []call
	expect []check
	sleep  time.Duration
	hang   time.Duration
}

type call struct {
	line int
	tool string
	args json.RawMessage
}

type check struct {
	line     int
	tool     string
	contains string
	hasCont  bool
	pattern  string
	re       *regexp.Regexp
	isError  *bool
}

// New reads and parses the script at name (relative names resolve against
// opts.Dir).
func New(name string, opts model.Options) (model.Model, error) {
	path := name
	if !filepath.IsAbs(path) && opts.Dir != "" {
		path = filepath.Join(opts.Dir, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if pe, _ = err.(*os.PathError); pe != nil {
			err = pe.Err
		}
		return nil, fmt.Errorf("script %s: %w", name, err)
	}
	return Parse(data, name)
}

// Parse parses a script; file names it in messages.
func Parse(data []byte, file string) (*Model, error) {
	p := &parser{file: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, p.yamlErr(err)
	}
	m := &Model{file: file}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s:1: empty script: want turns: [...]", file)
	}
	root := doc.Content[0]
	err := p.mapping(root, "script", func(key string, v *yaml.Node) error {
		switch key {
		case "turns":
			if v.Kind != yaml.SequenceNode {
				return p.errf(v, "turns: want a list of turns")
			}
			for _, tn := range v.Content {
				t, err := p.turn(tn)
				if err != nil {
					return err
				}
				m.turns = append(m.turns, t)
			}
			return nil
		}
		return p.errf(v, "unknown key %q (want turns)", key)
	})
	if err != nil {
		return nil, err
	}
	if len(m.turns) == 0 {
		return nil, p.errf(root, "no turns: want turns: [...]")
	}
	return m, nil
}

type parser struct{ file string }

func (p *parser) errf(n *yaml.Node, format string, args ...any) error {
	return p.errLine(n.Line, format, args...)
}

func (p *parser) errLine(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", p.file, line, fmt.Sprintf(format, args...))
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// yamlErr renders a yaml.v3 syntax error as FILE:LINE: message.
func (p *parser) yamlErr(err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: %s", p.file, m[1], msg[len(m[0]):])
	}
	return fmt.Errorf("%s: %s", p.file, strings.TrimPrefix(msg, "yaml: "))
}

// mapping calls f for each key of the mapping n, in order.
func (p *parser) mapping(n *yaml.Node, what string, f func(key string, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return p.errf(n, "%s: want a mapping", what)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if err := f(n.Content[i].Value, n.Content[i+1]); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) str(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", p.errf(n, "%s: want a string", what)
	}
	return n.Value, nil
}

func (p *parser) turn(n *yaml.Node) (turnSpec, error) {
	t := turnSpec{line: n.Line}
	err := p.mapping(n, "turn", func(key string, v *yaml.Node) error {
		switch key {
		case "message":
			c, err := p.check(v, "message")
			t.message = &c
			return err
		case "replies":
			if v.Kind != yaml.SequenceNode {
				return p.errf(v, "replies: want a list")
			}
			for _, rn := range v.Content {
				r, err := p.reply(rn)
				if err != nil {
					return err
				}
				t.replies = append(t.replies, r)
			}
			return nil
		}
		return p.errf(v, "unknown key %q in a turn (want message, replies)", key)
	})
	if err != nil {
		return t, err
	}
	switch {
	case len(t.replies) == 0:
		return t, p.errf(n, "a turn needs replies")
	case len(t.replies[len(t.replies)-1].calls) > 0:
		return t, p.errLine(t.replies[len(t.replies)-1].line, "the last reply of a turn must end it: text and no calls")
	}
	return t, nil
}

func (p *parser) reply(n *yaml.Node) (reply, error) {
	r := reply{line: n.Line}
	err := p.mapping(n, "reply", func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "text":
			r.text, err = p.str(v, "text")
		case "sleep", "hang":
			var s string
			var d time.Duration
			if s, err = p.str(v, key); err == nil {
				if d, err = time.ParseDuration(s); err != nil {
					err = p.errf(v, "%s: %q is not a duration (like 30s)", key, s)
				}
			}
			if key == "sleep" {
				r.sleep = d
			} else {
				r.hang = d
			}
		case "calls":
			if v.Kind != yaml.SequenceNode {
				return p.errf(v, "calls: want a list")
			}
			for _, cn := range v.Content {
				c, err := p.call(cn)
				if err != nil {
					return err
				}
				r.calls = append(r.calls, c)
			}
		case "expect":
			if v.Kind != yaml.SequenceNode {
				return p.errf(v, "expect: want a list of checks, one per result")
			}
			for _, cn := range v.Content {
				c, err := p.check(cn, "expect")
				if err != nil {
					return err
				}
				r.expect = append(r.expect, c)
			}
		default:
			err = p.errf(v, "unknown key %q in a reply (want text, calls, expect, sleep, hang)", key)
		}
		return err
	})
	return r, err
}

func (p *parser) call(n *yaml.Node) (call, error) {
	c := call{line: n.Line}
	err := p.mapping(n, "call", func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "tool":
			c.tool, err = p.str(v, "tool")
		case "args":
			switch v.Kind {
			case yaml.ScalarNode:
				c.args = json.RawMessage(v.Value) // raw JSON, as is
			case yaml.MappingNode:
				var m map[string]any
				if err := v.Decode(&m); err != nil {
					return p.errf(v, "args: %v", err)
				}
				var b strings.Builder
				enc := json.NewEncoder(&b)
				enc.SetEscapeHTML(false)
				if err := enc.Encode(m); err != nil {
					return p.errf(v, "args: %v", err)
				}
				c.args = json.RawMessage(strings.TrimSuffix(b.String(), "\n"))
			default:
				return p.errf(v, "args: want a mapping, or a string of raw JSON")
			}
		default:
			err = p.errf(v, "unknown key %q in a call (want tool, args)", key)
		}
		return err
	})
	if err == nil && c.tool == "" {
		err = p.errf(n, "a call needs tool")
	}
	return c, err
}

func (p *parser) check(n *yaml.Node, what string) (check, error) {
	c := check{line: n.Line}
	err := p.mapping(n, what, func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "tool":
			c.tool, err = p.str(v, "tool")
		case "contains":
			c.contains, err = p.str(v, "contains")
			c.hasCont = true
		case "matches":
			if c.pattern, err = p.str(v, "matches"); err == nil {
				if c.re, err = regexp.Compile(c.pattern); err != nil {
					err = p.errf(v, "matches: %v", err)
				}
			}
		case "error":
			var b bool
			if v.Kind != yaml.ScalarNode || v.Decode(&b) != nil {
				return p.errf(v, "error: want true or false")
			}
			c.isError = &b
		default:
			err = p.errf(v, "unknown key %q in a check (want tool, contains, matches, error)", key)
		}
		return err
	})
	return c, err
}

// Name returns "script:FILE".
func (m *Model) Name() string { return Provider + ":" + m.file }

// MismatchError is a run that disagrees with its script.
type MismatchError struct {
	// Where is FILE:LINE of the script entry.
	Where string
	// What says what disagreed.
	What string
	// Diff is a unified diff of the script's side and the run's.
	Diff string
}

func (e *MismatchError) Error() string {
	s := fmt.Sprintf("script %s: %s", e.Where, e.What)
	if e.Diff != "" {
		s += "\n" + strings.TrimRight(e.Diff, "\n")
	}
	return s
}

func (m *Model) mismatch(line int, what string, want, got []string) error {
	e := &MismatchError{Where: fmt.Sprintf("%s:%d", m.file, line), What: what}
	if want != nil || got != nil {
		e.Diff, _ = difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: lines(want), B: lines(got), FromFile: "script", ToFile: "run", Context: 3,
		})
	}
	return e
}

// lines ends each of ls with a newline, for difflib.
func lines(ls []string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l + "\n"
	}
	return out
}

// Generate answers with the script's reply for the request's place in the
// conversation.
func (m *Model) Generate(ctx context.Context, req *model.Request, onDelta func(model.Delta)) (*model.Response, error) {
	users, lastUser := 0, -1
	for i, msg := range req.Messages {
		if msg.Role == model.RoleUser {
			users, lastUser = users+1, i
		}
	}
	if users == 0 {
		return nil, m.mismatch(1, "the run has no user message", nil, nil)
	}
	k := users - 1
	j := 0
	for _, msg := range req.Messages[lastUser+1:] {
		if msg.Role == model.RoleAssistant {
			j++
		}
	}
	if k >= len(m.turns) {
		last := m.turns[len(m.turns)-1]
		return nil, m.mismatch(last.line, fmt.Sprintf("the run is on turn %d but the script has %d", k+1, len(m.turns)),
			nil, []string{"message: " + req.Messages[lastUser].Text()})
	}
	t := m.turns[k]
	if j >= len(t.replies) {
		return nil, m.mismatch(t.line, fmt.Sprintf("turn %d: the run asks for reply %d but the turn has %d", k+1, j+1, len(t.replies)), nil, nil)
	}
	r := t.replies[j]
	last := req.Messages[len(req.Messages)-1]
	if j == 0 {
		if last.Role != model.RoleUser {
			return nil, m.mismatch(r.line, fmt.Sprintf("turn %d reply 1: the run's last message is %s, want the person's", k+1, last.Role), nil, nil)
		}
		if t.message != nil {
			if err := m.checkText(*t.message, fmt.Sprintf("turn %d: the message", k+1), "", last.Text(), false); err != nil {
				return nil, err
			}
		}
	} else {
		if err := m.checkResults(k, j, r, last); err != nil {
			return nil, err
		}
	}
	if r.hang > 0 {
		time.Sleep(r.hang) // deaf to cancellation, on purpose
	}
	if r.sleep > 0 {
		timer := time.NewTimer(r.sleep)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := model.Message{Role: model.RoleAssistant}
	outBytes := len(r.text)
	if r.text != "" {
		out.Content = []model.Part{model.TextPart(r.text)}
		if onDelta != nil {
			onDelta(model.Delta{Text: r.text})
		}
	}
	for i, c := range r.calls {
		out.ToolCalls = append(out.ToolCalls, model.ToolCall{ID: fmt.Sprintf("call_%d_%d_%d", k+1, j+1, i+1), Name: c.tool, Args: c.args})
		outBytes += len(c.tool) + len(c.args)
	}
	stop := "end_turn"
	if len(out.ToolCalls) > 0 {
		stop = "tool_use"
	}
	return &model.Response{Message: out, StopReason: stop,
		Usage: model.Usage{InputTokens: int64(requestBytes(req)+3) / 4, OutputTokens: int64(outBytes+3) / 4}}, nil
}

// checkResults checks the tool results of the run's last message against
// the reply's expect list.
func (m *Model) checkResults(k, j int, r reply, last model.Message) error {
	if last.Role != model.RoleTool {
		return m.mismatch(r.line, fmt.Sprintf("turn %d reply %d: the run's last message is %s, want tool results", k+1, j+1, last.Role), nil, nil)
	}
	if len(r.expect) > len(last.ToolResults) {
		var got []string
		for _, res := range last.ToolResults {
			got = append(got, "result of "+res.Name)
		}
		var want []string
		for i := range r.expect {
			want = append(want, fmt.Sprintf("result %d", i+1))
		}
		return m.mismatch(r.line, fmt.Sprintf("turn %d reply %d: %d checks for %d results", k+1, j+1, len(r.expect), len(last.ToolResults)), want, got)
	}
	for i, c := range r.expect {
		res := last.ToolResults[i]
		var b strings.Builder
		for _, p := range res.Content {
			if p.Type == "text" {
				b.WriteString(p.Text)
			} else {
				fmt.Fprintf(&b, "[image %s, %d bytes]", p.MIMEType, len(p.Data))
			}
		}
		if err := m.checkText(c, fmt.Sprintf("turn %d reply %d: result %d", k+1, j+1, i+1), res.Name, b.String(), res.IsError); err != nil {
			return err
		}
	}
	return nil
}

// checkText applies c to text (from tool, erroring or not).
func (m *Model) checkText(c check, what, tool, text string, isError bool) error {
	ok := (c.tool == "" || c.tool == tool) &&
		(c.isError == nil || *c.isError == isError) &&
		(!c.hasCont || strings.Contains(text, c.contains)) &&
		(c.re == nil || c.re.MatchString(text))
	if ok {
		return nil
	}
	var want, got []string
	if c.tool != "" {
		want = append(want, "tool: "+c.tool)
		got = append(got, "tool: "+tool)
	}
	if c.isError != nil {
		want = append(want, fmt.Sprintf("error: %v", *c.isError))
		got = append(got, fmt.Sprintf("error: %v", isError))
	}
	if c.hasCont {
		want = append(want, "contains: "+c.contains)
	}
	if c.re != nil {
		want = append(want, "matches: "+c.pattern)
	}
	got = append(got, strings.Split(strings.TrimRight(text, "\n"), "\n")...)
	return m.mismatch(c.line, what+" disagrees with the script", want, got)
}

// requestBytes is the size of the request's text, for the usage estimate.
func requestBytes(req *model.Request) int {
	n := len(req.System)
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	for _, msg := range req.Messages {
		for _, p := range msg.Content {
			n += len(p.Text) + len(p.Data)
		}
		for _, c := range msg.ToolCalls {
			n += len(c.Name) + len(c.Args)
		}
		for _, r := range msg.ToolResults {
			for _, p := range r.Content {
				n += len(p.Text) + len(p.Data)
			}
		}
	}
	return n
}
