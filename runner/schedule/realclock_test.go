package schedule

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/sessions"
)

// wakeLog is a Sink that appends each wake to a file (one JSON line) and
// signals it on a channel.
type wakeLog struct {
	mu   sync.Mutex
	path string
	ch   chan map[string]any
}

type wakeLine struct {
	Session    string    `json:"session"`
	ReminderID string    `json:"reminderId"`
	FireCount  int       `json:"fireCount"`
	At         time.Time `json:"at"`
	Pid        int       `json:"pid"`
}

func (w *wakeLog) StartTask(context.Context, string, string) (string, error) {
	return "", fmt.Errorf("no schedules")
}

func (w *wakeLog) Wake(ctx context.Context, sessionID, text string, data map[string]any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	f, err := os.OpenFile(w.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	line, _ := json.Marshal(wakeLine{Session: sessionID, ReminderID: data["reminderId"].(string), FireCount: data["fireCount"].(int), At: time.Now(), Pid: os.Getpid()})
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		select {
		case w.ch <- data:
		default:
		}
	}
	return err
}

func readWakes(t *testing.T, path string) []wakeLine {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []wakeLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l wakeLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		out = append(out, l)
	}
	require.NoError(t, sc.Err())
	return out
}

const childEnv = "JULY_SCHEDULE_TEST_CHILD_STATE"

// TestRealClockChild is the first process of TestRealClockAcrossProcesses:
// it creates a recurring reminder (every 1s), waits for its first wake,
// then creates a one-shot (delay 3s) and exits before it is due, without
// stopping (as if killed).
func TestRealClockChild(t *testing.T) {
	state := os.Getenv(childEnv)
	if state == "" {
		t.Skip("run by TestRealClockAcrossProcesses")
	}
	sink := &wakeLog{path: filepath.Join(state, "wakes.log"), ch: make(chan map[string]any, 16)}
	r, err := OpenReminders(Options{StateRoot: state, Sink: sink, Auto: true})
	require.NoError(t, err)
	require.NoError(t, r.Start())
	ses := os.Getenv(childEnv + "_SESSION")
	every, err := r.Create(context.Background(), ReminderSpec{SessionID: ses, Every: "1s", Prompt: "every second"})
	require.NoError(t, err)
	select {
	case <-sink.ch:
	case <-time.After(20 * time.Second):
		t.Fatal("the recurring reminder did not fire within 20s")
	}
	// Created after the first wake and the process gone at once: on a
	// loaded machine the first wake can come seconds late, and a one-shot
	// made before it would be due while this process still runs.
	once, err := r.Create(context.Background(), ReminderSpec{SessionID: ses, Delay: "3s", Prompt: "once"})
	require.NoError(t, err)
	fmt.Printf("IDS %s %s\n", every.ID, once.ID)
}

// TestRealClockAcrossProcesses runs a short reminder across two process
// lifetimes on the real clock: the one-shot created by the first process
// and due after it exited fires exactly once, in the second; the recurring
// one carries on with its fire count.
func TestRealClockAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("real clock")
	}
	state := t.TempDir()
	ses := sessions.NewID()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestRealClockChild$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+state, childEnv+"_SESSION="+ses)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var everyID, onceID string
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "IDS "); ok {
			f := strings.Fields(rest)
			require.Len(t, f, 2)
			everyID, onceID = f[0], f[1]
		}
	}
	require.NotEmpty(t, onceID, "%s", out)
	first := readWakes(t, filepath.Join(state, "wakes.log"))
	require.NotEmpty(t, first)
	for _, w := range first {
		assert.Equal(t, everyID, w.ReminderID, "only the recurring reminder fired in the first process")
	}

	sink := &wakeLog{path: filepath.Join(state, "wakes.log"), ch: make(chan map[string]any, 64)}
	r, err := OpenReminders(Options{StateRoot: state, Sink: sink, Auto: true})
	require.NoError(t, err)
	t.Cleanup(r.Stop)
	require.NoError(t, r.Start())
	seen := map[string]bool{}
	for !seen[onceID] || !seen[everyID] {
		select {
		case d := <-sink.ch:
			seen[d["reminderId"].(string)] = true
		case <-ctx.Done():
			t.Fatalf("the reminders did not fire in the second process: %v", seen)
		}
	}
	r.Stop()

	wakes := readWakes(t, filepath.Join(state, "wakes.log"))
	var onces []wakeLine
	everyCounts := []int{}
	for _, w := range wakes {
		if w.ReminderID == onceID {
			onces = append(onces, w)
		} else {
			everyCounts = append(everyCounts, w.FireCount)
		}
	}
	require.Len(t, onces, 1, "the one-shot fires exactly once")
	assert.Equal(t, os.Getpid(), onces[0].Pid)
	assert.Equal(t, 0, onces[0].FireCount)
	// The count carries across processes and never repeats: a firing is
	// recorded before its wake, so a process stopped between the two
	// leaves a gap (a wake lost, never one given twice).
	require.NotEmpty(t, everyCounts)
	assert.Equal(t, 0, everyCounts[0], "%v", everyCounts)
	for i := 1; i < len(everyCounts); i++ {
		assert.Greater(t, everyCounts[i], everyCounts[i-1], "the recurring reminder's fire count carries across processes and never repeats: %v", everyCounts)
	}
	_, err = os.Stat(filepath.Join(state, RemindersDir, onceID+".json"))
	assert.True(t, os.IsNotExist(err), "the fired one-shot is gone")
}
