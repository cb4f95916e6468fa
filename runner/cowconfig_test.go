package runner

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoadCow: cow: true and the cow: root kind at / turn copy-on-write
// sessions on (the kind's base becomes the mount at /); cow: false or
// none leave them off.
func TestLoadCow(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		cow        bool
	}{
		{"none", "name: a\nroot:\n  /:\n    local: ./tree\n", false},
		{"false", "name: a\ncow: false\nroot:\n  /:\n    local: ./tree\n", false},
		{"null", "name: a\ncow:\nroot:\n  /:\n    local: ./tree\n", false},
		{"true", "name: a\ncow: true\nroot:\n  /:\n    local: ./tree\n", true},
		{"kind", "name: a\nroot:\n  /:\n    cow:\n      base:\n        local: ./tree\n  /docs:\n    local: ./docs\n    ro: true\n", true},
		{"kind and true", "name: a\ncow: true\nroot:\n  /:\n    cow: {base: {local: ./tree}}\n", true},
		{"host default without shell", "name: a\ncow: true\ntools: [read, edit]\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := agentDir(t, "-- agent.yaml --\n"+c.yaml+"-- tree/a.txt --\nhi\n-- docs/d.md --\nd\n")
			a, err := Load(dir)
			require.NoError(t, err)
			assert.Equal(t, c.cow, a.Cow)
			if a.root == nil {
				return
			}
			fsys, closeBase, err := a.OpenBase(t.Context(), "")
			require.NoError(t, err)
			defer closeBase()
			data, err := fsys.Read(t.Context(), "/a.txt")
			require.NoError(t, err, "the base is the cow kind's base")
			assert.Equal(t, "hi\n", string(data))
		})
	}
}

// TestLoadCowFailClosed: a cow setting that is not understood fails the
// agent, naming what is wrong.
func TestLoadCowFailClosed(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		want       string
	}{
		{"not a bool", "name: a\ncow: yes please\nroot:\n  /:\n    local: ./tree\n", "cow: want true or false"},
		{"a mapping", "name: a\ncow: {base: {local: ./tree}}\n", "cow: want true or false (a copy-on-write tree over a base is written as the root mount"},
		{"kind off /", "name: a\nroot:\n  /:\n    local: ./tree\n  /w:\n    cow: {base: {local: ./tree}}\n", "root: /w: cow: is only allowed as the mount at /"},
		{"kind without base", "name: a\nroot:\n  /:\n    cow: {local: ./tree}\n", "root: /: cow: wants exactly base:"},
		{"kind with more", "name: a\nroot:\n  /:\n    cow: {base: {local: ./tree}, extra: 1}\n", "root: /: cow: wants exactly base:"},
		{"kind with siblings", "name: a\nroot:\n  /:\n    cow: {base: {local: ./tree}}\n    ro: true\n", "root: /: cow: takes no other settings"},
		{"false and kind", "name: a\ncow: false\nroot:\n  /:\n    cow: {base: {local: ./tree}}\n", "cow: false contradicts"},
		{"host shell", "name: a\ncow: true\n", "cow: a copy-on-write session needs an agent whose tools all go through its tree"},
		{"bad base", "name: a\nroot:\n  /:\n    cow: {base: {nosuchkind: x}}\n", "root"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := agentDir(t, "-- agent.yaml --\n"+c.yaml+"-- tree/a.txt --\nhi\n")
			_, err := Load(dir)
			require.Error(t, err)
			ps := problemsOf(t, err)
			found := false
			for _, p := range ps {
				found = found || strings.Contains(p, c.want)
			}
			assert.True(t, found, "problems %q, want one with %q", ps, c.want)
		})
	}
}
