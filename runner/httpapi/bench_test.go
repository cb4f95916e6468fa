package httpapi

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/julyfs/julyfs/runner/sessions"
)

// benchFixture is newFixture for a benchmark.
func benchFixture(b *testing.B, scriptText string) *fixture {
	return newFixture(b, fixtureOptions{script: scriptText, queueLimit: 1 << 20})
}

// BenchmarkCreateSession: sessions created per second over HTTP, each
// with its one-reply turn run to the end (the scripted model).
func BenchmarkCreateSession(b *testing.B) {
	f := benchFixture(b, "turns:\n  - replies:\n      - text: ok\n")
	client := &http.Client{}
	ids := make([]string, 0, b.N)
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		resp, err := client.Post(f.url+"/sessions", "application/json", strings.NewReader(`{"message":"x"}`))
		if err != nil {
			b.Fatal(err)
		}
		var st struct{ SessionID string }
		json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		ids = append(ids, st.SessionID)
	}
	for _, id := range ids {
		waitIdleB(b, f, id)
	}
	b.ReportMetric(float64(len(ids))/time.Since(start).Seconds(), "sessions/s")
}

func waitIdleB(b *testing.B, f *fixture, id string) {
	deadline := time.Now().Add(time.Minute)
	for {
		info, err := f.host.Get(id)
		if err != nil {
			b.Fatal(err)
		}
		if info.State == "idle" {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("session %s busy after a minute", id)
		}
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkFanout100: one session followed by 100 SSE subscribers; each
// iteration is one turn of 20 tool calls (42 events). Latency is from an
// event's timestamp (taken when it is appended, before its fsync) to its
// arrival at a subscriber, over every event and subscriber.
func BenchmarkFanout100(b *testing.B) {
	const subs, calls = 100, 20
	n := b.N
	var sc strings.Builder
	sc.WriteString("turns:\n")
	for range n + 1 {
		sc.WriteString("  - replies:\n")
		for range calls {
			sc.WriteString("      - calls: [{tool: Read, args: {path: /a.txt}}]\n")
		}
		sc.WriteString("      - text: done\n")
	}
	f := benchFixture(b, sc.String())
	// A first turn makes the session; subscribers follow from its end.
	resp, err := http.Post(f.url+"/sessions", "application/json", strings.NewReader(`{"message":"warm"}`))
	if err != nil {
		b.Fatal(err)
	}
	var st struct{ SessionID string }
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	id := st.SessionID
	waitIdleB(b, f, id)
	_, evs, _, _ := f.store.Read(id)
	after := len(evs) - 1

	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	connected := make(chan struct{}, subs)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for range subs {
		wg.Go(func() {
			resp, err := client.Get(fmt.Sprintf("%s/sessions/%s/events?after=%d", f.url, id, after))
			connected <- struct{}{}
			if err != nil {
				b.Error(err)
				return
			}
			defer resp.Body.Close()
			r := bufio.NewScanner(resp.Body)
			r.Buffer(nil, 1<<20)
			done := 0
			var mine []time.Duration
			for r.Scan() {
				line := r.Bytes()
				if len(line) < 6 || string(line[:6]) != "data: " {
					continue
				}
				now := time.Now()
				var ev sessions.Event
				if err := json.Unmarshal(line[6:], &ev); err != nil {
					b.Error(err)
					return
				}
				mine = append(mine, now.Sub(ev.At))
				if ev.Type == sessions.TypeTurnCompleted {
					if done++; done == n {
						break
					}
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	for range subs {
		<-connected
	}
	time.Sleep(50 * time.Millisecond) // the streams' headers are out; let them reach Poll
	b.ResetTimer()
	for i := range n {
		resp, err := client.Post(f.url+"/sessions/"+id+"/messages", "application/json", strings.NewReader(fmt.Sprintf(`{"message":"turn %d"}`, i)))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			b.Fatalf("send: %s", resp.Status)
		}
	}
	wg.Wait()
	b.StopTimer()
	if len(lat) == 0 {
		b.Fatal("no events")
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(lat))/float64(subs*n), "events/turn")
}

// BenchmarkResume10k: a stream resumed (Last-Event-ID) on an idle session
// of 10,000 events on disk, then a message: the time from connecting to
// the first live event (the message's message.received), which includes
// reading the log to follow it and holding the session again.
func BenchmarkResume10k(b *testing.B) {
	f := benchFixture(b, "turns:\n  - replies:\n      - text: ok\n")
	resp, err := http.Post(f.url+"/sessions", "application/json", strings.NewReader(`{"message":"x"}`))
	if err != nil {
		b.Fatal(err)
	}
	var st struct{ SessionID string }
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	id := st.SessionID
	waitIdleB(b, f, id)
	// Grow the log to 10,000 events: whole turns, as a long session has.
	l, _, err := f.store.Resume(id)
	for deadline := time.Now().Add(time.Minute); errors.Is(err, sessions.ErrInUse) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond) // the host is still releasing it
		l, _, err = f.store.Resume(id)
	}
	if err != nil {
		b.Fatal(err)
	}
	for n := len(l.Events()); n+4 <= 10000; n += 4 {
		turn := sessions.NewTurnID()
		l.Append(sessions.TypeMessageReceived, turn, sessions.MessageReceived{Text: "more"})
		l.Append(sessions.TypeTurnStarted, turn, sessions.TurnStarted{})
		l.Append(sessions.TypeMessageCompleted, turn, sessions.MessageCompleted{Text: "ok"})
		l.Append(sessions.TypeTurnCompleted, turn, sessions.TurnCompleted{Result: "ok"})
	}
	l.Close()
	client := &http.Client{}
	b.ResetTimer()
	var took []time.Duration
	for b.Loop() {
		_, evs, _, _ := f.store.Read(id)
		last := len(evs) - 1
		start := time.Now()
		req, _ := http.NewRequest("GET", f.url+"/sessions/"+id+"/events", nil)
		req.Header.Set("Last-Event-ID", fmt.Sprint(last))
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		post, err := client.Post(f.url+"/sessions/"+id+"/messages", "application/json", strings.NewReader(`{"message":"live"}`))
		if err != nil {
			b.Fatal(err)
		}
		post.Body.Close()
		r := bufio.NewScanner(resp.Body)
		r.Buffer(nil, 1<<20)
		for r.Scan() {
			if strings.HasPrefix(r.Text(), "data: ") {
				break
			}
		}
		took = append(took, time.Since(start))
		resp.Body.Close()
		waitIdleB(b, f, id)
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "max-ms")
}
