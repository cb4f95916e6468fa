package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkSessionTurn measures starting a turn: Session.Turn (a fresh
// /tmp, the file tools synthesized over the turn's tree, the dispatcher)
// and the agent loop's turn (loopTurn: Turn plus the harness tools and a
// second dispatcher), on a temp root with /tmp scratch and every file tool
// plus the todo tools. cpu-ns/op is the process's CPU time per turn (GC
// included), steadier than wall time on a shared machine.
func BenchmarkSessionTurn(b *testing.B) {
	dir := b.TempDir()
	yaml := "name: bench\ntools: [read, ls, grep, glob, edit, delete, updateTodos]\nroot:\n  /:\n    temp:\n      /a.txt: \"hi\\n\"\n"
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(yaml), 0o644); err != nil {
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
	b.Run("Turn", func(b *testing.B) {
		b.ReportAllocs()
		cpu0 := cpuTime()
		for b.Loop() {
			if _, err := s.Turn(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("loopTurn", func(b *testing.B) {
		b.ReportAllocs()
		cpu0 := cpuTime()
		for b.Loop() {
			if _, err := s.loopTurn(nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	})
}
