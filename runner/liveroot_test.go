package runner

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

const journalAgent = `-- agent.yaml --
name: journal
root:
  /:
    local: ./state/{sessionId}
  /shared:
    local: ./shared
  /by-agent:
    local: "./agents/{agentName}/{sessionId}"
-- shared/readme.md --
shared by every session
`

// Two sessions of a live root run at once: each its own tree, made on
// first use; the static mount is the same disk for both.
func TestLiveRootIsolatesSessions(t *testing.T) {
	dir := agentDir(t, journalAgent)
	a, err := Load(dir)
	require.NoError(t, err)
	require.True(t, a.Live())
	assert.Equal(t, "/=./state/{sessionId} (per session), /shared=local:"+filepath.Join(dir, "shared")+", /by-agent=./agents/{agentName}/{sessionId} (per session)", a.TreeDescription())

	ids := []string{"ses_A", "ses_B"}
	var wg sync.WaitGroup
	sessions := make([]*Session, len(ids))
	for i, id := range ids {
		wg.Go(func() {
			s, err := a.Open(t.Context(), SessionOptions{SessionID: id})
			if !assert.NoError(t, err) {
				return
			}
			sessions[i] = s
			assert.NoError(t, s.FS().Write(t.Context(), "/entry.md", []byte("written by "+id)))
			assert.NoError(t, s.FS().Write(t.Context(), "/by-agent/x", []byte(id)))
		})
	}
	wg.Wait()
	for i, id := range ids {
		require.NotNil(t, sessions[i])
		t.Cleanup(func() { sessions[i].Close() })
		data, err := sessions[i].FS().Read(t.Context(), "/entry.md")
		require.NoError(t, err)
		assert.Equal(t, "written by "+id, string(data))
		disk, err := os.ReadFile(filepath.Join(dir, "state", id, "entry.md"))
		require.NoError(t, err)
		assert.Equal(t, "written by "+id, string(disk))
		disk, err = os.ReadFile(filepath.Join(dir, "agents", "journal", id, "x"))
		require.NoError(t, err)
		assert.Equal(t, id, string(disk))
		shared, err := sessions[i].FS().Read(t.Context(), "/shared/readme.md")
		require.NoError(t, err)
		assert.Equal(t, "shared by every session\n", string(shared))
	}

	_, err = a.Open(t.Context(), SessionOptions{})
	assert.ErrorContains(t, err, "agent journal: binding the tree: its root is live (it names {sessionId} or {agentName}): bind it with a session id")
	_, err = a.Open(t.Context(), SessionOptions{SessionID: "../escape"})
	assert.ErrorContains(t, err, `{sessionId} is "../escape", which cannot be a path segment`)
	_, err = os.Stat(filepath.Join(dir, "escape"))
	assert.True(t, os.IsNotExist(err))
}

func TestLiveRootProblems(t *testing.T) {
	_, err := Load(agentDir(t, "-- agent.yaml --\nname: j\nroot:\n  /:\n    temp: {}\n  /notes:\n    local: ./n/{sessionId}\n    ro: true\n"))
	assert.Equal(t, []string{"root: mount /notes: a {sessionId} template in a read-only mount: each session would get a new, empty directory that nothing can write. Drop ro, or the template"}, problemsOf(t, err))
	_, err = Load(agentDir(t, "-- agent.yaml --\nname: my agent\nroot:\n  /:\n    local: ./n/{agentName}\n"))
	assert.Equal(t, []string{`root: {agentName} is "my agent", which cannot be a path segment: name the agent with letters, digits, '.', '_' and '-'`}, problemsOf(t, err))
	_, err = Load(agentDir(t, "-- agent.yaml --\nname: j\nroot:\n  /:\n    local: ./n/{sessionId}\n  /docs:\n    local: ./missing\n"))
	assert.Len(t, problemsOf(t, err), 1, "the rest of the table is still checked")
}

// A Go RootFactory runs once per session with the session's context, and
// its trees are not shared.
func TestRootFactory(t *testing.T) {
	a, err := Load(agentDir(t, "-- agent.yaml --\nname: f\nroot:\n  /:\n    temp: {}\n"))
	require.NoError(t, err)
	var calls atomic.Int32
	var seen sync.Map
	factory := func(ctx context.Context, rc RootContext) (vfs.FileSystem, error) {
		calls.Add(1)
		seen.Store(rc.SessionID, rc)
		return temp.New(map[string][]byte{"/who": []byte(rc.SessionID)})
	}
	open := func(id string) *Session {
		s, err := a.Open(t.Context(), SessionOptions{SessionID: id, ContinuationKey: "thread-" + id, RootFactory: factory})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	}
	s1, s2 := open("ses_1"), open("ses_2")
	for range 3 {
		_, err := s1.Turn()
		require.NoError(t, err)
	}
	assert.EqualValues(t, 2, calls.Load(), "once per session, not per turn")
	require.NoError(t, s1.FS().Write(t.Context(), "/only-1", []byte("x")))
	_, err = s2.FS().Read(t.Context(), "/only-1")
	assert.EqualError(t, err, "not found: /only-1")
	rc, _ := seen.Load("ses_2")
	assert.Equal(t, RootContext{SessionID: "ses_2", AgentName: "f", ContinuationKey: "thread-ses_2"}, rc)

	host, err := Load(agentDir(t, "-- agent.yaml --\nname: h\n"))
	require.NoError(t, err)
	_, err = host.Open(t.Context(), SessionOptions{RootFactory: factory})
	assert.ErrorContains(t, err, "a root factory needs an agent with a root")
}
