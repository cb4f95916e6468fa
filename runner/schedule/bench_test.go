package schedule

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/julyfs/julyfs/runner/sessions"
)

// latencySink records how late each wake came after its reminder's due
// time.
type latencySink struct {
	mu   sync.Mutex
	due  map[string]time.Time
	late []time.Duration
	done chan struct{}
	want int
}

func (s *latencySink) StartTask(context.Context, string, string) (string, error) {
	return "", fmt.Errorf("no schedules")
}

func (s *latencySink) Wake(_ context.Context, _, _ string, data map[string]any) error {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.late = append(s.late, now.Sub(s.due[data["reminderId"].(string)]))
	if len(s.late) == s.want {
		close(s.done)
	}
	return nil
}

// BenchmarkReminderFireLatency measures how long after its due time a
// reminder's wake reaches the Sink on the real clock (the durable write
// before the wake included), for a batch of reminders due at the same
// second. Each iteration waits for the batch's one-second delay; run it
// with -benchtime=Nx. It reports p50 and p99 lateness in ms.
func BenchmarkReminderFireLatency(b *testing.B) {
	for _, batch := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			var all []time.Duration
			for range b.N {
				sink := &latencySink{due: map[string]time.Time{}, done: make(chan struct{}), want: batch}
				r, err := OpenReminders(Options{StateRoot: b.TempDir(), Sink: sink, Auto: true, MaxRemindersPerSession: batch})
				if err != nil {
					b.Fatal(err)
				}
				if err := r.Start(); err != nil {
					b.Fatal(err)
				}
				ses := sessions.NewID()
				for range batch {
					rec, err := r.Create(context.Background(), ReminderSpec{SessionID: ses, Delay: "1s", Prompt: "wake"})
					if err != nil {
						b.Fatal(err)
					}
					sink.mu.Lock()
					sink.due[rec.ID] = rec.NextFire
					sink.mu.Unlock()
				}
				select {
				case <-sink.done:
				case <-time.After(60 * time.Second):
					b.Fatalf("only %d of %d reminders fired within 60s", len(sink.late), batch)
				}
				r.Stop()
				all = append(all, sink.late...)
			}
			slices.Sort(all)
			b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(all[(len(all)*99)/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(all[len(all)-1].Microseconds())/1000, "max-ms")
		})
	}
}
