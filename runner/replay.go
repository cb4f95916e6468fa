package runner

import (
	"encoding/json"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/sessions"
)

// interruptedResult answers, on replay, a call whose result was never
// recorded (the process ended while it ran).
const interruptedResult = "turn interrupted before this call returned"

// Replay rebuilds the conversation a session's events record, as the loop
// gave it to the model: each message.received a user message (with its
// preamble), each message.completed and actions.requested pair one
// assistant message, and each message's action.result events one tool
// message. A call left without a result (a turn cut short) is answered
// with an error result, so every call has its answer. Events that do not
// decode are skipped.
func Replay(events []sessions.Event) []model.Message {
	var out []model.Message
	var pending []sessions.Call // calls of the last assistant message without results yet
	var results []model.ToolResult
	prev := ""
	flush := func() {
		if len(pending) == 0 {
			return
		}
		done := make(map[string]bool, len(results))
		for _, r := range results {
			done[r.CallID] = true
		}
		for _, c := range pending {
			if !done[c.CallID] {
				results = append(results, model.ToolResult{CallID: c.CallID, Name: c.ToolName, IsError: true,
					Content: []model.Part{model.TextPart(interruptedResult)}})
			}
		}
		out = append(out, model.Message{Role: model.RoleTool, ToolResults: results})
		pending, results = nil, nil
	}
	for _, ev := range events {
		switch ev.Type {
		case sessions.TypeMessageReceived:
			var d sessions.MessageReceived
			if fastjson.Unmarshal(ev.Data, &d) != nil {
				continue
			}
			flush()
			out = append(out, userMessage(d.Text, d.Preamble))
		case sessions.TypeMessageCompleted:
			var d sessions.MessageCompleted
			if fastjson.Unmarshal(ev.Data, &d) != nil {
				continue
			}
			flush()
			m := model.Message{Role: model.RoleAssistant}
			if d.Text != "" {
				m.Content = []model.Part{model.TextPart(d.Text)}
			}
			out = append(out, m)
		case sessions.TypeActionsRequested:
			var d sessions.ActionsRequested
			if fastjson.Unmarshal(ev.Data, &d) != nil {
				continue
			}
			flush()
			calls := make([]model.ToolCall, len(d.Calls))
			for i, c := range d.Calls {
				calls[i] = model.ToolCall{ID: c.CallID, Name: c.ToolName, Args: c.Args}
				if c.RawArgs != "" {
					calls[i].Args = json.RawMessage(c.RawArgs)
				}
			}
			if prev == sessions.TypeMessageCompleted && len(out) > 0 && out[len(out)-1].Role == model.RoleAssistant {
				out[len(out)-1].ToolCalls = calls
			} else {
				out = append(out, model.Message{Role: model.RoleAssistant, ToolCalls: calls})
			}
			pending = d.Calls
		case sessions.TypeActionResult:
			var d sessions.ActionResult
			if fastjson.Unmarshal(ev.Data, &d) != nil || len(pending) == 0 {
				continue
			}
			results = append(results, replayResult(d))
			if len(results) == len(pending) {
				flush()
			}
		case sessions.TypeTurnFailed, sessions.TypeTurnCompleted:
			flush()
		}
		prev = ev.Type
	}
	flush()
	return out
}

// replayResult is the model's view of a recorded result: its text, then
// its images.
func replayResult(d sessions.ActionResult) model.ToolResult {
	tr := model.ToolResult{CallID: d.CallID, Name: d.ToolName, IsError: d.IsError,
		Content: []model.Part{model.TextPart(d.Output)}}
	tr.Content = append(tr.Content, d.Images...)
	return tr
}
