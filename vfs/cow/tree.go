package cow

import (
	"slices"

	"github.com/julyfs/julyfs/vfs"
)

// node is one path of the upper layer. A node whose entry has no Type is
// a directory passed through to the base: it holds upper nodes below it
// and is otherwise the base's directory. The tree of nodes is guarded by
// FS.mu.
type node struct {
	e        Entry // e.Path unused: a node's path is where it hangs
	children map[string]*node
}

func (n *node) isDir() bool { return n.e.Type == "" || n.e.Type == TypeDir }

// pass reports whether n is a directory passed through to the base.
func (n *node) pass() bool { return n.e.Type == "" }

// op is one change to the tree: what a journal line records and what
// replaying it redoes.
type op struct {
	// Op is "set" (the node at Path becomes E, a directory keeping its
	// children; missing parents become pass-through directories), "rm"
	// (the node at Path and all below it go), or "mv" (the node at From
	// with all below it moves to Path and takes E's fields).
	Op   string `json:"op"`
	Path string `json:"path"`
	From string `json:"from,omitempty"`
	E    *Entry `json:"e,omitempty"`
}

// lookup returns the node at clean p, no links followed, or nil.
func lookup(root *node, p string) *node {
	n := root
	for _, seg := range vfs.Split(p) {
		if n.children == nil {
			return nil
		}
		if n = n.children[seg]; n == nil {
			return nil
		}
	}
	return n
}

// ensure returns the node at clean p, making it and missing parents
// pass-through directories.
func ensure(root *node, p string) *node {
	n := root
	for _, seg := range vfs.Split(p) {
		if n.children == nil {
			n.children = map[string]*node{}
		}
		c := n.children[seg]
		if c == nil {
			c = &node{}
			n.children[seg] = c
		}
		n = c
	}
	return n
}

// apply makes the change o to the tree at root.
func apply(root *node, o op) {
	switch o.Op {
	case "set":
		n := ensure(root, o.Path)
		e := *o.E
		e.Path = ""
		n.e = e
		if !n.isDir() {
			n.children = nil
		}
	case "rm":
		if o.Path == "/" {
			root.children = nil
			return
		}
		if parent := lookup(root, vfs.Parent(o.Path)); parent != nil {
			delete(parent.children, vfs.Base(o.Path))
		}
	case "mv":
		parent := lookup(root, vfs.Parent(o.From))
		if parent == nil {
			return
		}
		n := parent.children[vfs.Base(o.From)]
		if n == nil {
			return
		}
		delete(parent.children, vfs.Base(o.From))
		to := ensure(root, vfs.Parent(o.Path))
		if to.children == nil {
			to.children = map[string]*node{}
		}
		if o.E != nil {
			e := *o.E
			e.Path = ""
			n.e = e
		}
		to.children[vfs.Base(o.Path)] = n
	}
}

// entries appends the entries of the tree below n (at path p), in no
// particular order (callers sort).
func entries(n *node, p string, out []Entry) []Entry {
	for name, c := range n.children {
		cp := vfs.Join(p, name)
		if !c.pass() {
			e := c.e
			e.Path = cp
			out = append(out, e)
		}
		if c.isDir() {
			out = entries(c, cp, out)
		}
	}
	return out
}

// sortedNames returns n's children's names, sorted.
func sortedNames(n *node) []string {
	names := make([]string, 0, len(n.children))
	for name := range n.children {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// build makes a tree from entries.
func build(es []Entry) *node {
	root := &node{}
	for _, e := range es {
		apply(root, op{Op: "set", Path: e.Path, E: &e})
	}
	return root
}
