package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/tools"
)

// TestTurnResolvesSchemasOnce: the first turn of a session resolves each
// tool's schema, later turns (Session.Turn and the loop's turn) reuse
// them, and the reused schemas still refuse bad arguments and take good
// ones on the new turn's tree.
func TestTurnResolvesSchemasOnce(t *testing.T) {
	dir := t.TempDir()
	yaml := "name: cache\ntools: [read, ls, grep, glob, edit, delete, updateTodos]\nroot:\n  /:\n    temp:\n      /a.txt: \"hi\\n\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, ConfigFile), []byte(yaml), 0o644))
	a, err := Load(dir)
	require.NoError(t, err)
	s, err := a.Open(t.Context(), SessionOptions{})
	require.NoError(t, err)
	defer s.Close()

	first, err := s.loopTurn(nil)
	require.NoError(t, err)
	n := len(first.Tools())
	require.Greater(t, n, 6)
	assert.Equal(t, n, s.schemas.resolved, "the first turn resolves each tool once (Turn's tools are a subset of the loop's)")
	for range 3 {
		turn, err := s.Turn()
		require.NoError(t, err)
		lt, err := s.loopTurn(nil)
		require.NoError(t, err)
		for _, d := range []*Dispatcher{turn.Dispatcher, lt.Dispatcher} {
			r := d.Call(t.Context(), "Read", json.RawMessage(`{"path":"/a.txt"}`))
			assert.False(t, r.IsError, r.String())
			r = d.Call(t.Context(), "Read", json.RawMessage(`{"path":"/a.txt","bogus":1}`))
			assert.True(t, r.IsError)
			assert.Contains(t, r.String(), "invalid arguments for Read")
			r = d.Call(t.Context(), "LS", json.RawMessage(`{"path":7}`))
			assert.True(t, r.IsError, "a wrong type is refused by the cached schema")
		}
	}
	assert.Equal(t, n, s.schemas.resolved, "later turns resolve nothing")
}

// TestSchemaCacheChangedTool: a tool whose description differs from the
// cached one under the same name (a changed tool set) gets its own
// schema, not the cached one.
func TestSchemaCacheChangedTool(t *testing.T) {
	mk := func(desc, prop string) *tools.Tool {
		return &tools.Tool{Name: "T", Description: desc, Effect: tools.EffectRead,
			Schema: &jsonschema.Schema{Type: "object", Required: []string{prop},
				Properties:           map[string]*jsonschema.Schema{prop: {Type: "string"}},
				AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}},
			Run: func(context.Context, json.RawMessage) (*tools.Result, error) { return tools.Text("ok"), nil }}
	}
	var c schemaCache
	call := func(tool *tools.Tool, args string) *tools.Result {
		d, err := newDispatcher([]*tools.Tool{tool}, DispatchOptions{}, &c)
		require.NoError(t, err)
		return d.Call(t.Context(), "T", json.RawMessage(args))
	}
	assert.False(t, call(mk("v1", "a"), `{"a":"x"}`).IsError)
	assert.False(t, call(mk("v1", "a"), `{"a":"x"}`).IsError)
	assert.Equal(t, 1, c.resolved)
	r := call(mk("v2", "b"), `{"a":"x"}`)
	assert.True(t, r.IsError, "the changed tool's schema applies")
	assert.True(t, strings.HasPrefix(r.String(), "invalid arguments for T"), r.String())
	assert.False(t, call(mk("v2", "b"), `{"b":"x"}`).IsError)
	assert.Equal(t, 2, c.resolved)
}
