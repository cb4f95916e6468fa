package runner

import (
	"gopkg.in/yaml.v3"
)

// This file is agent.yaml's copy-on-write settings (docs/cow.md): the
// top-level cow: true, and the copy-on-write kind of the root mount,
// root: {/: {cow: {base: SPEC}}}, which is the same with SPEC as the
// mount at /.

// cowProblems reads agent.yaml's cow settings into a.Cow, rewriting a
// copy-on-write root mount to its base (so the root is decoded as the
// tree the layer goes over). Anything but a boolean, a cow kind anywhere
// but /, a cow kind without exactly a base, and an agent with the host
// shell are problems: they fail closed.
func (a *Agent) cowProblems() []Problem {
	c := &a.Config
	var out []Problem
	add := func(field, msg string) { out = append(out, Problem{Field: field, Message: msg}) }
	set, top := false, false
	switch n := &c.Cow; {
	case n.Kind == 0 || n.Kind == yaml.ScalarNode && n.Tag == "!!null":
	case n.Kind == yaml.ScalarNode && n.Tag == "!!bool":
		set = true
		if err := n.Decode(&top); err != nil {
			add("cow", "want true or false")
		}
	default:
		add("cow", "want true or false (a copy-on-write tree over a base is written as the root mount /: {cow: {base: ...}})")
	}
	kind := false
	if c.Root.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(c.Root.Content); i += 2 {
			prefix, spec := c.Root.Content[i].Value, c.Root.Content[i+1]
			body := mappingValue(spec, "cow")
			if body == nil {
				continue
			}
			field := "root: " + prefix
			switch {
			case prefix != "/":
				add(field, "cow: is only allowed as the mount at /: the layer goes over the whole tree (move it to /, or use cow: true)")
			case len(spec.Content) != 2:
				add(field, "cow: takes no other settings beside it: write /: {cow: {base: {...}}} and put the base's settings inside base")
			case body.Kind != yaml.MappingNode || len(body.Content) != 2 || body.Content[0].Value != "base":
				add(field, "cow: wants exactly base: the tree the layer goes over, such as {base: {local: ./tree}}")
			default:
				c.Root.Content[i+1] = body.Content[1]
				kind = true
			}
		}
	}
	if kind && set && !top {
		add("cow", "false contradicts the root's cow: mount at /: remove one")
	}
	a.Cow = top || kind
	if a.Cow && a.Plan.Shell {
		add("cow", "a copy-on-write session needs an agent whose tools all go through its tree: the host shell writes the host directly, past the layer; remove shell from tools, or cow")
	}
	return out
}

// mappingValue returns the value of key in mapping node n, nil when n is
// not a mapping or has no such key.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
