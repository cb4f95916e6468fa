package runner

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/tools"
	"github.com/julyfs/julyfs/vfs"
)

func TestWatchTree(t *testing.T) {
	a, err := Load(agentDir(t, "-- agent.yaml --\nname: w\nroot:\n  /:\n    temp:\n      /a.txt: hi\n"))
	require.NoError(t, err)
	require.True(t, a.Plan.ScratchTmp)
	s, err := a.Open(t.Context(), SessionOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	w, err := s.WatchTree()
	require.NoError(t, err)

	var mu sync.Mutex
	var changes []vfs.Change
	cancel, ok := vfs.Watch(w, func(c vfs.Change) { mu.Lock(); changes = append(changes, c); mu.Unlock() })
	require.True(t, ok, "the watch tree reports changes")
	defer cancel()

	turn, err := s.Turn()
	require.NoError(t, err)
	call := func(name, args string) *tools.Result { return turn.Call(t.Context(), name, json.RawMessage(args)) }
	require.False(t, call("Write", `{"path":"/tmp/x","contents":"turn 1 scratch"}`).IsError)
	require.False(t, call("Write", `{"path":"/b.txt","contents":"by the agent"}`).IsError)

	data, err := w.Read(t.Context(), "/tmp/x")
	require.NoError(t, err)
	assert.Equal(t, "turn 1 scratch", string(data))
	data, err = w.Read(t.Context(), "/b.txt")
	require.NoError(t, err)
	assert.Equal(t, "by the agent", string(data))

	// A change through the watch tree is what the agent's next call sees.
	require.NoError(t, w.Write(t.Context(), "/a.txt", []byte("edited by a person")))
	assert.Contains(t, call("Read", `{"path":"/a.txt"}`).String(), "edited by a person")
	require.NoError(t, w.Write(t.Context(), "/tmp/y", []byte("a person's scratch")))
	assert.Contains(t, call("Read", `{"path":"/tmp/y"}`).String(), "a person's scratch")

	mu.Lock()
	assert.Contains(t, changes, vfs.Change{Path: "/tmp/x", Op: vfs.ChangeWrite})
	assert.Contains(t, changes, vfs.Change{Path: "/b.txt", Op: vfs.ChangeWrite})
	changes = nil
	mu.Unlock()

	// The next turn: a new, empty /tmp; the old scratch reported gone.
	next, err := s.Turn()
	require.NoError(t, err)
	_, err = w.Read(t.Context(), "/tmp/x")
	assert.EqualError(t, err, "not found: /tmp/x")
	assert.True(t, next.Call(t.Context(), "Read", json.RawMessage(`{"path":"/tmp/x"}`)).IsError)
	mu.Lock()
	assert.ElementsMatch(t, []vfs.Change{{Path: "/tmp/x", Op: vfs.ChangeDelete}, {Path: "/tmp/y", Op: vfs.ChangeDelete}}, changes)
	mu.Unlock()
}
