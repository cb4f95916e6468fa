package sessions_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/runner/sessions/sessionstest"
)

func TestSuiteDisk(t *testing.T) {
	sessionstest.Run(t, func(t *testing.T) (a, b *sessions.Store) {
		dir := t.TempDir()
		return sessions.New(dir), sessions.New(dir)
	})
}

// lossy drops every fourth event it is given.
type lossy struct{ sessions.Backend }

func (l lossy) Create(id string, meta []byte) (sessions.Journal, error) {
	j, err := l.Backend.Create(id, meta)
	return &lossyJournal{Journal: j}, err
}

type lossyJournal struct {
	sessions.Journal
	n int
}

func (j *lossyJournal) Append(index int64, line []byte) error {
	if j.n++; j.n%4 == 0 {
		return nil
	}
	return j.Journal.Append(index, line)
}

// neverStale says no session has a turn under way.
type neverStale struct{ sessions.Backend }

func (neverStale) Stale(string) bool { return false }

// stuckSize says every log is as long as it was the first time it was
// asked.
type stuckSize struct {
	sessions.Backend
	sizes map[string]int64
}

func (s stuckSize) LogSize(id string) (int64, error) {
	if n, ok := s.sizes[id]; ok {
		return n, nil
	}
	n, err := s.Backend.LogSize(id)
	if err == nil {
		s.sizes[id] = n
	}
	return n, err
}

// TestSuiteCatches runs checks against backends broken on purpose: each
// must fail.
func TestSuiteCatches(t *testing.T) {
	for _, tc := range []struct {
		check string
		wrap  func(sessions.Backend) sessions.Backend
	}{
		{"CreateAppendResume", func(b sessions.Backend) sessions.Backend { return lossy{b} }},
		{"List", func(b sessions.Backend) sessions.Backend { return neverStale{b} }},
		{"LogSize", func(b sessions.Backend) sessions.Backend { return stuckSize{b, map[string]int64{}} }},
	} {
		t.Run(tc.check, func(t *testing.T) {
			dir := t.TempDir()
			a := sessions.NewWithBackend(tc.wrap(sessions.New(dir).Backend()))
			b := sessions.NewWithBackend(tc.wrap(sessions.New(dir).Backend()))
			for _, c := range sessionstest.Checks {
				if c.Name == tc.check {
					require.Error(t, c.Run(a, b), "%s passed a broken backend", c.Name)
					return
				}
			}
			t.Fatalf("no check %s", tc.check)
		})
	}
}
