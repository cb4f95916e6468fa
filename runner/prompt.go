package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/julyfs/julyfs/rootspec"
	"github.com/julyfs/julyfs/vfs"
)

// This file writes what the model is told besides the conversation: the
// system prompt (instructions.md, then the environment brief derived from
// the mount table) and, on a session's first turn, the tree's AGENTS.md.

// AgentsFile is the file at the tree's root whose content prefaces the
// first message of a session.
const AgentsFile = "/AGENTS.md"

// maxAgentsFile bounds the AGENTS.md content given to the model.
const maxAgentsFile = 64 << 10

// SystemPrompt returns the system prompt of the agent's turns: the
// instructions file, then the environment brief.
func (a *Agent) SystemPrompt() string {
	var b strings.Builder
	if instr := strings.TrimSpace(a.Instructions); instr != "" {
		b.WriteString(instr)
		b.WriteString("\n\n")
	}
	b.WriteString(a.EnvironmentBrief())
	return b.String()
}

// EnvironmentBrief describes the tree to the model: under an authored root,
// "Workspace Path: /", each mount point with its kind and whether it is
// read-only, /tmp as per-turn scratch, and that there is no shell; on the
// host default, the working directory and whether Shell runs there.
func (a *Agent) EnvironmentBrief() string {
	var b strings.Builder
	b.WriteString("# Environment\n\n")
	toolList := strings.Join(a.Plan.Served(), ", ")
	if toolList == "" {
		toolList = "none"
	}
	if a.root == nil {
		fmt.Fprintf(&b, "Workspace Path: %s\n\n", printable(a.Cwd))
		fmt.Fprintf(&b, "You work in the host directory %s. Paths are relative to it, or absolute under it.\n", printable(a.Cwd))
		if a.Plan.Shell {
			b.WriteString("Shell runs bash in that directory.\n")
		} else {
			b.WriteString("There is no shell: work through the tools.\n")
		}
		fmt.Fprintf(&b, "Tools: %s.\n", toolList)
		return b.String()
	}
	b.WriteString("Workspace Path: /\n\n")
	b.WriteString("You work on a virtual tree of files rooted at /, not on a computer: there is no shell, and no program can be run. ")
	fmt.Fprintf(&b, "Use the tools (%s). Paths are absolute and start at /.\n\n", toolList)
	b.WriteString("Mounts:\n")
	for _, m := range a.root.table {
		fmt.Fprintf(&b, "- %s: %s\n", printable(m.Prefix), describeSpec(m.Spec))
	}
	if a.Plan.ScratchTmp {
		fmt.Fprintf(&b, "- %s: scratch, empty at the start of every turn and dropped at its end; nothing there is kept\n", ScratchPrefix)
	}
	return b.String()
}

// describeSpec says what a mount is, in the model's terms.
func describeSpec(s rootspec.Spec) string {
	mode := "read-write"
	if !s.Writable() {
		mode = "read-only (writes fail with \"read-only mount: PATH\")"
	}
	switch s.Kind {
	case rootspec.KindLocal:
		if !s.Writable() {
			return mode + ", files on disk (local)"
		}
		return mode + ", files on disk (local): changes are kept"
	case rootspec.KindTemp:
		if !s.Writable() {
			return mode + ", an in-memory tree (temp)"
		}
		return mode + ", an in-memory tree (temp): changes last while this process runs"
	case rootspec.KindOverlay:
		return mode + fmt.Sprintf(", %d layers (overlay), the upper shadowing the lower", len(s.Layers))
	case rootspec.KindUnion:
		parts := make([]string, len(s.Mounts))
		for i, m := range s.Mounts {
			parts[i] = printable(m.Prefix) + " " + m.Spec.Kind
		}
		return mode + ", nested mounts (union: " + strings.Join(parts, ", ") + ")"
	}
	return mode + ", " + s.Kind
}

// printable escapes control characters in a path shown to the model.
func printable(p string) string {
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return strconv.Quote(p)
		}
	}
	return p
}

// FirstTurnPreamble returns what prefaces a session's first message: the
// content of AGENTS.md at the root of the session's tree, or "" when it has
// none.
func (s *Session) FirstTurnPreamble(ctx context.Context) (string, error) {
	data, err := s.fs.Read(ctx, AgentsFile)
	switch {
	case errors.Is(err, vfs.ErrNotFound), errors.Is(err, vfs.ErrIsDir), errors.Is(err, vfs.ErrNoMount):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading %s: %w", AgentsFile, err)
	}
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	note := ""
	if len(text) > maxAgentsFile {
		text = text[:maxAgentsFile]
		note = fmt.Sprintf("\n[cut at %d bytes of %d]", maxAgentsFile, len(data))
	}
	return fmt.Sprintf("Instructions from %s at the root of the tree:\n\n%s%s", AgentsFile, strings.TrimRight(text, "\n"), note), nil
}
