package rootspec

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// The kinds of tree a spec can name.
const (
	KindTemp    = "temp"    // in-memory tree, optionally seeded
	KindLocal   = "local"   // a host directory
	KindOverlay = "overlay" // same-root layers, earlier layers win (config only)
	KindUnion   = "union"   // a nested mount table (config only)
)

// Spec describes one tree.
type Spec struct {
	// Kind is one of the Kind constants.
	Kind string
	// Dir is the absolute host directory of a local tree.
	Dir string
	// Files seeds a temp tree: path to contents.
	Files map[string][]byte
	// Layers are an overlay's trees, upper first.
	Layers []Spec
	// Mounts is a union's nested table.
	Mounts Table
	// Store is a hostfiles tree's store: an absolute directory or a
	// postgres:// URL. Scope is its scope (see hostfiles.go).
	Store, Scope string
	// Plugin is the binary and parameters of a plugin tree.
	Plugin *PluginSpec
	// ReadOnly wraps the tree so writes and deletes fail with
	// "read-only mount".
	ReadOnly bool
	// Origin says where the spec was written, for messages: the --mount
	// value or "file:line".
	Origin string
}

// Mount binds a tree to a prefix.
type Mount struct {
	// Prefix is the clean absolute path the tree appears at.
	Prefix string
	// Spec is the tree.
	Spec Spec
}

// Table is an ordered mount table with unique prefixes.
type Table []Mount

// Source renders what the tree is made of in the flag's KIND:ARG form:
// Kind, a colon and [Spec.Arg].
func (s Spec) Source() string { return s.Kind + ":" + s.Arg() }

// Arg renders the argument of the kind: the directory of a local tree,
// "" for an empty temp tree ("2 files" when seeded), and overlay layers or
// union mounts joined by commas in brackets.
func (s Spec) Arg() string {
	switch s.Kind {
	case KindLocal:
		return s.Dir
	case KindHostfiles:
		return s.hostfilesArg()
	case KindTemp:
		switch n := len(s.Files); n {
		case 0:
			return ""
		case 1:
			return "1 file"
		default:
			return strconv.Itoa(n) + " files"
		}
	case KindPlugin:
		return s.Plugin.arg()
	case KindOverlay:
		parts := make([]string, len(s.Layers))
		for i, l := range s.Layers {
			parts[i] = l.String()
		}
		return "[" + strings.Join(parts, ",") + "]"
	case KindUnion:
		parts := make([]string, len(s.Mounts))
		for i, m := range s.Mounts {
			parts[i] = m.String()
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return ""
}

// String renders the spec as Source plus "?ro" when ReadOnly is set. For a
// local spec or an unseeded temp spec it is the flag form, and parses back
// to the same spec.
func (s Spec) String() string {
	switch {
	case s.Kind == KindHostfiles:
		return s.hostfilesString()
	case s.ReadOnly:
		return s.Source() + "?ro"
	case s.Kind == KindLocal && strings.Contains(s.Dir, "?"):
		// Options follow the last '?': an empty option list keeps a '?'
		// in the directory name from being read as one.
		return s.Source() + "?"
	}
	return s.Source()
}

// Writable reports whether writes can succeed on the tree: false when it
// is marked read-only, for an overlay, and for a union of read-only trees.
func (s Spec) Writable() bool {
	if s.ReadOnly {
		return false
	}
	switch s.Kind {
	case KindOverlay:
		return false
	case KindUnion:
		for _, m := range s.Mounts {
			if m.Spec.Writable() {
				return true
			}
		}
		return false
	}
	return true
}

// Mode returns "rw" for a writable tree and "ro" otherwise.
func (s Spec) Mode() string {
	if s.Writable() {
		return "rw"
	}
	return "ro"
}

// String renders the mount as PREFIX=SPEC, the flag form where one exists.
func (m Mount) String() string { return m.Prefix + "=" + m.Spec.String() }

// Lookup returns the mount at prefix (clean).
func (t Table) Lookup(prefix string) (Mount, bool) {
	for _, m := range t {
		if m.Prefix == prefix {
			return m, true
		}
	}
	return Mount{}, false
}

// Override returns t with flags applied: a mount in flags whose prefix t
// already has replaces that entry in place, the others are appended in
// order. Neither input is modified.
func (t Table) Override(flags Table) Table {
	out := slices.Clone(t)
	for _, f := range flags {
		i := slices.IndexFunc(out, func(m Mount) bool { return m.Prefix == f.Prefix })
		if i >= 0 {
			out[i] = f
		} else {
			out = append(out, f)
		}
	}
	return out
}

// kindInfo describes a kind for parsing and messages.
type kindInfo struct {
	// flag reports whether the kind has a flag form (KIND:ARG).
	flag bool
	// usage is the flag or YAML form shown in messages.
	usage string
}

var kinds = map[string]kindInfo{
	KindTemp:      {flag: true, usage: "temp: (an empty in-memory tree)"},
	KindLocal:     {flag: true, usage: "local:DIR (a host directory)"},
	KindHostfiles: {flag: true, usage: "hostfiles:DIR|postgres://URL[?scope=deployment|session] (durable host files)"},
	KindOverlay:   {usage: "overlay: [layer, ...] (config files only)"},
	KindUnion:     {usage: "union: {PREFIX: entry, ...} (config files only)"},
}

// Kinds returns the names of the known kinds, sorted.
func Kinds() []string { return slices.Sorted(maps.Keys(kinds)) }

// FlagKinds returns the names of the kinds a --mount flag can name, sorted.
func FlagKinds() []string {
	var out []string
	for _, k := range Kinds() {
		if kinds[k].flag {
			out = append(out, k)
		}
	}
	return out
}

// options are the keys a spec accepts besides its kind, in flags (after
// '?') and in config entries. Each applies a value ("" for a bare flag
// option) to the spec.
var options = map[string]func(s *Spec, value string) error{
	"ro":       setReadOnly,
	"readonly": setReadOnly,
}

func setReadOnly(s *Spec, value string) error {
	switch value {
	case "", "true":
		s.ReadOnly = true
	case "false":
		s.ReadOnly = false
	default:
		return fmt.Errorf("option ro takes true or false, not %q", value)
	}
	return nil
}

func optionNames() string { return strings.Join(slices.Sorted(maps.Keys(options)), ", ") }

// Error is a malformed mount flag or config entry.
type Error struct {
	// File and Line locate a config entry; File is empty for a flag or for
	// a node decoded without a file name, Line is 0 for a flag.
	File string
	Line int
	// Flag is the --mount value, for a flag.
	Flag string
	// Prefix is the mount the error is about, when known.
	Prefix string
	// Msg says what is wrong.
	Msg string
	// Err is the underlying cause, if any.
	Err error

	fromFlag bool
}

// Error renders `invalid --mount "VALUE": MSG` for a flag and
// "FILE:LINE: PREFIX: MSG" for a config entry.
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.fromFlag:
		fmt.Fprintf(&b, "invalid --mount %q: ", redactPassword(e.Flag))
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		b.WriteString(e.File + ": ")
	default:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Prefix != "" && !e.fromFlag {
		b.WriteString(e.Prefix + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
