package schedule_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/julyfs/julyfs/runner/schedule"
)

// printSink prints what a firing does.
type printSink struct{}

func (printSink) StartTask(_ context.Context, id, prompt string) (string, error) {
	fmt.Printf("start task for schedule %s: %s\n", id, prompt)
	return "ses_01KBW0000000000000000000TS", nil
}

func (printSink) Wake(_ context.Context, _, _ string, data map[string]any) error {
	fmt.Printf("wake: fireCount %v\n", data["fireCount"])
	return nil
}

// A schedule and a reminder on a fake clock: Advance fires what falls due.
func Example() {
	state, _ := os.MkdirTemp("", "schedule-example")
	defer os.RemoveAll(state)
	clock := schedule.NewFakeClock(time.Date(2026, 5, 1, 8, 59, 0, 0, time.UTC))
	opts := schedule.Options{StateRoot: state, Clock: clock, Sink: printSink{}, Auto: true}

	daily, _ := schedule.Parse("schedules/daily.md", []byte("---\ncron: \"0 9 * * *\"\n---\nSummarize the open incidents.\n"))
	daily.ID = "daily"
	fmt.Println("next:", daily.Next(clock.Now(), 2))
	sched, _ := schedule.NewScheduler([]schedule.Schedule{daily}, opts)
	_ = sched.Start()
	defer sched.Stop()

	rems, _ := schedule.OpenReminders(opts)
	_ = rems.Start()
	defer rems.Stop()
	_, err := rems.Create(context.Background(), schedule.ReminderSpec{SessionID: "ses_01KBW0000000000000000000AB", Every: "30m", Prompt: "Re-check CI."})
	fmt.Println("created:", err)

	clock.Advance(time.Hour)
	// Output:
	// next: [2026-05-01 09:00:00 +0000 UTC 2026-05-02 09:00:00 +0000 UTC]
	// created: <nil>
	// start task for schedule daily: Summarize the open incidents.
	// wake: fireCount 0
	// wake: fireCount 1
}
