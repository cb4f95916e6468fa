package tools

import (
	"strconv"
	"strings"
	"time"

	"github.com/julyfs/julyfs/vfs"
)

// The synthesized tool names, in the order they are listed.
const (
	NameRead           = "Read"
	NameLS             = "LS"
	NameGrep           = "Grep"
	NameGlob           = "Glob"
	NameWrite          = "Write"
	NameStrReplace     = "StrReplace"
	NameDelete         = "Delete"
	NameSemanticSearch = "SemanticSearch"
	NameShell          = "Shell"
)

// FileToolNames lists the eight tools synthesized from a FileSystem, in
// listing order.
func FileToolNames() []string {
	return []string{NameRead, NameLS, NameGrep, NameGlob, NameWrite, NameStrReplace, NameDelete, NameSemanticSearch}
}

// Options bound what the tools return. Zero fields take the defaults
// below.
type Options struct {
	// MaxReadLines is how many lines Read returns when no limit is given
	// (default 2000).
	MaxReadLines int
	// MaxLineLength cuts longer lines in Read and Grep output, in bytes
	// (default 2000).
	MaxLineLength int
	// MaxOutputBytes cuts any text result (default 256 KiB).
	MaxOutputBytes int
	// MaxEntries caps LS, Glob and Grep entries when the call sets no
	// head_limit (default 1000).
	MaxEntries int
	// HostDir, for a host-default agent, is the host directory the tree is
	// rooted at: an absolute host path under it is accepted and mapped
	// onto the tree ("/work/proj/a.txt" -> "/a.txt"). Empty for an
	// authored root.
	HostDir string
	// ShellTimeout is the Shell tool's default timeout (default 2m);
	// MaxShellTimeout caps what a call may ask for (default 10m).
	ShellTimeout, MaxShellTimeout time.Duration
	// MaxShellOutput cuts Shell output, in bytes (default 30000).
	MaxShellOutput int
}

func (o Options) withDefaults() Options {
	if o.MaxReadLines <= 0 {
		o.MaxReadLines = 2000
	}
	if o.MaxLineLength <= 0 {
		o.MaxLineLength = 2000
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = 256 << 10
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 1000
	}
	if o.ShellTimeout <= 0 {
		o.ShellTimeout = 2 * time.Minute
	}
	if o.MaxShellTimeout <= 0 {
		o.MaxShellTimeout = 10 * time.Minute
	}
	if o.ShellTimeout > o.MaxShellTimeout {
		o.ShellTimeout = o.MaxShellTimeout
	}
	if o.MaxShellOutput <= 0 {
		o.MaxShellOutput = 30000
	}
	return o
}

// path maps a path argument into the tree's namespace. A Go-quoted path
// (how the tools print a name with control characters or invalid UTF-8;
// see vfs.DisplayPath) is unquoted first. Then an absolute host
// path under HostDir loses that prefix; anything else is cleaned as a tree
// path (relative paths resolve against "/").
func (o Options) path(p string) string {
	p = vfs.ParseDisplayPath(p) // a path as the tools print it
	if o.HostDir != "" && strings.HasPrefix(p, o.HostDir) {
		rest := p[len(o.HostDir):]
		if rest == "" || rest[0] == '/' {
			return vfs.Clean(rest)
		}
	}
	return vfs.Clean(p)
}

// Synthesize returns the tools named in names (any of FileToolNames), built
// over fsys, in FileToolNames order. An unknown name is ignored; the runner
// decides which names an agent gets.
func Synthesize(fsys vfs.FileSystem, names []string, opts Options) []*Tool {
	opts = opts.withDefaults()
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	var out []*Tool
	for _, n := range FileToolNames() {
		if !want[n] {
			continue
		}
		switch n {
		case NameRead:
			out = append(out, NewRead(fsys, opts))
		case NameLS:
			out = append(out, NewLS(fsys, opts))
		case NameGrep:
			out = append(out, NewGrep(fsys, opts))
		case NameGlob:
			out = append(out, NewGlob(fsys, opts))
		case NameWrite:
			out = append(out, NewWrite(fsys, opts))
		case NameStrReplace:
			out = append(out, NewStrReplace(fsys, opts))
		case NameDelete:
			out = append(out, NewDelete(fsys, opts))
		case NameSemanticSearch:
			out = append(out, NewSemanticSearch(fsys, opts))
		}
	}
	return out
}

// cutNotice appends a bracketed notice on its own line.
func cutNotice(b *strings.Builder, notice string) {
	if b.Len() > 0 {
		b.WriteString("\n\n")
	}
	b.WriteString("[")
	b.WriteString(notice)
	b.WriteString("]")
}

// cutLine shortens line to at most max bytes on a UTF-8 boundary and says
// so.
func cutLine(line string, max int) string {
	if len(line) <= max {
		return line
	}
	cut := max
	for cut > 0 && !utf8Start(line[cut]) {
		cut--
	}
	return line[:cut] + "... [line cut: " + strconv.Itoa(len(line)) + " bytes]"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
