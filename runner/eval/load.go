// Package eval runs an agent's evals: the cases of evals/*.yaml in the
// agent directory, each a message (or several turns) for the agent and
// what must hold afterwards.
//
//	# evals/summary.yaml
//	model: script:demo.script.yaml      # default: agent.yaml's model
//	message: Summarize /a.txt into /summary.md
//	expect:
//	  succeeded: true                   # every turn completed (the default)
//	  reply: {contains: summary}        # or matches: REGEXP (the last reply)
//	  files:
//	    /summary.md: {contains: hi}     # or matches: REGEXP, or absent: true
//	  called: [Read, Write]             # tools called at least once
//	  notCalled: [Delete]
//	  maxSteps: 5                       # model calls, all turns together
//	  maxTokens: 20000                  # input + output tokens, all turns
//
// A file holds one case (a mapping, named after the file, or by name:) or
// a list of cases (each named by name:, else FILE/N). turns: [a, b] sends
// several messages in order instead of message:. [Load] reports every
// problem in every file as FILE:LINE, an unknown assertion included.
//
// # Running
//
// [Run] runs a case on a fresh session of the agent (session.json
// purpose "eval") whose tree is a copy-on-write layer over the agent's
// tree, kept in the session's directory: the case's writes land in the
// layer and the agent's files are never touched. Each turn's end is a
// checkpoint, so july diff shows what a case changed. The files
// assertions read the layered tree after the last turn. A case whose
// agent has the host shell cannot run (its shell writes the host past any
// layer); the result says so.
//
// Run is safe for concurrent use on different cases; Cases are
// immutable after Load.
package eval

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/julyfs/julyfs/vfs"
)

// Dir is the directory of eval files inside the agent directory.
const Dir = "evals"

// MaxFileBytes bounds one eval file.
const MaxFileBytes = 1 << 20

// Purpose is session.json's purpose for an eval's session.
const Purpose = "eval"

// Case is one eval case.
type Case struct {
	// Name names the case: name:, else the file's name without .yaml
	// (FILE/N, from 1, in a list).
	Name string `json:"name"`
	// File is the eval file, relative to the agent directory, and Line
	// the case's first line in it.
	File string `json:"file"`
	Line int    `json:"line"`
	// Model is the case's model spec ("" for the agent's).
	Model string `json:"model,omitempty"`
	// Turns are the messages, sent in order.
	Turns []string `json:"turns"`
	// Expect is what must hold afterwards.
	Expect Expect `json:"expect"`
}

// Expect is a case's assertions. Zero fields assert nothing, except
// Succeeded: nil means every turn must complete.
type Expect struct {
	Succeeded *bool                `json:"succeeded,omitempty"`
	Reply     *TextCheck           `json:"reply,omitempty"`
	Files     map[string]FileCheck `json:"files,omitempty"`
	Called    []string             `json:"called,omitempty"`
	NotCalled []string             `json:"notCalled,omitempty"`
	MaxSteps  int                  `json:"maxSteps,omitempty"`
	MaxTokens int64                `json:"maxTokens,omitempty"`
}

// TextCheck checks a text: it contains a substring, and/or matches a Go
// regular expression.
type TextCheck struct {
	Contains string `json:"contains,omitempty"`
	Matches  string `json:"matches,omitempty"`

	re *regexp.Regexp
}

// FileCheck checks one file of the tree after the case.
type FileCheck struct {
	TextCheck
	// Absent asserts the file does not exist.
	Absent bool `json:"absent,omitempty"`
}

// Problem is one thing wrong in an eval file, at FILE:LINE.
type Problem struct {
	File    string
	Line    int
	Message string
}

func (p Problem) Error() string {
	if p.Line == 0 {
		return p.File + ": " + p.Message
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
}

// LoadError is every problem of an agent's eval files.
type LoadError struct{ Problems []Problem }

func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString("evals are invalid:")
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.Error())
	}
	return b.String()
}

var (
	caseFields   = []string{"name", "model", "message", "turns", "expect"}
	expectFields = []string{"succeeded", "reply", "files", "called", "notCalled", "maxSteps", "maxTokens"}
	textFields   = []string{"contains", "matches"}
	fileFields   = []string{"contains", "matches", "absent"}
)

// Load reads the cases of dir/evals/*.yaml, in file order. A missing
// evals/ is no cases. Any problem makes Load return a *LoadError holding
// all of them.
func Load(dir string) ([]*Case, error) {
	entries, err := os.ReadDir(filepath.Join(dir, Dir))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l := &loader{}
	var cases []*Case
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") || e.IsDir() {
			continue
		}
		cases = append(cases, l.file(dir, Dir+"/"+e.Name())...)
	}
	seen := map[string]*Case{}
	for _, c := range cases {
		if prev := seen[c.Name]; prev != nil {
			l.add(c.File, c.Line, "case %q is also at %s:%d: give each case its own name", c.Name, prev.File, prev.Line)
		}
		seen[c.Name] = c
	}
	if len(l.problems) > 0 {
		return nil, &LoadError{Problems: l.problems}
	}
	return cases, nil
}

type loader struct{ problems []Problem }

func (l *loader) add(file string, line int, format string, args ...any) {
	l.problems = append(l.problems, Problem{File: file, Line: line, Message: fmt.Sprintf(format, args...)})
}

func (l *loader) file(dir, rel string) []*Case {
	data, err := readFile(filepath.Join(dir, rel))
	if err != nil {
		l.add(rel, 0, "%v", err)
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := 0
		if rest, ok := strings.CutPrefix(msg, "line "); ok {
			if n, after, ok := strings.Cut(rest, ": "); ok {
				if line, err = strconv.Atoi(n); err == nil {
					msg = after
				}
			}
		}
		l.add(rel, line, "%s", msg)
		return nil
	}
	stem := strings.TrimSuffix(filepath.Base(rel), ".yaml")
	if len(doc.Content) == 0 {
		l.add(rel, 0, "empty: write a case (message: and expect:)")
		return nil
	}
	top := doc.Content[0]
	switch top.Kind {
	case yaml.MappingNode:
		if c := l.caseNode(rel, top, stem); c != nil {
			return []*Case{c}
		}
		return nil
	case yaml.SequenceNode:
		var out []*Case
		for i, n := range top.Content {
			if n.Kind != yaml.MappingNode {
				l.add(rel, n.Line, "a case must be a mapping (message: and expect:)")
				continue
			}
			if c := l.caseNode(rel, n, fmt.Sprintf("%s/%d", stem, i+1)); c != nil {
				out = append(out, c)
			}
		}
		return out
	}
	l.add(rel, top.Line, "want a case (a mapping) or a list of cases")
	return nil
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err == nil && len(data) > MaxFileBytes {
		err = fmt.Errorf("more than the %d bytes allowed", MaxFileBytes)
	}
	return data, err
}

// fieldsOf walks the mapping m, calling f for each known key and
// reporting the unknown ones and the repeated ones as what (field,
// assertion).
func (l *loader) fieldsOf(file string, m *yaml.Node, what string, known []string, f func(k, v *yaml.Node)) {
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		switch {
		case !slices.Contains(known, k.Value):
			l.add(file, k.Line, "unknown %s %q (known: %s)", what, k.Value, strings.Join(known, ", "))
		case seen[k.Value]:
			l.add(file, k.Line, "%s is given twice", k.Value)
		case v.Kind == yaml.AliasNode:
			l.add(file, v.Line, "%s: a YAML alias is not allowed here; write it out", k.Value)
		default:
			seen[k.Value] = true
			f(k, v)
		}
	}
}

// decode decodes v into out, reporting a type mismatch at v's line.
func (l *loader) decode(file string, k, v *yaml.Node, out any, want string) bool {
	if err := v.Decode(out); err != nil {
		l.add(file, v.Line, "%s: want %s", k.Value, want)
		return false
	}
	return true
}

func (l *loader) caseNode(file string, m *yaml.Node, name string) *Case {
	before := len(l.problems)
	c := &Case{Name: name, File: file, Line: m.Line}
	var message *string
	turnsSet := false
	l.fieldsOf(file, m, "field", caseFields, func(k, v *yaml.Node) {
		switch k.Value {
		case "name":
			if l.decode(file, k, v, &c.Name, "a string") && strings.TrimSpace(c.Name) == "" {
				l.add(file, v.Line, "name is empty")
			}
		case "model":
			l.decode(file, k, v, &c.Model, "a model spec such as script:FILE or openai:gpt-4.1")
		case "message":
			var s string
			if l.decode(file, k, v, &s, "a string") {
				message = &s
			}
		case "turns":
			turnsSet = true
			if v.Kind != yaml.SequenceNode || !l.decode(file, k, v, &c.Turns, "a list of messages") {
				if v.Kind != yaml.SequenceNode {
					l.add(file, v.Line, "turns: want a list of messages")
				}
			}
		case "expect":
			if v.Kind != yaml.MappingNode {
				l.add(file, v.Line, "expect: want a mapping of assertions (%s)", strings.Join(expectFields, ", "))
				return
			}
			l.expect(file, v, &c.Expect)
		}
	})
	switch {
	case message != nil && turnsSet:
		l.add(file, m.Line, "give message or turns, not both")
	case message != nil:
		c.Turns = []string{*message}
	case !turnsSet:
		l.add(file, m.Line, "no message: give message: TEXT (or turns: [TEXT, ...])")
	}
	for _, t := range c.Turns {
		if strings.TrimSpace(t) == "" {
			l.add(file, m.Line, "a message is empty")
		}
	}
	if turnsSet && len(c.Turns) == 0 && message == nil {
		l.add(file, m.Line, "turns is empty")
	}
	if len(l.problems) > before {
		return nil
	}
	return c
}

func (l *loader) expect(file string, m *yaml.Node, e *Expect) {
	l.fieldsOf(file, m, "assertion", expectFields, func(k, v *yaml.Node) {
		switch k.Value {
		case "succeeded":
			var b bool
			if l.decode(file, k, v, &b, "true or false") {
				e.Succeeded = &b
			}
		case "reply":
			var tc TextCheck
			if l.text(file, k, v, textFields, &tc, nil) {
				e.Reply = &tc
			}
		case "files":
			if v.Kind != yaml.MappingNode {
				l.add(file, v.Line, "files: want a mapping of paths to checks ({contains: TEXT}, {matches: REGEXP} or {absent: true})")
				return
			}
			e.Files = map[string]FileCheck{}
			for i := 0; i+1 < len(v.Content); i += 2 {
				pk, pv := v.Content[i], v.Content[i+1]
				p := vfs.Clean(pk.Value)
				if _, dup := e.Files[p]; dup {
					l.add(file, pk.Line, "files: %s is given twice", p)
					continue
				}
				var fc FileCheck
				if l.text(file, pk, pv, fileFields, &fc.TextCheck, &fc.Absent) {
					if fc.Absent && (fc.Contains != "" || fc.Matches != "") {
						l.add(file, pv.Line, "files: %s: absent: true with contains or matches can never pass", pk.Value)
						continue
					}
					e.Files[p] = fc
				}
			}
		case "called", "notCalled":
			var names []string
			if l.decode(file, k, v, &names, "a list of tool names") {
				if k.Value == "called" {
					e.Called = names
				} else {
					e.NotCalled = names
				}
			}
		case "maxSteps":
			if l.decode(file, k, v, &e.MaxSteps, "a number of model calls") && e.MaxSteps < 1 {
				l.add(file, v.Line, "maxSteps: want at least 1")
			}
		case "maxTokens":
			if l.decode(file, k, v, &e.MaxTokens, "a number of tokens") && e.MaxTokens < 1 {
				l.add(file, v.Line, "maxTokens: want at least 1")
			}
		}
	})
}

// text decodes a {contains, matches[, absent]} mapping at v.
func (l *loader) text(file string, k, v *yaml.Node, known []string, tc *TextCheck, absent *bool) bool {
	if v.Kind != yaml.MappingNode {
		l.add(file, v.Line, "%s: want a mapping (%s)", k.Value, strings.Join(known, ", "))
		return false
	}
	before := len(l.problems)
	l.fieldsOf(file, v, "check", known, func(ck, cv *yaml.Node) {
		switch ck.Value {
		case "contains":
			l.decode(file, ck, cv, &tc.Contains, "a string")
		case "matches":
			if l.decode(file, ck, cv, &tc.Matches, "a Go regular expression") {
				re, err := regexp.Compile(tc.Matches)
				if err != nil {
					l.add(file, cv.Line, "matches: %v", err)
					return
				}
				tc.re = re
			}
		case "absent":
			l.decode(file, ck, cv, absent, "true or false")
		}
	})
	if len(l.problems) == before && tc.Contains == "" && tc.Matches == "" && (absent == nil || !*absent) {
		l.add(file, v.Line, "%s: give contains, matches or absent", k.Value)
	}
	return len(l.problems) == before
}

// check returns "" when s passes tc, else what is wrong.
func (tc *TextCheck) check(s string) string {
	if tc.Contains != "" && !strings.Contains(s, tc.Contains) {
		return fmt.Sprintf("does not contain %q", tc.Contains)
	}
	if tc.re != nil && !tc.re.MatchString(s) {
		return fmt.Sprintf("does not match %q", tc.Matches)
	}
	return ""
}
