package rootspec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/julyfs/julyfs/vfs"
)

// LoadFile reads the YAML root config at path: a document whose only
// top-level key is mounts:, a mapping of prefix to entry. Relative
// directories resolve against the file's own directory.
func LoadFile(path string) (Table, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(data, path, filepath.Dir(abs))
}

// Parse decodes a YAML root config document (see [LoadFile]). name is the
// file name used in errors; relative directories resolve against baseDir.
func Parse(data []byte, name, baseDir string) (Table, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Error{File: name, Msg: strings.TrimPrefix(err.Error(), "yaml: "), Err: err}
	}
	d := decoder{file: name, base: baseDir}
	root := resolve(&doc)
	if root == nil || root.Kind == 0 || isNull(root) {
		return nil, &Error{File: name, Msg: "empty config: want a mounts: mapping"}
	}
	if root.Kind != yaml.MappingNode {
		return nil, d.errf(root, "", "want a mapping with a mounts: key, got %s", describe(root))
	}
	var mounts *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := resolve(root.Content[i]), resolve(root.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.Value != "mounts" {
			return nil, d.errf(k, "", "unknown key %q: a root config has only mounts:", k.Value)
		}
		if mounts != nil {
			return nil, d.errf(k, "", "duplicate mounts: key")
		}
		mounts = v
	}
	if mounts == nil {
		return nil, &Error{File: name, Msg: "no mounts: key"}
	}
	return d.table(mounts, "")
}

// DecodeMounts decodes a YAML mapping of prefix to entry (the value of
// mounts: in a config file, or of root: in agent.yaml) into a table.
// Relative directories resolve against baseDir. Errors are *Error values
// with the line and the prefix but no file name; use [DecodeMountsFile] to
// name the file. A null node is an empty table.
func DecodeMounts(node *yaml.Node, baseDir string) (Table, error) {
	return DecodeMountsFile(node, "", baseDir)
}

// DecodeMountsFile is [DecodeMounts] with file named in errors.
func DecodeMountsFile(node *yaml.Node, file, baseDir string) (Table, error) {
	d := decoder{file: file, base: baseDir}
	return d.table(node, "")
}

type decoder struct {
	file, base string
	// visits counts decoded entries, to bound alias expansion (a cyclic
	// or exponential chain of YAML aliases).
	visits int
	depth  int
	// seeded counts the bytes of temp seed contents decoded so far.
	seeded int64
}

// maxVisits bounds the entries one decode may visit, maxDepth how deeply
// overlays and unions may nest.
const (
	maxVisits = 100000
	maxDepth  = 64
)

// MaxSeedBytes bounds the total contents of the temp: seed files one
// decode may produce. Seeds are for small fixtures; a larger tree belongs
// in a local: directory.
const MaxSeedBytes = 64 << 20

func (d *decoder) errf(n *yaml.Node, prefix, format string, args ...any) *Error {
	return &Error{File: d.file, Line: n.Line, Prefix: prefix, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) origin(n *yaml.Node) string {
	if d.file == "" {
		return "line " + strconv.Itoa(n.Line)
	}
	return d.file + ":" + strconv.Itoa(n.Line)
}

// table decodes a mapping of prefix to entry; parent is the prefix of an
// enclosing union ("" at the top), used in messages.
func (d *decoder) table(n *yaml.Node, parent string) (Table, error) {
	n = resolve(n)
	if n == nil || n.Kind == 0 || isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, d.errf(n, parent, "want a mapping of prefix to entry, e.g. {/repo: {local: ./src}}, got %s", describe(n))
	}
	var t Table
	lines := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, d.errf(k, parent, "want a prefix such as /repo as the key, got %s", describe(k))
		}
		prefix, msg := checkPrefix(k.Value)
		if msg != "" {
			return nil, d.errf(k, join(parent, k.Value), "%s", msg)
		}
		name := join(parent, prefix)
		if line, dup := lines[prefix]; dup {
			return nil, d.errf(k, name, "duplicate prefix (first at line %d)", line)
		}
		lines[prefix] = k.Line
		s, err := d.entry(v, name)
		if err != nil {
			return nil, err
		}
		s.Origin = d.origin(k) // the line naming the prefix
		t = append(t, Mount{Prefix: prefix, Spec: s})
	}
	return t, nil
}

// entry decodes one tree: a mapping with one kind key and options, or a
// scalar in the flag form KIND:ARG[?OPTIONS].
func (d *decoder) entry(n *yaml.Node, name string) (Spec, error) {
	n = resolve(n)
	d.depth++
	defer func() { d.depth-- }()
	if d.visits++; (d.visits > maxVisits || d.depth > maxDepth) && n != nil {
		return Spec{}, d.errf(n, name, "too many or too deeply nested entries (a cycle of YAML aliases?)")
	}
	switch {
	case n == nil || isNull(n):
		line := 0
		if n != nil {
			line = n.Line
		}
		return Spec{}, &Error{File: d.file, Line: line, Prefix: name, Msg: "empty entry: want a kind such as {local: ./dir} or {temp: {}}"}
	case n.Kind == yaml.ScalarNode:
		s, err := parseSpec(n.Value, d.base)
		if err != nil {
			return Spec{}, &Error{File: d.file, Line: n.Line, Prefix: name, Msg: err.Error(), Err: errors.Unwrap(err)}
		}
		s.Origin = d.origin(n)
		return s, nil
	case n.Kind != yaml.MappingNode:
		return Spec{}, d.errf(n, name, "want a mapping such as {local: ./dir}, got %s", describe(n))
	}
	var (
		s       = Spec{Origin: d.origin(n)}
		kindKey *yaml.Node
		kindVal *yaml.Node
		opts    [][2]*yaml.Node
	)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return Spec{}, d.errf(k, name, "want a kind or option name as the key, got %s", describe(k))
		}
		if _, ok := kinds[k.Value]; ok {
			if kindKey != nil {
				return Spec{}, d.errf(k, name, "both %s and %s: an entry has exactly one kind", kindKey.Value, k.Value)
			}
			kindKey, kindVal = k, v
			continue
		}
		if _, ok := options[k.Value]; ok {
			opts = append(opts, [2]*yaml.Node{k, v})
			continue
		}
		return Spec{}, d.errf(k, name, "unknown key %q (kinds: %s; options: %s)", k.Value, strings.Join(Kinds(), ", "), optionNames())
	}
	if kindKey == nil {
		return Spec{}, d.errf(n, name, "no kind: want one of %s", strings.Join(Kinds(), ", "))
	}
	s.Kind = kindKey.Value
	var err error
	switch s.Kind {
	case KindTemp:
		s.Files, err = d.seed(kindVal, name)
	case KindLocal:
		if kindVal.Kind != yaml.ScalarNode || isNull(kindVal) {
			return Spec{}, d.errf(kindVal, name, "local: wants a directory, got %s", describe(kindVal))
		}
		s.Dir, err = resolveDir(kindVal.Value, d.base)
		if err != nil {
			err = &Error{File: d.file, Line: kindVal.Line, Prefix: name, Msg: err.Error(), Err: errors.Unwrap(err)}
		}
	case KindHostfiles:
		err = d.hostfiles(&s, kindVal, name)
	case KindPlugin:
		s.Plugin, err = d.plugin(kindVal, name)
	case KindOverlay:
		s.Layers, err = d.layers(kindVal, name)
	case KindUnion:
		if isNull(kindVal) || kindVal.Kind == yaml.MappingNode && len(kindVal.Content) == 0 {
			return Spec{}, d.errf(kindVal, name, "union needs at least one mount")
		}
		s.Mounts, err = d.table(kindVal, name)
	}
	if err != nil {
		return Spec{}, err
	}
	for _, o := range opts {
		k, v := o[0], o[1]
		if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
			return Spec{}, d.errf(v, name, "%s: wants true or false, got %s", k.Value, describe(v))
		}
		if err := options[k.Value](&s, v.Value); err != nil {
			return Spec{}, d.errf(v, name, "%s", err)
		}
	}
	return s, nil
}

// seed decodes a temp tree's seed files: null, {} or a mapping of path to
// contents.
func (d *decoder) seed(n *yaml.Node, name string) (map[string][]byte, error) {
	if isNull(n) || n.Kind == yaml.ScalarNode && n.Value == "" {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, d.errf(n, name, "temp: wants {} or a mapping of file path to contents, got %s", describe(n))
	}
	var files map[string][]byte
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			return nil, d.errf(k, name, "temp: want a file path as the key, got %s", describe(k))
		}
		if a := n.Content[i+1]; a.Kind == yaml.AliasNode {
			// One anchor referenced many times would multiply its size
			// in memory: a small config could seed gigabytes.
			return nil, d.errf(a, name, "temp: %s: a YAML alias (*%s) is not allowed as seed contents; write the contents out", vfs.Clean(k.Value), a.Value)
		}
		p := vfs.Clean(k.Value)
		if p == "/" {
			return nil, d.errf(k, name, "temp: %q is the root, not a file", k.Value)
		}
		if _, dup := files[p]; dup {
			return nil, d.errf(k, name, "temp: duplicate file %s", p)
		}
		if v.Kind != yaml.ScalarNode {
			return nil, d.errf(v, name, "temp: %s: want the file's contents as a string, got %s", p, describe(v))
		}
		var content string
		if err := v.Decode(&content); err != nil {
			return nil, d.errf(v, name, "temp: %s: %v", p, err)
		}
		if d.seeded += int64(len(content)); d.seeded > MaxSeedBytes {
			return nil, d.errf(v, name, "temp: seed contents total more than %d bytes (at %s): put large files in a local: tree", MaxSeedBytes, p)
		}
		if files == nil {
			files = map[string][]byte{}
		}
		files[p] = []byte(content)
	}
	// A file below another file cannot be placed.
	for p := range files {
		for q := vfs.Parent(p); q != "/"; q = vfs.Parent(q) {
			if _, clash := files[q]; clash {
				return nil, d.errf(n, name, "temp: %s is a file, so %s cannot be under it", q, p)
			}
		}
	}
	return files, nil
}

// layers decodes an overlay's list of entries.
func (d *decoder) layers(n *yaml.Node, name string) ([]Spec, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, d.errf(n, name, "overlay: wants a list of layers, e.g. [{local: ./upper}, {local: ./lower}], got %s", describe(n))
	}
	if len(n.Content) == 0 {
		return nil, d.errf(n, name, "overlay needs at least one layer")
	}
	out := make([]Spec, 0, len(n.Content))
	for _, c := range n.Content {
		s, err := d.entry(c, name)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// resolve follows aliases and unwraps a document node.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil {
		switch {
		case n.Kind == yaml.AliasNode:
			n = n.Alias
		case n.Kind == yaml.DocumentNode && len(n.Content) == 1:
			n = n.Content[0]
		default:
			return n
		}
	}
	return nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// describe names a node's shape for messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing"
		}
		return strconv.Quote(n.Value)
	}
	return "an empty document"
}

// join names a nested prefix for messages.
func join(parent, prefix string) string {
	if parent == "" {
		return prefix
	}
	return vfs.Join(parent, prefix)
}
