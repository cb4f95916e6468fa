package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/model/script"
	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/vfs"
)

// timedModel adds the time spent in Generate to spent.
type timedModel struct {
	model.Model
	spent *atomic.Int64
}

func (m timedModel) Generate(ctx context.Context, req *model.Request, onDelta func(model.Delta)) (*model.Response, error) {
	start := time.Now()
	defer func() { m.spent.Add(int64(time.Since(start))) }()
	return m.Model.Generate(ctx, req, onDelta)
}

// timedFS adds the time spent in Read to spent.
type timedFS struct {
	vfs.FileSystem
	spent *atomic.Int64
}

func (f timedFS) Read(ctx context.Context, p string) ([]byte, error) {
	start := time.Now()
	defer func() { f.spent.Add(int64(time.Since(start))) }()
	return f.FileSystem.Read(ctx, p)
}

// BenchmarkLoopToolCall runs turns of 1 and of 50 Read calls (one per model reply)
// with the scripted model and reports the loop's own cost per tool call:
// the whole turn, less the time in the model's Generate and in the tree's
// Read. What remains is the dispatcher (argument validation), the events
// (JSON, append, fsync) and the loop's bookkeeping. The state root is on
// tmpfs (/dev/shm, or $BENCH_STATE) so fsync, measured by
// sessions.BenchmarkAppend, does not swamp the figure.
func BenchmarkLoopToolCall(b *testing.B) {
	for _, calls := range []int{1, 50} {
		b.Run(fmt.Sprintf("calls=%d", calls), func(b *testing.B) { benchLoop(b, calls) })
	}
}

func benchLoop(b *testing.B, calls int) {
	var y strings.Builder
	y.WriteString("turns:\n  - replies:\n")
	for range calls {
		y.WriteString("      - calls: [{tool: Read, args: {path: /a.txt}}]\n")
	}
	y.WriteString("      - text: done\n")
	sm, err := script.Parse([]byte(y.String()), "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var modelTime, toolTime atomic.Int64
	m := timedModel{Model: sm, spent: &modelTime}

	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte("name: bench\nroot:\n  /:\n    temp:\n      /a.txt: \"hi\\n\"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	a, err := Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	base, err := a.Open(context.Background(), SessionOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer base.Close()
	s, err := a.Open(context.Background(), SessionOptions{Root: timedFS{FileSystem: base.FS(), spent: &toolTime}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	stateDir := os.Getenv("BENCH_STATE")
	if stateDir == "" {
		stateDir = "/dev/shm"
	}
	state, err := os.MkdirTemp(stateDir, "july-bench")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(state)
	st := sessions.New(state)

	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		log, err := st.Create(sessions.Meta{Agent: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		l, err := NewLoop(s, log, LoopOptions{Model: m, MaxSteps: calls + 1})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := l.Run(context.Background(), "go"); err != nil {
			b.Fatal(err)
		}
		log.Close()
	}
	cpu := cpuTime() - cpu0
	total := b.Elapsed().Nanoseconds()
	perCall := func(ns int64) float64 { return float64(ns) / float64(b.N*calls) }
	b.ReportMetric(perCall(total-modelTime.Load()-toolTime.Load()), "overhead-ns/call")
	b.ReportMetric(perCall(modelTime.Load()), "model-ns/call")
	b.ReportMetric(perCall(toolTime.Load()), "tree-ns/call")
	b.ReportMetric(perCall(cpu), "cpu-ns/call")
}

// cpuTime is the process's CPU time (user and system) so far, in ns: under
// a loaded machine it moves far less than wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkReopen10k reopens a session of 10,000 events as july run
// --session does: lock and check the log (sessions.Store.Resume), then
// replay it into the conversation (NewLoop). The events are written with
// Append on tmpfs (/dev/shm, or $BENCH_STATE) during setup.
func BenchmarkReopen10k(b *testing.B) {
	stateDir := os.Getenv("BENCH_STATE")
	if stateDir == "" {
		stateDir = "/dev/shm"
	}
	state, err := os.MkdirTemp(stateDir, "july-bench")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(state)
	st := sessions.New(state)
	log, err := st.Create(sessions.Meta{Agent: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	id := log.ID()
	output := strings.Repeat("x", 300)
	for i := 0; i < 10000; i += 10 {
		tid := sessions.NewTurnID()
		add := func(typ string, data any) {
			if _, err := log.Append(typ, tid, data); err != nil {
				b.Fatal(err)
			}
		}
		add(sessions.TypeMessageReceived, sessions.MessageReceived{Text: "summarize the notes"})
		add(sessions.TypeTurnStarted, sessions.TurnStarted{Model: "script:x"})
		for k := range 3 {
			id := fmt.Sprintf("c%d_%d", i, k)
			add(sessions.TypeActionsRequested, sessions.ActionsRequested{Calls: []sessions.Call{{CallID: id, ToolName: "Read", Args: []byte(`{"path":"/a.txt"}`)}}})
			add(sessions.TypeActionResult, sessions.ActionResult{CallID: id, ToolName: "Read", Output: output})
		}
		add(sessions.TypeMessageCompleted, sessions.MessageCompleted{Text: "done"})
		add(sessions.TypeTurnCompleted, sessions.TurnCompleted{Result: "done", Usage: model.Usage{InputTokens: 100, OutputTokens: 10}})
	}
	log.Close()
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte("name: bench\nroot:\n  /:\n    temp: {}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	a, err := Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	s, err := a.Open(context.Background(), SessionOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	m, _ := script.Parse([]byte("turns:\n  - replies:\n      - text: x\n"), "x.yaml")
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		log, _, err := st.Resume(id)
		if err != nil {
			b.Fatal(err)
		}
		l, err := NewLoop(s, log, LoopOptions{Model: m})
		if err != nil {
			b.Fatal(err)
		}
		if len(l.History()) != 8000 {
			b.Fatalf("history of %d messages", len(l.History()))
		}
		log.Close()
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}
