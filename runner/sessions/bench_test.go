package sessions

import (
	"encoding/json"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/julyfs/julyfs/runner/model"
)

// BenchmarkAppend appends events with fsync, on the disk b.TempDir is on
// (or $BENCH_DIR): one op is one durable event.
func BenchmarkAppend(b *testing.B) {
	dir := b.TempDir()
	if d := os.Getenv("BENCH_DIR"); d != "" {
		var err error
		if dir, err = os.MkdirTemp(d, "append"); err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(dir)
	}
	l, err := New(dir).Create(Meta{Agent: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	data := ActionResult{CallID: "call_1_1_1", ToolName: "Read", Output: "     1\thello, world"}
	b.ResetTimer()
	for b.Loop() {
		if _, err := l.Append(TypeActionResult, "turn_01", data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// writeSession writes a session of n events shaped like real turns (a
// message, tool calls with results of a few hundred bytes, a reply).
func writeSession(tb testing.TB, dir string, n int) string {
	tb.Helper()
	l, err := New(dir).Create(Meta{Agent: "bench"})
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	// Without fsync: this is setup, not what is measured.
	f := l.j.(*diskJournal).f
	output := fmt.Sprintf("%0300d", 7)
	for i := 0; i < n; i++ {
		var typ string
		var data any
		switch i % 10 {
		case 0:
			typ, data = TypeMessageReceived, MessageReceived{Text: "summarize the notes"}
		case 1:
			typ, data = TypeTurnStarted, TurnStarted{Model: "script:x"}
		case 2, 4, 6:
			typ, data = TypeActionsRequested, ActionsRequested{Calls: []Call{{CallID: fmt.Sprintf("c%d", i), ToolName: "Read", Args: json.RawMessage(`{"path":"/a.txt"}`)}}}
		case 3, 5, 7:
			typ, data = TypeActionResult, ActionResult{CallID: fmt.Sprintf("c%d", i-1), ToolName: "Read", Output: output}
		case 8:
			typ, data = TypeMessageCompleted, MessageCompleted{Text: "done"}
		default:
			typ, data = TypeTurnCompleted, TurnCompleted{Result: "done", Usage: model.Usage{InputTokens: 100, OutputTokens: 10}}
		}
		raw, _ := json.Marshal(data)
		line, _ := json.Marshal(Event{Type: typ, Index: int64(i), SessionID: l.id, TurnID: "turn_x", At: l.meta.Created, Data: raw})
		f.Write(append(line, '\n'))
	}
	return l.id
}

// BenchmarkResume10k reopens a session of 10,000 events: lock, read,
// check every line, recompute the totals.
func BenchmarkResume10k(b *testing.B) {
	dir := b.TempDir()
	id := writeSession(b, dir, 10000)
	st := New(dir)
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		l, _, err := st.Resume(id)
		if err != nil {
			b.Fatal(err)
		}
		if len(l.Events()) != 10000 {
			b.Fatal("short")
		}
		l.Close()
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}

// cpuTime is the process's CPU time (user and system) so far, in ns: under
// a loaded machine it moves far less than wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkCreate creates a session and lets go of it, on the disk
// b.TempDir is on: one op is one new session, durable (its directory,
// session.json and lock). The PostgreSQL store's twin is in
// runner/sessions/pgstore.
func BenchmarkCreate(b *testing.B) {
	st := New(b.TempDir())
	for b.Loop() {
		l, err := st.Create(Meta{Agent: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sessions/s")
}
