package runner

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

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
		if err != nil {
			t.Fatalf("index: %s: %v", tc.value, err)
		}
		want := ""
		if tc.want != "" {
			want = filepath.Join(dir, tc.want)
		}
		if a.IndexDir != want {
			t.Errorf("index: %s: IndexDir = %q, want %q", tc.value, a.IndexDir, want)
		}
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
		if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
			t.Errorf("%q: problems %q, want one starting %q", tc.yaml, got, tc.want)
		}
	}
}

// search calls SemanticSearch in a new turn of s.
func search(t *testing.T, s *Session, query string) string {
	t.Helper()
	turn, err := s.Turn()
	if err != nil {
		t.Fatal(err)
	}
	r := turn.Call(context.Background(), "SemanticSearch", []byte(`{"query":"`+query+`"}`))
	if r.IsError {
		t.Fatalf("SemanticSearch %q: %s", query, r.String())
	}
	return r.String()
}

func TestSessionIndex(t *testing.T) {
	ctx := context.Background()
	dir := agentDir(t, strings.Replace(indexedAgent, "%s", "true", 1))
	a, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.Open(ctx, SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Index() == nil {
		t.Fatal("Index() = nil with index: true")
	}
	want := "/net/header.go:1 (score "
	if got := search(t, s, "parse header"); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, ")\n    // ParseHeader parses an HTTP header.") {
		t.Errorf("SemanticSearch = %q, want %q... with the snippet", got, want)
	}
	// A write through a turn is searchable at once.
	turn, _ := s.Turn()
	if r := turn.Call(ctx, "Write", []byte(`{"path":"/zebra.md","contents":"a zebra crossing"}`)); r.IsError {
		t.Fatal(r.String())
	}
	if got := search(t, s, "zebra"); !strings.HasPrefix(got, "/zebra.md:1 (score ") {
		t.Errorf("after Write, SemanticSearch zebra = %q", got)
	}

	// The index is held until Close: a second open fails with ErrInUse.
	_, err = a.Open(ctx, SessionOptions{})
	if !errors.Is(err, index.ErrInUse) || !strings.Contains(err.Error(), "one july or julyfs at a time") {
		t.Errorf("second Open: %v, want ErrInUse with advice", err)
	}
	// NoIndex neither opens nor locks it.
	s2, err := a.Open(ctx, SessionOptions{NoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	if s2.Index() != nil {
		t.Error("NoIndex: Index() != nil")
	}
	if got := search(t, s2, "zebra"); got != "No results found." {
		t.Errorf("NoIndex: SemanticSearch = %q", got)
	}
	s2.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopened, the index catches up with a change made without it.
	s, err = a.Open(ctx, SessionOptions{NoIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	turn, _ = s.Turn()
	turn.Call(ctx, "Delete", []byte(`{"path":"/zebra.md"}`))
	s.Close()
	s, err = a.Open(ctx, SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := search(t, s, "zebra"); got != "No results found." {
		t.Errorf("after a Delete made without the index, SemanticSearch zebra = %q", got)
	}
}

func TestSessionIndexDirOverride(t *testing.T) {
	ctx := context.Background()
	dir := agentDir(t, strings.Replace(indexedAgent, "%s", "false", 1))
	a, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.Open(ctx, SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := search(t, s, "header"); got != "No results found." {
		t.Errorf("without an index, SemanticSearch = %q", got)
	}
	s.Close()

	idx := filepath.Join(t.TempDir(), "idx")
	var logs []string
	s, err = a.Open(ctx, SessionOptions{IndexDir: idx, Index: index.Options{Log: func(m string) { logs = append(logs, m) }}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := search(t, s, "header"); !strings.HasPrefix(got, "/net/header.go:1 ") {
		t.Errorf("with IndexDir, SemanticSearch = %q", got)
	}
	if st := s.Index().Stats(); st.Indexed != 2 {
		t.Errorf("Stats = %+v, want 2 indexed", st)
	}
	if logs != nil {
		t.Errorf("logs = %q", logs)
	}

	// The override is refused where no SemanticSearch is served.
	host := agentDir(t, "-- agent.yaml --\nname: h\n")
	ha, err := Load(host)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ha.Open(ctx, SessionOptions{IndexDir: idx})
	want := "agent h: index " + idx + ": the host default has no SemanticSearch served by july"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("host default with IndexDir: %v, want %q...", err, want)
	}
}
