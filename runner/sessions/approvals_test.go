package sessions

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResumeDeniesWaitingApprovals: a turn left open while calls waited
// for approval is closed as interrupted, and each call with no decision
// is recorded as denied by restart, with the reason; a decided call and
// a call of an earlier, ended turn are left alone.
func TestResumeDeniesWaitingApprovals(t *testing.T) {
	st := New(t.TempDir())
	l, err := st.Create(Meta{Agent: "a"})
	require.NoError(t, err)
	for _, e := range []struct {
		typ, turn string
		data      any
	}{
		{TypeMessageReceived, "t0", MessageReceived{Text: "x"}},
		{TypeTurnStarted, "t0", TurnStarted{}},
		{TypeApprovalRequested, "t0", ApprovalRequested{CallID: "c0", ToolName: "Write"}},
		{TypeTurnFailed, "t0", TurnFailed{Message: MessageInterrupted}},
		{TypeMessageReceived, "t1", MessageReceived{Text: "y"}},
		{TypeTurnStarted, "t1", TurnStarted{}},
		{TypeApprovalRequested, "t1", ApprovalRequested{CallID: "c1", ToolName: "Write", Rule: "edit: ask"}},
		{TypeApprovalRequested, "t1", ApprovalRequested{CallID: "c2", ToolName: "Delete", Rule: "delete: ask"}},
		{TypeApprovalDecided, "t1", ApprovalDecided{CallID: "c1", ToolName: "Write", Decision: DecisionAllow, By: DecidedByUser}},
		{TypeApprovalRequested, "t1", ApprovalRequested{CallID: "c3", ToolName: "Shell", Rule: "shell: ask"}},
	} {
		_, err := l.Append(e.typ, e.turn, e.data)
		require.NoError(t, err)
	}
	require.NoError(t, l.Close())

	l2, warns, err := st.Resume(l.ID())
	require.NoError(t, err)
	defer l2.Close()
	require.Len(t, warns, 1)
	assert.Contains(t, warns[0].Message, "recorded it as interrupted, and denied by restart the call(s) waiting for approval: c2 (Delete), c3 (Shell)")
	evs := l2.Events()
	require.Len(t, evs, 13)
	var got []ApprovalDecided
	for _, ev := range evs[10:12] {
		require.Equal(t, TypeApprovalDecided, ev.Type)
		require.Equal(t, "t1", ev.TurnID)
		var d ApprovalDecided
		require.NoError(t, json.Unmarshal(ev.Data, &d))
		got = append(got, d)
	}
	assert.Equal(t, []ApprovalDecided{
		{CallID: "c2", ToolName: "Delete", Decision: DecisionDeny, By: DecidedByRestart, Rule: "delete: ask", Reason: ReasonRestart},
		{CallID: "c3", ToolName: "Shell", Decision: DecisionDeny, By: DecidedByRestart, Rule: "shell: ask", Reason: ReasonRestart},
	}, got)
	assert.Equal(t, TypeTurnFailed, evs[12].Type)
	assert.JSONEq(t, `{"message":"turn interrupted"}`, string(evs[12].Data))

	// Resumed again: nothing more to record.
	require.NoError(t, l2.Close())
	l3, warns, err := st.Resume(l.ID())
	require.NoError(t, err)
	defer l3.Close()
	assert.Empty(t, warns)
	assert.Len(t, l3.Events(), 13)
}
