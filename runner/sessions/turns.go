package sessions

// OpenTurn returns the id of the last turn in events that started and has
// not ended (no turn.completed or turn.failed yet): a turn under way, or
// one whose process died, which Resume closes as interrupted. "" when
// every turn has ended.
func OpenTurn(events []Event) string { return openTurn(events) }

// ModeTask is Meta.Mode of a task-mode session.
const ModeTask = "task"
