package web

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
)

// This file is where the web tools put output too large to show inline:
// the harness's {cwd}/agent-tools/{uuid}.txt on the host disk, as the
// spec's native WebSearch and WebFetch do. Under an authored root the
// runner moves each such file into the turn's /tmp and rewrites the
// result (see runner's scratch.go); Spill only writes and remembers what
// it wrote.

// SpillDirName is the directory under the harness cwd that holds spilled
// output.
const SpillDirName = "agent-tools"

// DefaultInlineLimit is the largest result shown inline, in bytes.
const DefaultInlineLimit = 32 << 10

// The follow-up sentences a spilled result ends with: on the host the
// file is a host path (Shell or Read reach it); under a root it is in
// /tmp, which Read and Grep reach.
const (
	FollowUpHost    = "Look at it in parts with Read (offset, limit) on that path, or with head, sed -n or grep in Shell."
	FollowUpOverlay = "Look at it in parts with Read (offset, limit), or search it with Grep."
)

// Spill writes large outputs to Dir/agent-tools. It is safe for concurrent
// use.
type Spill struct {
	// Dir is the harness cwd; files go to Dir/agent-tools/<uuid>.txt.
	Dir string
	// Inline is the largest output kept inline (default
	// DefaultInlineLimit).
	Inline int

	mu      sync.Mutex
	written []string
}

// Limit returns the inline limit in bytes.
func (s *Spill) Limit() int {
	if s.Inline <= 0 {
		return DefaultInlineLimit
	}
	return s.Inline
}

// Write writes text to a new Dir/agent-tools/<uuid>.txt and returns its
// path.
func (s *Spill) Write(text string) (string, error) {
	dir := filepath.Join(s.Dir, SpillDirName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("spilling output: %w", err)
	}
	p := filepath.Join(dir, uuid.NewString()+".txt")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		return "", fmt.Errorf("spilling output: %w", err)
	}
	s.mu.Lock()
	s.written = append(s.written, p)
	s.mu.Unlock()
	return p, nil
}

// Claim returns the paths this Spill wrote that occur in text, and
// forgets them: a result claims the files its own call wrote, never
// another call's, and never a path merely mentioned.
func (s *Spill) Claim(text string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	s.written = slices.DeleteFunc(s.written, func(p string) bool {
		if strings.Contains(text, p) {
			out = append(out, p)
			return true
		}
		return false
	})
	return out
}
