package runner

import (
	fastjson "github.com/segmentio/encoding/json"

	"github.com/julyfs/julyfs/runner/sessions"
)

// TurnCount counts the turns a log has started: the number of the last.
func TurnCount(events []sessions.Event) int {
	n := 0
	for _, ev := range events {
		if ev.Type == sessions.TypeTurnStarted {
			n++
		}
	}
	return n
}

// ActiveTurns returns, for a log with rewinds (session.rewound), the
// turns the conversation is made of at its end: each turn's id by
// number. A rewind to turn N makes the conversation what it was at the
// end of turn N (whatever rewinds came before), and later turns add to
// it. Without rewinds it is every turn.
func ActiveTurns(events []sessions.Event) (active []string) {
	// ancestry[n] is the conversation's turns at the end of turn n.
	ancestry := map[int][]string{0: nil}
	n := 0
	for _, ev := range events {
		switch ev.Type {
		case sessions.TypeTurnStarted:
			n++
			active = append(active[:len(active):len(active)], ev.TurnID)
			ancestry[n] = active
		case sessions.TypeSessionRewound:
			var d sessions.SessionRewound
			if fastjson.Unmarshal(ev.Data, &d) == nil {
				if a, ok := ancestry[d.ToTurn]; ok {
					active = a
				}
			}
		}
	}
	return active
}

// ActiveEvents returns the events of the turns ActiveTurns names, in
// order: what a replay to the model is built from.
func ActiveEvents(events []sessions.Event) []sessions.Event {
	rewound := false
	for _, ev := range events {
		if ev.Type == sessions.TypeSessionRewound {
			rewound = true
			break
		}
	}
	if !rewound {
		return events
	}
	keep := map[string]bool{}
	for _, id := range ActiveTurns(events) {
		keep[id] = true
	}
	var out []sessions.Event
	for _, ev := range events {
		if ev.TurnID != "" && keep[ev.TurnID] {
			out = append(out, ev)
		}
	}
	return out
}
