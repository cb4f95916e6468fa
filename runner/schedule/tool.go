package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/julyfs/julyfs/runner/tools"
)

// The reminders tool's model-facing names (allowlist name "reminders").
const (
	NameCreateReminder = "CreateReminder"
	NameListReminders  = "ListReminders"
	NameCancelReminder = "CancelReminder"
)

// ToolNames lists the reminders tool's model-facing names.
func ToolNames() []string { return []string{NameCreateReminder, NameListReminders, NameCancelReminder} }

// Tools returns the reminders tool bound to session sessionID: create
// (prompt form only), list and cancel this session's reminders. With r nil
// (a process with no reminder service: july run) each call answers, as
// a tool error, that reminders are not available in this process.
func Tools(r *Reminders, sessionID string) []*tools.Tool {
	noProps := &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		Properties: map[string]*jsonschema.Schema{}}
	create := &tools.Tool{
		Name: NameCreateReminder,
		Description: "Schedule a reminder that wakes this conversation later with prompt as a new message: once after delay " +
			"(90s, 20m, 2h, 3d), or recurring every interval (30m) or on a 5-field cron expression in UTC (0 9 * * 1-5). Give exactly one " +
			"of delay, every and cron. until states the condition under which the reminder should be cancelled; it is shown with the " +
			"prompt on each firing. Keep prompts generic (\"re-check CI for PR 12\"): re-read the live state when woken.",
		Schema: &jsonschema.Schema{
			Type:                 "object",
			Required:             []string{"prompt"},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
			Properties: map[string]*jsonschema.Schema{
				"delay":   {Type: "string", Description: "Fire once after this long: 90s, 20m, 2h, 3d (1s to one year)."},
				"every":   {Type: "string", Description: "Fire repeatedly at this interval: 30m, 1h (1s to one year)."},
				"cron":    {Type: "string", Description: "Fire on this 5-field cron expression, UTC: 0 9 * * 1-5."},
				"prompt":  {Type: "string", Description: "What this conversation is told when the reminder fires.", MinLength: jsonschema.Ptr(1)},
				"until":   {Type: "string", Description: "When to cancel the reminder (for recurring ones), e.g. once CI is green."},
				"purpose": {Type: "string", Description: "A short label, such as ci_recheck."},
			},
		},
		Effect: tools.EffectWrite,
		Run: func(ctx context.Context, args json.RawMessage) (*tools.Result, error) {
			if r == nil {
				return unavailable(), nil
			}
			var in struct {
				Delay, Every, Cron, Prompt, Until, Purpose string
			}
			if err := json.Unmarshal(args, &in); err != nil {
				return tools.Errorf("invalid arguments for %s: %v", NameCreateReminder, err), nil
			}
			rec, err := r.Create(ctx, ReminderSpec{SessionID: sessionID, Delay: in.Delay, Every: in.Every, Cron: in.Cron,
				Prompt: in.Prompt, Until: in.Until, Purpose: in.Purpose})
			if err != nil {
				return tools.Error(err), nil
			}
			now := r.opts.Clock.Now()
			res := tools.Text(fmt.Sprintf("Created reminder %s (%s): it fires next at %s (in %s).", rec.ID, schedText(rec),
				rec.NextFire.UTC().Format(time.RFC3339), rec.NextFire.Sub(now).Round(time.Second)))
			res.Structured = toolReminder(rec)
			return res, nil
		},
	}
	list := &tools.Tool{
		Name:        NameListReminders,
		Description: "List this conversation's reminders: id, when each fires next, how often it has fired, its prompt and until.",
		Schema:      noProps,
		Effect:      tools.EffectRead,
		Run: func(ctx context.Context, args json.RawMessage) (*tools.Result, error) {
			if r == nil {
				return unavailable(), nil
			}
			recs := r.List(sessionID)
			out := make([]map[string]any, 0, len(recs))
			var b strings.Builder
			if len(recs) == 0 {
				b.WriteString("This conversation has no reminders.")
			} else {
				fmt.Fprintf(&b, "%d reminder(s):", len(recs))
			}
			for _, rec := range recs {
				out = append(out, toolReminder(rec))
				next := "next " + rec.NextFire.UTC().Format(time.RFC3339)
				if rec.Disarmed != "" {
					next = "disarmed (" + rec.Disarmed + ")"
				}
				fmt.Fprintf(&b, "\n- %s (%s): %s, fired %d time(s); prompt: %s", rec.ID, schedText(rec), next, rec.FireCount, oneLine(rec.Prompt))
				if rec.Until != "" {
					fmt.Fprintf(&b, "; until: %s", oneLine(rec.Until))
				}
			}
			res := tools.Text(b.String())
			res.Structured = map[string]any{"reminders": out}
			return res, nil
		},
	}
	cancel := &tools.Tool{
		Name:        NameCancelReminder,
		Description: "Cancel one of this conversation's reminders by id (ListReminders shows them).",
		Schema: &jsonschema.Schema{
			Type:                 "object",
			Required:             []string{"id"},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
			Properties: map[string]*jsonschema.Schema{
				"id": {Type: "string", Description: "The reminder's id (rem_…).", MinLength: jsonschema.Ptr(1)},
			},
		},
		Effect:      tools.EffectWrite,
		Destructive: true,
		Run: func(ctx context.Context, args json.RawMessage) (*tools.Result, error) {
			if r == nil {
				return unavailable(), nil
			}
			var in struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(args, &in); err != nil {
				return tools.Errorf("invalid arguments for %s: %v", NameCancelReminder, err), nil
			}
			rec, err := r.Get(in.ID)
			if err == nil && rec.SessionID != sessionID {
				err = unknownReminder(in.ID) // another conversation's: not this tool's to see
			}
			if err == nil {
				err = r.Cancel(in.ID)
			}
			if err != nil {
				if errors.Is(err, ErrUnknownReminder) {
					return tools.Errorf("%v; ListReminders shows this conversation's reminders", err), nil
				}
				return tools.Error(err), nil
			}
			res := tools.Text("Cancelled reminder " + in.ID + ".")
			res.Structured = map[string]any{"id": in.ID, "cancelled": true}
			return res, nil
		},
	}
	return []*tools.Tool{create, list, cancel}
}

// Unavailable is the reminders tool's answer in a process without a
// reminder service.
const Unavailable = "reminders are not available in this process (run july serve)"

func unavailable() *tools.Result { return tools.Errorf("%s", Unavailable) }

func schedText(rec Reminder) string {
	switch rec.Kind {
	case KindEvery:
		return "every " + rec.Every
	case KindCron:
		return "cron " + rec.Cron
	}
	return "once, after " + rec.Delay
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:117]) + "..."
	}
	return s
}

func toolReminder(rec Reminder) map[string]any {
	m := map[string]any{"id": rec.ID, "kind": rec.Kind, "fireCount": rec.FireCount, "prompt": rec.Prompt}
	if !rec.NextFire.IsZero() {
		m["nextFire"] = rec.NextFire.UTC().Format(time.RFC3339)
	}
	for k, v := range map[string]string{"delay": rec.Delay, "every": rec.Every, "cron": rec.Cron, "until": rec.Until,
		"purpose": rec.Purpose, "disarmed": rec.Disarmed} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}
