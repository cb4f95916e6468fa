package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/julyfs/julyfs/rootspec"
	"github.com/julyfs/julyfs/vfs"
)

// This file is the spec's live root: a tree that depends on the
// conversation. In agent.yaml a mount may name {sessionId} and
// {agentName} in its values (root: { /: { local: ./state/{sessionId} } });
// the root is then built once per session with the session's values, the
// templated local directories created on first use, and never shared
// across sessions. In Go, SessionOptions.RootFactory builds the tree from
// a RootContext. A root without templates stays static: every session
// of a process builds the same mounts.

// The template tokens a root may use.
const (
	TokenSessionID = "{sessionId}"
	TokenAgentName = "{agentName}"
)

// RootContext is what a live root is built from.
type RootContext struct {
	// SessionID is the session's id.
	SessionID string
	// AgentName is agent.yaml's name.
	AgentName string
	// ContinuationKey, when set, names the conversation the session
	// continues (a channel thread, say); "" otherwise.
	ContinuationKey string
}

// RootFactory builds a session's tree. It runs once per session and its
// tree is never shared with another session; when the tree is an
// io.Closer it is closed with the session.
type RootFactory func(ctx context.Context, rc RootContext) (vfs.FileSystem, error)

// pathValue is what a template value may be: one path segment.
var pathValue = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// liveTemplate is an agent's templated root.
type liveTemplate struct {
	node     yaml.Node         // root: as written
	dir      string            // the agent's directory
	prefixes map[string]string // top-level mount prefix -> the templated value, for descriptions
}

// hasTemplate reports whether a scalar under node names a token.
func hasTemplate(node *yaml.Node) bool {
	found := false
	walkScalars(node, "", func(n *yaml.Node, _ string) {
		if strings.Contains(n.Value, TokenSessionID) || strings.Contains(n.Value, TokenAgentName) {
			found = true
		}
	})
	return found
}

// walkScalars calls fn on every scalar value under n with the mapping key
// it is the value of ("" for none).
func walkScalars(n *yaml.Node, key string, fn func(n *yaml.Node, key string)) {
	switch n.Kind {
	case yaml.ScalarNode:
		fn(n, key)
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			walkScalars(n.Content[i+1], n.Content[i].Value, fn)
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, c := range n.Content {
			walkScalars(c, "", fn)
		}
	}
}

// localDir returns the host directory a scalar names when it is a local
// tree's directory (the value of local:, or a local:DIR[?opts] string).
func localDir(n *yaml.Node, key string) (dir string, ok bool) {
	if key == rootspec.KindLocal {
		return n.Value, true
	}
	if rest, ok := strings.CutPrefix(n.Value, rootspec.KindLocal+":"); ok {
		if i := strings.LastIndexByte(rest, '?'); i >= 0 {
			rest = rest[:i]
		}
		return rest, true
	}
	return "", false
}

// expand returns a copy of the template with the tokens replaced, and the
// templated local directories (absolute), to create before decoding.
func (t *liveTemplate) expand(rc RootContext) (*yaml.Node, []string, error) {
	for _, v := range []struct{ token, value string }{{TokenSessionID, rc.SessionID}, {TokenAgentName, rc.AgentName}} {
		if strings.Contains(nodeText(&t.node), v.token) && !pathValue.MatchString(v.value) {
			return nil, nil, fmt.Errorf("root: %s is %q, which cannot be a path segment", v.token, v.value)
		}
	}
	out := cloneNode(&t.node)
	var dirs []string
	walkScalars(out, "", func(n *yaml.Node, key string) {
		if !strings.Contains(n.Value, TokenSessionID) && !strings.Contains(n.Value, TokenAgentName) {
			return
		}
		n.Value = strings.NewReplacer(TokenSessionID, rc.SessionID, TokenAgentName, rc.AgentName).Replace(n.Value)
		if d, ok := localDir(n, key); ok {
			if !filepath.IsAbs(d) {
				d = filepath.Join(t.dir, d)
			}
			dirs = append(dirs, filepath.Clean(d))
		}
	})
	return out, dirs, nil
}

// placeholder returns a copy of the template whose templated local
// directories are the agent's directory, for validating the rest at Load.
func (t *liveTemplate) placeholder() *yaml.Node {
	out := cloneNode(&t.node)
	walkScalars(out, "", func(n *yaml.Node, key string) {
		if !strings.Contains(n.Value, TokenSessionID) && !strings.Contains(n.Value, TokenAgentName) {
			return
		}
		if d, ok := localDir(n, key); ok {
			n.Value = strings.Replace(n.Value, d, t.dir, 1)
			return
		}
		n.Value = strings.NewReplacer(TokenSessionID, "ses_placeholder", TokenAgentName, "agent").Replace(n.Value)
	})
	return out
}

// templatedPrefixes maps each top-level prefix whose entry has a token to
// its first templated scalar.
func templatedPrefixes(node *yaml.Node) map[string]string {
	out := map[string]string{}
	if node.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		prefix := vfs.Clean(node.Content[i].Value)
		walkScalars(node.Content[i+1], "", func(n *yaml.Node, _ string) {
			if _, seen := out[prefix]; !seen && (strings.Contains(n.Value, TokenSessionID) || strings.Contains(n.Value, TokenAgentName)) {
				out[prefix] = n.Value
			}
		})
	}
	return out
}

// liveProblems checks a templated root at Load: the tokens in a read-only
// mount (each session would get a new directory nothing can write), and
// an agent name that cannot be a path segment.
func liveProblems(node *yaml.Node, t rootspec.Table, agentName string) []Problem {
	var out []Problem
	tp := templatedPrefixes(node)
	for _, m := range t {
		v, ok := tp[m.Prefix]
		if !ok {
			continue
		}
		if strings.Contains(v, TokenSessionID) && !m.Spec.Writable() {
			out = append(out, Problem{Field: "root", Message: fmt.Sprintf("mount %s: a %s template in a read-only mount: each session would get a new, empty directory that nothing can write. Drop ro, or the template", m.Prefix, TokenSessionID)})
		}
	}
	if strings.Contains(nodeText(node), TokenAgentName) && !pathValue.MatchString(agentName) {
		out = append(out, Problem{Field: "root", Message: fmt.Sprintf("%s is %q, which cannot be a path segment: name the agent with letters, digits, '.', '_' and '-'", TokenAgentName, agentName)})
	}
	return out
}

// openLive builds a session's tree from the template.
func (a *Agent) openLive(ctx context.Context, rc RootContext) (vfs.FileSystem, func() error, error) {
	node, dirs, err := a.live.expand(rc)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, nil, fmt.Errorf("root: creating %s: %w", d, err)
		}
	}
	t, problems := decodeRoot(node, a.Dir)
	if len(problems) > 0 {
		return nil, nil, fmt.Errorf("root: %s", problems[0].Message)
	}
	return buildRoot(rootspec.WithSessionID(ctx, rc.SessionID), t)
}

// openFactory builds a session's tree with a RootFactory.
func openFactory(ctx context.Context, f RootFactory, rc RootContext) (vfs.FileSystem, func() error, error) {
	fsys, err := f(ctx, rc)
	if err != nil {
		return nil, nil, err
	}
	if fsys == nil {
		return nil, nil, fmt.Errorf("the root factory returned no tree")
	}
	var closeFn func() error
	if c, ok := fsys.(io.Closer); ok {
		closeFn = c.Close
	}
	return fsys, closeFn, nil
}

// Live reports whether the agent's root is built per session (its mounts
// name {sessionId} or {agentName}).
func (a *Agent) Live() bool { return a.live != nil }

func nodeText(n *yaml.Node) string {
	var b strings.Builder
	walkScalars(n, "", func(s *yaml.Node, _ string) { b.WriteString(s.Value); b.WriteByte(0) })
	return b.String()
}

func cloneNode(n *yaml.Node) *yaml.Node {
	c := *n
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, ch := range n.Content {
			c.Content[i] = cloneNode(ch)
		}
	}
	return &c
}
