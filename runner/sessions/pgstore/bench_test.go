package pgstore_test

import (
	"testing"

	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore/pgtest"
)

// The twins of runner/sessions' BenchmarkCreate and BenchmarkAppend on
// the PostgreSQL store (the server of JULYFS_TEST_POSTGRES, its commits
// durable as the server is configured).

// BenchmarkCreate creates a session and lets go of it: one op is a row
// inserted and committed under the session's advisory lock, taken and
// released.
func BenchmarkCreate(b *testing.B) {
	st := sessions.NewWithBackend(openDB(b, pgtest.URL(b)).Sessions(freshScope(), b.TempDir()))
	for b.Loop() {
		l, err := st.Create(sessions.Meta{Agent: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sessions/s")
}

// BenchmarkAppend appends events to one held session: one op is one
// event committed.
func BenchmarkAppend(b *testing.B) {
	st := sessions.NewWithBackend(openDB(b, pgtest.URL(b)).Sessions(freshScope(), b.TempDir()))
	l, err := st.Create(sessions.Meta{Agent: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	data := sessions.ActionResult{CallID: "call_1_1_1", ToolName: "Read", Output: "     1\thello, world"}
	for b.Loop() {
		if _, err := l.Append(sessions.TypeActionResult, "turn_01", data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
