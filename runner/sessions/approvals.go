package sessions

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ReasonRestart is ApprovalDecided.Reason of a call denied by restart.
const ReasonRestart = "the process running the turn stopped while the call waited for approval, so it was not run"

// denyWaiting appends, for each call of turn that asked for approval
// (approval.requested) and has no decision, an approval.decided denying
// it by DecidedByRestart: the answer could only have come to the
// process that stopped. It returns a clause for Resume's warning naming
// them ("" for none).
func (l *Log) denyWaiting(turn string) (string, error) {
	var waiting []ApprovalRequested
	for _, ev := range l.Events() {
		if ev.TurnID != turn {
			continue
		}
		switch ev.Type {
		case TypeApprovalRequested:
			var r ApprovalRequested
			if json.Unmarshal(ev.Data, &r) == nil {
				waiting = append(waiting, r)
			}
		case TypeApprovalDecided:
			var d ApprovalDecided
			if json.Unmarshal(ev.Data, &d) == nil {
				for i, r := range waiting {
					if r.CallID == d.CallID {
						waiting = append(waiting[:i], waiting[i+1:]...)
						break
					}
				}
			}
		}
	}
	var names []string
	for _, r := range waiting {
		d := ApprovalDecided{CallID: r.CallID, ToolName: r.ToolName, Decision: DecisionDeny, By: DecidedByRestart, Rule: r.Rule, Reason: ReasonRestart}
		if _, err := l.Append(TypeApprovalDecided, turn, d); err != nil {
			return "", err
		}
		names = append(names, fmt.Sprintf("%s (%s)", r.CallID, r.ToolName))
	}
	if len(names) == 0 {
		return "", nil
	}
	return fmt.Sprintf(", and denied by restart the call(s) waiting for approval: %s", strings.Join(names, ", ")), nil
}
