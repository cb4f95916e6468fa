package runner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs/index"
)

const indexedAgent = `
-- agent.yaml --
name: indexed
root:
  /:
    local: ./tree
index: %s
-- tree/net/header.go --
// ParseHeader parses an HTTP header.
func ParseHeader() {}
-- tree/notes.txt --
nothing to see
`

func TestLoadIndex(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"true", ".julyfs/index"},
		{"idx/here", "idx/here"},
		{"false", ""},
		{"null", ""},
	} {
		dir := agentDir(t, strings.Replace(indexedAgent, "%s", tc.value, 1))
		a, err := Load(dir)
		require.NoError(t, err, "index: %s", tc.value)
		want := ""
		if tc.want != "" {
			want = filepath.Join(dir, tc.want)
		}
		assert.Equal(t, want, a.IndexDir, "index: %s: IndexDir", tc.value)
	}
}

func TestLoadIndexProblems(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"name: h\nindex: true\n", "index: the host default has no SemanticSearch served by july"},
		{"name: r\nroot: {/: {temp: {}}}\ntools: [read]\nindex: true\n", "index: the tools allowlist leaves out semSearch"},
		{"name: r\nroot: {/: {temp: {}}}\nindex: [a]\n", "index: want a directory"},
		{"name: r\nroot: {/: {temp: {}}}\nindex: 3\n", "index: 3 is not a directory"},
		{"name: r\nroot: {/: {temp: {}}}\nindex: \"\"\n", "index: empty"},
	} {
		dir := agentDir(t, "-- agent.yaml --\n"+tc.yaml)
		_, err := Load(dir)
		got := problemsOf(t, err)
		if assert.Len(t, got, 1, "%q: problems, want one starting %q", tc.yaml, tc.want) {
			assert.True(t, strings.HasPrefix(got[0], tc.want), "%q: problems %q, want one starting %q", tc.yaml, got, tc.want)
		}
	}
}

// search calls SemanticSearch in a new turn of s.
func search(t *testing.T, s *Session, query string) string {
	t.Helper()
	turn, err := s.Turn()
	require.NoError(t, err)
	r := turn.Call(context.Background(), "SemanticSearch", []byte(`{"query":"`+query+`"}`))
	require.False(t, r.IsError, "SemanticSearch %q: %s", query, r.String())
	return r.String()
}

func TestSessionIndex(t *testing.T) {
	ctx := context.Background()
	dir := agentDir(t, strings.Replace(indexedAgent, "%s", "true", 1))
	a, err := Load(dir)
	require.NoError(t, err)
	s, err := a.Open(ctx, SessionOptions{})
	require.NoError(t, err)
	require.NotNil(t, s.Index(), "Index() = nil with index: true")
	want := "/net/header.go:1 (score "
	got := search(t, s, "parse header")
	assert.True(t, strings.HasPrefix(got, want), "SemanticSearch = %q, want %q... with the snippet", got, want)
	assert.True(t, strings.HasSuffix(got, ")\n    // ParseHeader parses an HTTP header."), "SemanticSearch = %q, want %q... with the snippet", got, want)
	// A write through a turn is searchable at once.
	turn, _ := s.Turn()
	r := turn.Call(ctx, "Write", []byte(`{"path":"/zebra.md","contents":"a zebra crossing"}`))
	require.False(t, r.IsError, r.String())
	got = search(t, s, "zebra")
	assert.True(t, strings.HasPrefix(got, "/zebra.md:1 (score "), "after Write, SemanticSearch zebra = %q", got)

	// The index is held until Close: a second open fails with ErrInUse.
	_, err = a.Open(ctx, SessionOptions{})
	if assert.ErrorIs(t, err, index.ErrInUse, "second Open") {
		assert.Contains(t, err.Error(), "one july or julyfs at a time", "second Open, want ErrInUse with advice")
	}
	// NoIndex neither opens nor locks it.
	s2, err := a.Open(ctx, SessionOptions{NoIndex: true})
	require.NoError(t, err)
	assert.Nil(t, s2.Index(), "NoIndex: Index() != nil")
	assert.Equal(t, "No results found.", search(t, s2, "zebra"), "NoIndex: SemanticSearch")
	s2.Close()
	require.NoError(t, s.Close())

	// Reopened, the index catches up with a change made without it.
	s, err = a.Open(ctx, SessionOptions{NoIndex: true})
	require.NoError(t, err)
	turn, _ = s.Turn()
	turn.Call(ctx, "Delete", []byte(`{"path":"/zebra.md"}`))
	s.Close()
	s, err = a.Open(ctx, SessionOptions{})
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, "No results found.", search(t, s, "zebra"), "after a Delete made without the index, SemanticSearch zebra")
}

func TestSessionIndexDirOverride(t *testing.T) {
	ctx := context.Background()
	dir := agentDir(t, strings.Replace(indexedAgent, "%s", "false", 1))
	a, err := Load(dir)
	require.NoError(t, err)
	s, err := a.Open(ctx, SessionOptions{})
	require.NoError(t, err)
	assert.Equal(t, "No results found.", search(t, s, "header"), "without an index, SemanticSearch")
	s.Close()

	idx := filepath.Join(t.TempDir(), "idx")
	var logs []string
	s, err = a.Open(ctx, SessionOptions{IndexDir: idx, Index: index.Options{Log: func(m string) { logs = append(logs, m) }}})
	require.NoError(t, err)
	defer s.Close()
	got := search(t, s, "header")
	assert.True(t, strings.HasPrefix(got, "/net/header.go:1 "), "with IndexDir, SemanticSearch = %q", got)
	st := s.Index().Stats()
	assert.Equal(t, 2, st.Indexed, "Stats = %+v, want 2 indexed", st)
	assert.Nil(t, logs, "logs")

	// The override is refused where no SemanticSearch is served.
	host := agentDir(t, "-- agent.yaml --\nname: h\n")
	ha, err := Load(host)
	require.NoError(t, err)
	_, err = ha.Open(ctx, SessionOptions{IndexDir: idx})
	want := "agent h: index " + idx + ": the host default has no SemanticSearch served by july"
	if assert.Error(t, err, "host default with IndexDir, want %q...", want) {
		assert.True(t, strings.HasPrefix(err.Error(), want), "host default with IndexDir: %v, want %q...", err, want)
	}
}
