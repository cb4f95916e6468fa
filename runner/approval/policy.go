// Package approval is the human in the loop before a tool call runs: the
// policy of agent.yaml's approvals: (tool name or pattern → ask, allow or
// deny), and the decision point, a [Gate], that wraps a tool's Run so
// the dispatcher stays as it is. The spec's order holds: the dispatcher's
// dry run stubs a write before its Run (and so before the gate) is ever
// reached, then the gate decides, then the tool runs.
//
// # Policy
//
// A [Rules] maps keys to a [Policy]. A key is a name as users write it
// in tools: (edit, delete, shell, mcp:github/create_issue), a
// model-facing tool name (StrReplace), or a pattern over either with
// path.Match syntax (mcp:github/*, *). A tool answers to several names
// (StrReplace is also edit; mcp__github__create_issue is also
// mcp:github/create_issue); the caller says which ([Gate] Names).
// Precedence:
//
//  1. a key that is one of the tool's names exactly beats any pattern;
//  2. among the keys of the same kind that match, deny beats ask beats
//     allow;
//  3. no key matches: allow (reads and writes alike; a write can be
//     held back with its name, or with "*": ask).
//
// # Decisions and events
//
// A tool whose policy is allow is not wrapped: it runs as before, and
// the log holds no approval event for it. For the others every call is
// decided and the decision is an approval.decided event (sessions
// [sessions.ApprovalDecided]) with who decided: "policy" (deny),
// "user" (an answer on the terminal or over HTTP, or an earlier
// "always"), "flag" (--approve=never|always, or no terminal), "timeout"
// (no answer in time), "interrupt" (the turn's context ended while the
// call waited; the reason carries the context's cause, such as "the
// server is stopping"). A call put to a person is first an
// approval.requested event. (A call still waiting when its process died
// is denied by "restart" when the session is next opened: package
// sessions' Resume records it.) A denied call returns to the model as a tool
// error naming the rule, so it can adapt; the turn goes on.
//
// # Askers
//
// Who is asked is an [Asker]: [Flag] decides without asking, [Terminal]
// prompts on a terminal, [Queue] parks the call until an HTTP request
// decides it or a timeout denies it.
//
// # Concurrency
//
// Rules are immutable. A Gate, a Terminal and a Queue are safe for
// concurrent use; a Terminal asks one question at a time.
package approval

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Policy is what approvals: says of a tool.
type Policy string

// The policies.
const (
	Allow Policy = "allow"
	Ask   Policy = "ask"
	Deny  Policy = "deny"
)

// strictness orders policies: deny > ask > allow.
func (p Policy) strictness() int {
	switch p {
	case Deny:
		return 2
	case Ask:
		return 1
	}
	return 0
}

// ParsePolicy parses ask, allow or deny.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(s); p {
	case Allow, Ask, Deny:
		return p, nil
	}
	return "", fmt.Errorf("unknown value %q: want ask, allow or deny", s)
}

// Rule is one approvals: entry.
type Rule struct {
	// Key is the tool name or pattern as written.
	Key string
	// Policy is its value.
	Policy Policy
}

// String renders the rule as agent.yaml has it: "edit: ask".
func (r Rule) String() string { return r.Key + ": " + string(r.Policy) }

// IsPattern reports whether key is a pattern (it has *, ? or [).
func IsPattern(key string) bool { return strings.ContainsAny(key, "*?[") }

// CheckKey reports a key that cannot match anything: empty, or a
// malformed pattern.
func CheckKey(key string) error {
	if strings.TrimSpace(key) == "" {
		return fmt.Errorf("an empty tool name")
	}
	if IsPattern(key) {
		if _, err := path.Match(key, ""); err != nil {
			return fmt.Errorf("%q is not a valid pattern (path.Match syntax: *, ?, [a-z])", key)
		}
	}
	return nil
}

// Rules is a parsed approvals: block.
type Rules struct {
	exact    []Rule
	patterns []Rule
}

// NewRules returns the rules of the approvals: block m (key → policy),
// with every problem: keyed by the key, in key order. Keys are checked
// with CheckKey only; which exact names exist is the caller's to say.
func NewRules(m map[string]string) (*Rules, map[string]error) {
	r := &Rules{}
	problems := map[string]error{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p, err := ParsePolicy(m[k])
		if err == nil {
			err = CheckKey(k)
		}
		if err != nil {
			problems[k] = err
			continue
		}
		if IsPattern(k) {
			r.patterns = append(r.patterns, Rule{Key: k, Policy: p})
		} else {
			r.exact = append(r.exact, Rule{Key: k, Policy: p})
		}
	}
	return r, problems
}

// Empty reports rules that decide nothing (every tool allowed).
func (r *Rules) Empty() bool { return r == nil || len(r.exact)+len(r.patterns) == 0 }

// List returns the rules, the exact names first, each kind in key order.
func (r *Rules) List() []Rule {
	if r == nil {
		return nil
	}
	return append(slices.Clone(r.exact), r.patterns...)
}

// HasAsk reports whether any rule asks.
func (r *Rules) HasAsk() bool {
	if r == nil {
		return false
	}
	for _, x := range append(slices.Clone(r.exact), r.patterns...) {
		if x.Policy == Ask {
			return true
		}
	}
	return false
}

// Match returns the rule that decides a tool answering to names, and
// whether one does (none: the tool is allowed). See the package doc for
// the precedence.
func (r *Rules) Match(names []string) (Rule, bool) {
	if r == nil {
		return Rule{}, false
	}
	if best, ok := strictest(r.exact, names, func(key, name string) bool { return key == name }); ok {
		return best, true
	}
	return strictest(r.patterns, names, func(key, name string) bool {
		ok, _ := path.Match(key, name)
		return ok
	})
}

// strictest returns the strictest rule of rules matching any of names.
func strictest(rules []Rule, names []string, match func(key, name string) bool) (Rule, bool) {
	var best Rule
	found := false
	for _, x := range rules {
		if !slices.ContainsFunc(names, func(n string) bool { return match(x.Key, n) }) {
			continue
		}
		if !found || x.Policy.strictness() > best.Policy.strictness() {
			best, found = x, true
		}
	}
	return best, found
}
