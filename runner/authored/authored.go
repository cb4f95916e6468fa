// Package authored serves the tools an agent's author writes as
// tools/<name>.yaml in the agent directory: a description, a JSON Schema
// for the arguments, a command (argv) and its effect.
//
//	# tools/wordcount.yaml
//	description: Count the words of a text.
//	inputSchema:
//	  type: object
//	  required: [text]
//	  properties:
//	    text: {type: string}
//	command: [python3, tools/wordcount.py]
//	effect: read          # read | write (default write)
//	timeout: 10s          # default 30s, at most 10m
//	env: {LANG: C.UTF-8, TOKEN: "${MY_TOKEN}"}
//	cwd: .                # relative to the agent directory (the default)
//
// The tool's name is the file's name without .yaml. [Load] reads and
// checks every definition, reporting each problem as FILE:LINE; [Def.Tool]
// turns one into a [tools.Tool] for the runner's dispatcher, which
// validates the arguments against the schema before the command runs.
//
// # Running
//
// Each call starts the command afresh: the arguments as one JSON object on
// stdin, its stdout the result, its stderr the message when it fails. The
// environment is clean: only the file's env (where ${VAR} takes VAR from
// july's own environment, and "" when it is unset; PATH too is only there
// when listed), JULY_SESSION_ID (the session's id, in a session: july call
// has none) and, when the session's tree is mounted, JULY_TREE (the mount
// point). A command whose first word
// has a slash is relative to the agent directory; a bare one is looked up
// on july's PATH. The command runs in a process group of its own. At the
// timeout, on cancellation and also once it has exited, the whole group is
// killed, so a child it left behind does not outlive the call. stdout and
// stderr are each cut at the output bound (tools.Options.MaxShellOutput,
// 30000 bytes by default), with a notice saying so.
//
// A non-zero exit, a timeout, a command that cannot start: each is an
// error result for the model naming the tool, the cause and the stderr,
// never a Go error; the session goes on.
//
// # Concurrency
//
// A Def is immutable after Load and its tools are safe for concurrent
// use: every call is its own process.
package authored

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"gopkg.in/yaml.v3"

	"github.com/julyfs/julyfs/runner/tools"
)

// Dir is the directory of authored tools inside the agent directory, and
// Ext the extension of a definition in it. Other files there (the scripts
// the definitions run) are not definitions.
const (
	Dir = "tools"
	Ext = ".yaml"
)

// Bounds on a definition.
const (
	// DefaultTimeout is a call's timeout when the file gives none.
	DefaultTimeout = 30 * time.Second
	// MaxTimeout is the largest timeout a file may give.
	MaxTimeout = 10 * time.Minute
	// MaxFileBytes bounds a definition file.
	MaxFileBytes = 1 << 20
	// DefaultMaxOutput cuts stdout and stderr when the caller sets no
	// bound (the Shell tool's default).
	DefaultMaxOutput = 30000
)

// Env names set for every call; a definition may not set them itself.
const (
	EnvSessionID = "JULY_SESSION_ID"
	EnvTree      = "JULY_TREE"
)

// Def is one authored tool.
type Def struct {
	// Name is the model-facing name: the file's name without Ext.
	Name string
	// File is the definition, relative to the agent directory
	// ("tools/wordcount.yaml").
	File string
	// Description is the model-facing description.
	Description string
	// Schema is the arguments' JSON Schema (an object schema).
	Schema *jsonschema.Schema
	// Command is the argv, as written.
	Command []string
	// Effect is read or write.
	Effect tools.Effect
	// Timeout bounds one call.
	Timeout time.Duration
	// Env is the environment the file lists, before ${VAR} expansion.
	Env map[string]string
	// Cwd is the working directory, absolute.
	Cwd string

	agentDir    string
	commandLine int
}

// Problem is one thing wrong with a definition, at FILE:LINE.
type Problem struct {
	File    string // relative to the agent directory
	Line    int    // 0 when the problem is the file as a whole
	Message string
}

// Where is "FILE:LINE", or FILE for a problem with no line.
func (p Problem) Where() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

func (p Problem) Error() string { return p.Where() + ": " + p.Message }

// namePattern is what the model providers accept as a tool name.
var namePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// fields are a definition's keys, in documentation order.
var fields = []string{"description", "inputSchema", "command", "effect", "timeout", "env", "cwd"}

// Load reads every tools/*.yaml of the agent directory dir, in name order.
// A missing tools/ is no tools. Every problem is returned (a definition
// with a problem is left out of the tools).
func Load(dir string) ([]*Def, []Problem) {
	entries, err := os.ReadDir(filepath.Join(dir, Dir))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, []Problem{{File: Dir, Message: err.Error()}}
	}
	var defs []*Def
	var problems []Problem
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), Ext) {
			continue
		}
		d, ps := loadFile(dir, e.Name())
		problems = append(problems, ps...)
		if len(ps) == 0 {
			defs = append(defs, d)
		}
	}
	return defs, problems
}

func loadFile(dir, name string) (*Def, []Problem) {
	rel := Dir + "/" + name
	d := &Def{Name: strings.TrimSuffix(name, Ext), File: rel, Effect: tools.EffectWrite, Timeout: DefaultTimeout, Cwd: dir, agentDir: dir}
	var problems []Problem
	add := func(line int, format string, args ...any) {
		problems = append(problems, Problem{File: rel, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	if !namePattern.MatchString(d.Name) || strings.HasPrefix(d.Name, "mcp__") {
		add(0, "%q is not a tool name: use letters, digits, _ and - (at most 64, starting with a letter, not mcp__); rename the file", d.Name)
	}
	data, err := readBounded(dir, rel)
	if err != nil {
		add(0, "%v", err)
		return nil, problems
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := yamlLine(err)
		add(line, "%s", msg)
		return nil, problems
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		add(0, "want a mapping with description, command, ... (see docs/tools.md)")
		return nil, problems
	}
	m := doc.Content[0]
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if seen[k.Value] {
			add(k.Line, "%s is given twice", k.Value)
			continue
		}
		seen[k.Value] = true
		if v.Kind == yaml.AliasNode {
			add(v.Line, "%s: a YAML alias is not allowed here; write it out", k.Value)
			continue
		}
		switch k.Value {
		case "description":
			if v.Kind != yaml.ScalarNode || strings.TrimSpace(v.Value) == "" {
				add(v.Line, "description must be a non-empty string")
			}
			d.Description = strings.TrimSpace(v.Value)
		case "inputSchema":
			s, msg := decodeSchema(v)
			if msg != "" {
				add(v.Line, "inputSchema: %s", msg)
			}
			d.Schema = s
		case "command":
			d.commandLine = v.Line
			if v.Kind != yaml.SequenceNode || v.Decode(&d.Command) != nil || len(d.Command) == 0 || d.Command[0] == "" {
				add(v.Line, "command must be a non-empty list of strings (the argv), such as [python3, tools/%s.py]", d.Name)
				d.Command = nil
			}
		case "effect":
			switch v.Value {
			case "read":
				d.Effect = tools.EffectRead
			case "write":
				d.Effect = tools.EffectWrite
			default:
				add(v.Line, "effect %q: want read or write", v.Value)
			}
		case "timeout":
			t, err := time.ParseDuration(v.Value)
			switch {
			case v.Kind != yaml.ScalarNode || err != nil:
				add(v.Line, "timeout %q is not a duration: give one such as 30s or 2m", v.Value)
			case t <= 0 || t > MaxTimeout:
				add(v.Line, "timeout %s is out of range: give more than 0 and at most %s", t, MaxTimeout)
			default:
				d.Timeout = t
			}
		case "env":
			if v.Kind != yaml.MappingNode || v.Decode(&d.Env) != nil {
				add(v.Line, "env must be a mapping of variable names to strings")
				d.Env = nil
				continue
			}
			for j := 0; j < len(v.Content); j += 2 {
				n := v.Content[j]
				switch {
				case !envName.MatchString(n.Value):
					add(n.Line, "env: %q is not a variable name", n.Value)
				case n.Value == EnvSessionID || n.Value == EnvTree:
					add(n.Line, "env: %s is set by july for every call; remove it", n.Value)
				}
			}
		case "cwd":
			c := v.Value
			if !filepath.IsAbs(c) {
				c = filepath.Join(dir, c)
			}
			d.Cwd = filepath.Clean(c)
			if fi, err := os.Stat(d.Cwd); v.Kind != yaml.ScalarNode || err != nil || !fi.IsDir() {
				add(v.Line, "cwd %q is not a directory (relative to the agent directory)", v.Value)
			}
		default:
			add(k.Line, "unknown field %q (known: %s)", k.Value, strings.Join(fields, ", "))
		}
	}
	if !seen["description"] {
		add(m.Line, "description is required: say what the tool does, for the model")
	}
	if !seen["command"] {
		add(m.Line, "command is required: the argv to run, such as [python3, tools/%s.py]", d.Name)
	}
	if d.Schema == nil && !seen["inputSchema"] {
		d.Schema = &jsonschema.Schema{Type: "object"}
	}
	return d, problems
}

// yamlLine splits yaml.v3's "yaml: line N: message" into N and message.
func yamlLine(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := lineMsg.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, m[2]
	}
	return 0, msg
}

var lineMsg = regexp.MustCompile(`^line (\d+): (.*)$`)

// readBounded reads the file rel inside dir: a regular file of at most
// MaxFileBytes, opened without following a path out of dir.
func readBounded(dir, rel string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err == nil && len(data) > MaxFileBytes {
		err = fmt.Errorf("more than the %d bytes allowed", MaxFileBytes)
	}
	return data, err
}

// decodeSchema turns the YAML inputSchema into a JSON Schema and checks
// it: an object schema that resolves, with no unknown keyword (a
// misspelled "propertes" would otherwise accept anything).
func decodeSchema(v *yaml.Node) (*jsonschema.Schema, string) {
	if v.Kind != yaml.MappingNode {
		return nil, "must be a mapping (a JSON Schema with type: object)"
	}
	var raw any
	if err := v.Decode(&raw); err != nil {
		return nil, err.Error()
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, "not representable as JSON: " + err.Error()
	}
	s := &jsonschema.Schema{}
	if err := json.Unmarshal(data, s); err != nil {
		// jsonschema-go's decoding names its internal types: drop them.
		msg := strings.ReplaceAll(err.Error(), "schemaWithoutMethods.", "")
		return nil, strings.Replace(msg, "Go struct field .", "field ", 1)
	}
	if s.Type != "object" {
		return nil, `must have type: object (the arguments are one JSON object)`
	}
	if kw := unknownKeywords(s, ""); len(kw) > 0 {
		return nil, "unknown JSON Schema keyword " + strings.Join(kw, ", ")
	}
	if _, err := s.Resolve(nil); err != nil {
		return nil, err.Error()
	}
	return s, ""
}

// unknownKeywords lists the keywords jsonschema-go does not know, as
// where.keyword, in the schema and the subschemas a tool schema uses.
func unknownKeywords(s *jsonschema.Schema, where string) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(s.Extra)) {
		out = append(out, fmt.Sprintf("%q", where+k))
	}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		out = append(out, unknownKeywords(s.Properties[k], where+"properties."+k+".")...)
	}
	out = append(out, unknownKeywords(s.Items, where+"items.")...)
	out = append(out, unknownKeywords(s.AdditionalProperties, where+"additionalProperties.")...)
	for name, list := range map[string][]*jsonschema.Schema{"anyOf": s.AnyOf, "oneOf": s.OneOf, "allOf": s.AllOf} {
		for i, c := range list {
			out = append(out, unknownKeywords(c, fmt.Sprintf("%s%s.%d.", where, name, i))...)
		}
	}
	slices.Sort(out)
	return out
}

// CheckCommand reports a command that cannot be run: a path (relative to
// the agent directory) that is missing or not executable, or a bare name
// not on PATH. july validate runs it; a run reports the same as the
// call's error.
func (d *Def) CheckCommand() *Problem {
	if _, err := d.resolve(); err != nil {
		return &Problem{File: d.File, Line: d.commandLine, Message: err.Error()}
	}
	return nil
}

// resolve returns the path of the command's program.
func (d *Def) resolve() (string, error) {
	prog := d.Command[0]
	if !strings.Contains(prog, "/") {
		p, err := exec.LookPath(prog)
		if err != nil {
			return "", fmt.Errorf("command %q is not on PATH", prog)
		}
		return p, nil
	}
	if !filepath.IsAbs(prog) {
		prog = filepath.Join(d.agentDir, prog)
	}
	fi, err := os.Stat(prog)
	switch {
	case err != nil:
		return "", fmt.Errorf("command %q: %v", d.Command[0], unwrap(err))
	case fi.IsDir():
		return "", fmt.Errorf("command %q is a directory", d.Command[0])
	case fi.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("command %q is not executable (chmod +x it, or run it with its interpreter: [python3, %s])", d.Command[0], d.Command[0])
	}
	return prog, nil
}

func unwrap(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// environ is the call's environment: the file's env with ${VAR} taken
// from july's environment, then july's own variables.
func (d *Def) environ(sessionID, tree string) []string {
	var env []string
	for _, k := range slices.Sorted(maps.Keys(d.Env)) {
		env = append(env, k+"="+os.Expand(d.Env[k], os.Getenv))
	}
	if sessionID != "" {
		env = append(env, EnvSessionID+"="+sessionID)
	}
	if tree != "" {
		env = append(env, EnvTree+"="+tree)
	}
	return env
}

// Session is what a call knows of the session it runs in; the functions
// are read at each call (the session's id and mount point may be known
// only after the tools are built).
type Session struct {
	// ID returns the session's id ("" outside a session).
	ID func() string
	// Tree returns the mount point of the session's tree, or "" when it
	// is not mounted.
	Tree func() string
	// MaxOutput cuts stdout and stderr (default DefaultMaxOutput).
	MaxOutput int
}

// Tool returns the model-facing tool that runs d in session s.
func (d *Def) Tool(s Session) *tools.Tool {
	if s.MaxOutput <= 0 {
		s.MaxOutput = DefaultMaxOutput
	}
	return &tools.Tool{
		Name:        d.Name,
		Description: d.Description,
		Schema:      d.Schema,
		Effect:      d.Effect,
		Destructive: d.Effect == tools.EffectWrite,
		OpenWorld:   true,
		Run: func(ctx context.Context, args json.RawMessage) (*tools.Result, error) {
			id, tree := "", ""
			if s.ID != nil {
				id = s.ID()
			}
			if s.Tree != nil {
				tree = s.Tree()
			}
			if len(bytes.TrimSpace(args)) == 0 {
				args = json.RawMessage("{}")
			}
			return d.run(ctx, args, d.environ(id, tree), s.MaxOutput), nil
		},
	}
}
