package runner

import (
	"github.com/julyfs/julyfs/runner/schedule"
	"github.com/julyfs/julyfs/runner/tools"
)

// This file is the reminders harness tool: CreateReminder, ListReminders
// and CancelReminder (allowlist name "reminders"), bound to the loop's
// session, over HarnessOptions.Reminders (package schedule keeps them).

// reminderTools returns the reminders tool for loop l's session.
func (s *Session) reminderTools(l *Loop) []*tools.Tool {
	return schedule.Tools(s.opts.Harness.Reminders, l.log.ID())
}
