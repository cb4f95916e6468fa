package runner

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/julyfs/julyfs/runner/approval"
	"github.com/julyfs/julyfs/runner/authored"
	"github.com/julyfs/julyfs/runner/mcpclient"
	"github.com/julyfs/julyfs/runner/tools"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

// ConfigFile is the name of an agent's definition inside its directory.
const ConfigFile = "agent.yaml"

// DefaultInstructions is the instructions file used when agent.yaml names
// none.
const DefaultInstructions = "instructions.md"

// Config is agent.yaml.
type Config struct {
	// Name names the agent. Required.
	Name string `yaml:"name"`
	// Model is the model the agent loop runs (july call and july mcp do not
	// use it).
	Model string `yaml:"model"`
	// ModelTimeout is how long the model's server may send nothing before
	// the attempt fails and is retried (a duration: "120s", "5m"); 0 is
	// the default, 120 s. july run's --model-timeout overrides it.
	ModelTimeout time.Duration `yaml:"modelTimeout"`
	// ModelMaxReply bounds one reply of the model (its text, and each
	// tool call's arguments) in bytes; 0 is the default, 32 bytes per
	// token of the model's maximum output, at least 1 MiB. july run's
	// --model-max-reply overrides it.
	ModelMaxReply int64 `yaml:"modelMaxReply"`
	// Instructions is the instructions file, relative to the agent's
	// directory (default instructions.md).
	Instructions string `yaml:"instructions"`
	// Root is the mount table the agent runs on, in the grammar of a root
	// config file's mounts: mapping. Omitted (or null): the host default,
	// the host disk at the working directory.
	Root yaml.Node `yaml:"root"`
	// Tools is the allowlist; nil when omitted.
	Tools []string `yaml:"tools"`
	// Index is the search index directory that backs SemanticSearch over
	// an authored root: a path relative to the agent's directory, or true
	// for DefaultIndexDir. Omitted (or false): no index, and
	// SemanticSearch finds nothing.
	Index yaml.Node `yaml:"index"`
	// Local holds the host-default settings (the spec's local.*).
	Local LocalConfig `yaml:"local"`
	// Runtime is "local" (the default). "cloud" and "grokbot" are
	// refused: july runs agents locally.
	Runtime string `yaml:"runtime"`
	// WorkspaceFiles seeds files into the tree when a session binds it:
	// path (relative paths resolve against the tree's root) to contents.
	WorkspaceFiles map[string]string `yaml:"workspaceFiles"`
	// Web configures the web tools (see WebConfig).
	Web WebConfig `yaml:"web"`

	// MCP lists the MCP servers whose tools the agent loop offers, by
	// server name (see runner/mcpclient and mcp.go).
	MCP map[string]mcpclient.ServerConfig `yaml:"mcp"`
	// Approvals maps a tool name or pattern (as tools: names them: edit,
	// delete, mcp:github/*; or a model-facing name: StrReplace) to ask,
	// allow or deny; see package runner/approval for the precedence.
	// Omitted: every tool runs without asking.
	Approvals map[string]string `yaml:"approvals"`
	// Cow, true, runs every session on a copy-on-write layer over the
	// tree (docs/cow.md); so does a root whose mount at / is
	// {cow: {base: SPEC}}, which Load rewrites to SPEC.
	Cow yaml.Node `yaml:"cow"`
}

// LocalConfig is the host-default settings block.
type LocalConfig struct {
	// Cwd is the host working directory of a host-default agent, relative
	// to the agent's directory; default: the process's working directory.
	Cwd string `yaml:"cwd"`
	// WorkspaceDir is the spec's other name for the harness working
	// directory; it may not be set together with Cwd.
	WorkspaceDir string `yaml:"workspaceDir"`
	// Sandbox is Cursor's process sandbox, which july does not have: any
	// value but false is refused.
	Sandbox yaml.Node `yaml:"sandbox"`
}

// Agent is a loaded and validated agent definition.
type Agent struct {
	// Dir is the agent's directory, absolute.
	Dir string
	// Config is agent.yaml as written.
	Config Config
	// Instructions is the text of the instructions file ("" when the
	// default file does not exist).
	Instructions string
	// Plan is the agent's toolset.
	Plan Plan
	// Cwd is the host working directory of a host-default agent, absolute;
	// "" for an authored root.
	Cwd string
	// IndexDir is the index directory from agent.yaml's index, absolute;
	// "" for none.
	IndexDir string
	// Notes are things july validate says that are not problems (a
	// default grant left out, and why).
	Notes []string
	// Warnings are legal but probably unintended settings (a root mount
	// the turn scratch /tmp shadows), for july validate to print.
	Warnings []Problem

	root *rootTable    // the decoded root; nil for the host default
	live *liveTemplate // the root's template when it is live, else nil

	approvals *approval.Rules // agent.yaml's approvals:, parsed
	// authored are the tools/*.yaml tools (authoredtools.go).
	authored []*authored.Def
	// Cow: every session runs on a copy-on-write layer (agent.yaml's
	// cow: true, or a cow: root mount at /).
	Cow bool
}

// Problem is one thing wrong with an agent definition.
type Problem struct {
	// Field is where: "tools", "root", "local.cwd", "tools/Read.go", ...
	Field string
	// Message says what is wrong and how to fix it.
	Message string
}

func (p Problem) String() string {
	if p.Field == "" {
		return p.Message
	}
	return p.Field + ": " + p.Message
}

// ValidationError is every problem found in one agent definition.
type ValidationError struct {
	// Dir is the agent directory as given.
	Dir string
	// Problems are in the order they were found.
	Problems []Problem
}

// Error lists the problems, one per line.
func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "agent %s is invalid:", e.Dir)
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Load reads and validates the agent defined in dir. Every problem is
// reported at once in a *ValidationError; a missing or unreadable
// directory is a plain error.
func Load(dir string) (*Agent, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(abs, ConfigFile))
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", dir, err)
	}
	a := &Agent{Dir: abs}
	var problems []Problem
	add := func(field, format string, args ...any) {
		problems = append(problems, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	invalid := func() error { return &ValidationError{Dir: dir, Problems: problems} }

	if msg := seedAliases(data); msg != "" {
		add("workspaceFiles", "%s", msg)
		return nil, invalid()
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&a.Config); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			add(ConfigFile, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
			return nil, invalid()
		}
		for _, msg := range te.Errors {
			add(ConfigFile, "%s", yamlProblem(msg))
		}
		return nil, invalid()
	}
	c := &a.Config
	rootSet := c.Root.Kind != 0 && !(c.Root.Kind == yaml.ScalarNode && c.Root.Tag == "!!null")
	if c.Tools == nil && topLevelNull(data, "tools") {
		// A tools: key whose entries are all commented out must not fail
		// open into the whole default catalog.
		add("tools", "is empty (null): list the tools the agent may use, write tools: [] for none, or remove tools: for the default set")
	}

	if strings.TrimSpace(c.Name) == "" {
		add("name", "required: give the agent a name")
	}

	instr := c.Instructions
	if instr == "" {
		instr = DefaultInstructions
	}
	text, err := readInstructions(abs, instr)
	switch {
	case err == nil:
		a.Instructions = string(text)
	case c.Instructions == "" && errors.Is(err, os.ErrNotExist):
		// The default file is optional.
	default:
		add("instructions", "cannot read %s: %v", vfs.DisplayPath(instr), unwrapPath(err))
	}

	switch c.Runtime {
	case "", "local":
	case "cloud", "grokbot":
		if rootSet {
			add("runtime", "root with runtime %q fails closed: an authored root only binds on a local turn", c.Runtime)
		} else {
			add("runtime", "%q is not supported: july runs agents locally (runtime: local)", c.Runtime)
		}
	default:
		add("runtime", "unknown runtime %q: want local", c.Runtime)
	}

	switch {
	case c.ModelTimeout < 0:
		add("modelTimeout", "%s is negative: give a duration such as 120s", c.ModelTimeout)
	case c.ModelTimeout > 0 && c.ModelTimeout < time.Second:
		add("modelTimeout", "%s is under a second: give a duration such as 120s", c.ModelTimeout)
	}
	if c.ModelMaxReply < 0 {
		add("modelMaxReply", "%d is negative: give a number of bytes, or 0 for the default", c.ModelMaxReply)
	}

	sandboxSet := c.Local.Sandbox.Kind != 0 && c.Local.Sandbox.Tag != "!!null"
	if rootSet {
		for _, f := range []struct {
			name string
			set  bool
		}{{"local.cwd", c.Local.Cwd != ""}, {"local.workspaceDir", c.Local.WorkspaceDir != ""}, {"local.sandbox", sandboxSet}} {
			if f.set {
				add(f.name, "set together with root fails closed: %s is a host-disk setting and the agent runs on its root, not the host disk. Remove %s, or remove root", f.name, f.name)
			}
		}
	} else {
		if sandboxSet && !(c.Local.Sandbox.Kind == yaml.ScalarNode && c.Local.Sandbox.Value == "false") {
			add("local.sandbox", "july has no process sandbox, so Shell would run unsandboxed; remove local.sandbox (or set it to false), or use an authored root without shell")
		}
		cwd := c.Local.Cwd
		if c.Local.WorkspaceDir != "" {
			if cwd != "" {
				add("local.workspaceDir", "set together with local.cwd: they name the same directory; keep one")
			}
			cwd = c.Local.WorkspaceDir
		}
		if cwd == "" {
			if a.Cwd, err = os.Getwd(); err != nil {
				return nil, err
			}
		} else {
			if !filepath.IsAbs(cwd) {
				cwd = filepath.Join(abs, cwd)
			}
			a.Cwd = filepath.Clean(cwd)
			if fi, err := os.Stat(a.Cwd); err != nil || !fi.IsDir() {
				add("local.cwd", "%s is not a directory", vfs.DisplayPath(a.Cwd))
			}
		}
	}

	plan, ps := PlanTools(rootSet, c.Tools)
	problems = append(problems, ps...)
	a.Plan = plan
	problems = append(problems, a.cowProblems()...)
	if ps, note := a.webProblems(); len(ps) > 0 {
		problems = append(problems, ps...)
	} else if note != "" {
		a.Notes = append(a.Notes, note)
	}
	problems = append(problems, a.mcpProblems()...)

	if rootSet {
		node := &c.Root
		if hasTemplate(node) {
			// A live root: validated with placeholders, built per session
			// (liveroot.go).
			a.live = &liveTemplate{node: c.Root, dir: abs, prefixes: templatedPrefixes(&c.Root)}
			node = a.live.placeholder()
		}
		t, ps := decodeRoot(node, abs)
		problems = append(problems, ps...)
		if t != nil && a.live != nil {
			problems = append(problems, liveProblems(&c.Root, t.table, c.Name)...)
		}
		a.root = t
		if t != nil && a.Plan.ScratchTmp {
			a.Warnings = append(a.Warnings, t.shadowedTmp()...)
		}
	}

	for _, p := range slices.Sorted(maps.Keys(c.WorkspaceFiles)) {
		if msg := checkSeedPath(p, rootSet); msg != "" {
			add("workspaceFiles", "%s", msg)
		}
	}

	if dir, msg := indexDir(&c.Index, abs); msg != "" {
		add("index", "%s", msg)
	} else if dir != "" {
		if msg := plan.indexProblem(); msg != "" {
			add("index", "%s", msg)
		}
		a.IndexDir = dir
	}

	problems = append(problems, toolClashes(abs)...)
	problems = append(problems, a.approvalProblems()...)
	problems = append(problems, a.loadAuthored()...)

	if len(problems) > 0 {
		return nil, invalid()
	}
	return a, nil
}

// MaxInstructionsBytes bounds the instructions file.
const MaxInstructionsBytes = 1 << 20

// readInstructions reads the instructions file name, which must be a
// regular file inside the agent directory dir (symlinks may point within
// it): os.Root refuses absolute names and any path that leaves dir, the
// file is opened non-blocking (a FIFO must not hang july validate) and
// checked to be regular on the open descriptor, and at most
// MaxInstructionsBytes are read.
func readInstructions(dir, name string) ([]byte, error) {
	if filepath.IsAbs(name) {
		return nil, fmt.Errorf("an absolute path; name a file inside the agent directory")
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if local.IsEscape(err) {
			return nil, fmt.Errorf("outside the agent directory; name a file inside it")
		}
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
	if fi.Size() > MaxInstructionsBytes {
		return nil, fmt.Errorf("%d bytes, more than the %d allowed", fi.Size(), MaxInstructionsBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxInstructionsBytes+1))
	if err == nil && len(data) > MaxInstructionsBytes {
		err = fmt.Errorf("more than the %d bytes allowed", MaxInstructionsBytes)
	}
	return data, err
}

// topLevel returns the value of the top-level key of the YAML document
// data, or nil. Aliases are not expanded.
func topLevel(data []byte, key string) *yaml.Node {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// topLevelNull reports that the YAML document data has the top-level key
// with a null value ("tools:" with nothing after it, or "tools: ~").
func topLevelNull(data []byte, key string) bool {
	v := topLevel(data, key)
	return v != nil && v.Kind == yaml.ScalarNode && v.Tag == "!!null"
}

// seedAliases refuses YAML aliases in workspaceFiles (as the mapping or as
// a file's contents), before decoding would expand them: one anchor
// referenced many times would multiply its size in memory.
func seedAliases(data []byte) string {
	v := topLevel(data, "workspaceFiles")
	if v == nil {
		return ""
	}
	if v.Kind == yaml.AliasNode {
		return fmt.Sprintf("line %d: a YAML alias (*%s) is not allowed here; write the files out", v.Line, v.Value)
	}
	for i := 1; i < len(v.Content); i += 2 {
		if c := v.Content[i]; c.Kind == yaml.AliasNode {
			return fmt.Sprintf("line %d: %s: a YAML alias (*%s) is not allowed as seed contents; write the contents out", c.Line, v.Content[i-1].Value, c.Value)
		}
	}
	return ""
}

// checkSeedPath refuses a workspace file under the reserved memory/ (after
// normalization: ./memory/x and foo/../memory/x are memory/x) and, under an
// authored root, under /tmp (turn scratch that shadows the root).
func checkSeedPath(p string, root bool) string {
	clean := vfs.Clean(p)
	switch {
	case vfs.HasPrefix(clean, "/memory"):
		return fmt.Sprintf("%q is %s, under the reserved memory/ (durable agent memory): seed files elsewhere", p, clean)
	case root && vfs.HasPrefix(clean, "/tmp"):
		return fmt.Sprintf("%q is %s, under the reserved /tmp (turn scratch, shadowed each turn): seed files elsewhere", p, clean)
	case clean == "/":
		return fmt.Sprintf("%q names the root, not a file", p)
	}
	return ""
}

// toolClashes refuses authored tools named like a synthesized or harness
// tool (tools/Read.go, tools/StrReplace.ts, tools/Task.yaml, ...):
// discovery fails closed on the clash for host-default and authored roots
// alike.
func toolClashes(dir string) []Problem {
	entries, err := os.ReadDir(filepath.Join(dir, "tools"))
	if err != nil {
		return nil
	}
	synthesized := append(tools.FileToolNames(), tools.NameShell)
	var out []Problem
	for _, e := range entries {
		name := e.Name()
		stem := strings.TrimSuffix(name, filepath.Ext(name))
		for _, r := range reservedToolNames() {
			if !strings.EqualFold(stem, r) {
				continue
			}
			kind, why := "built-in", fmt.Sprintf("the runner serves %s itself", r)
			if slices.Contains(synthesized, r) {
				kind, why = "synthesized", fmt.Sprintf("the runner synthesizes %s from the bound tree", r)
			}
			out = append(out, Problem{
				Field:   "tools/" + name,
				Message: fmt.Sprintf("an authored tool named like the %s %s fails closed: %s; rename or remove tools/%s", kind, r, why, name),
			})
		}
	}
	return out
}

// yamlProblem rewrites a yaml.v3 decoding message for people: "line 2:
// field tool not found in type runner.Config" becomes "line 2: unknown
// field \"tool\"".
func yamlProblem(msg string) string {
	line, rest, ok := strings.Cut(msg, ": ")
	if !ok {
		return msg
	}
	if field, ok := strings.CutPrefix(rest, "field "); ok {
		if name, _, ok := strings.Cut(field, " not found in type "); ok {
			return fmt.Sprintf("%s: unknown field %q", line, name)
		}
	}
	return msg
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
