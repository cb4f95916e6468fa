package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/schedule"
)

// This file is july reminders, and the schedules part of july validate.

func remindersCommand() *cli.Command {
	return &cli.Command{
		Name:      "reminders",
		Usage:     "list or cancel an agent's reminders",
		ArgsUsage: "DIR",
		Description: `Lists the reminders kept under the agent's state root (.july in the agent
directory, or --state-root), read from disk directly, so it works with or
without july serve running: id, session, next fire, fire count, purpose. A
disarmed reminder shows why instead of its next fire. --json prints each
record. --cancel ID removes one; a running server drops it before its next
firing.`,
		Flags: []cli.Flag{stateRootFlag,
			&cli.BoolFlag{Name: "json", Usage: "one JSON object per reminder"},
			&cli.StringFlag{Name: "cancel", Usage: "cancel reminder `ID`"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef(c, "want one agent directory, got %d arguments", c.NArg())
			}
			a, err := load(c)
			if err != nil {
				return err
			}
			st, err := openState(c.Context, stateRoot(c, a), a)
			if err != nil {
				return err
			}
			state := st.sched
			if id := c.String("cancel"); id != "" {
				if err := schedule.CancelStored(state, id); err != nil {
					if errors.Is(err, schedule.ErrUnknownReminder) {
						return fmt.Errorf("%w; july reminders %s lists them", err, c.Args().First())
					}
					return err
				}
				fmt.Fprintf(c.App.Writer, "cancelled %s\n", id)
				return nil
			}
			recs, problems, err := schedule.ReadReminders(state)
			if err != nil {
				return err
			}
			for _, p := range problems {
				fmt.Fprintf(c.App.ErrWriter, "july: warning: skipping %v\n", p)
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetEscapeHTML(false)
				for _, r := range recs {
					if err := enc.Encode(r); err != nil {
						return err
					}
				}
				return nil
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSESSION\tNEXT FIRE\tFIRES\tPURPOSE")
			for _, r := range recs {
				next := r.NextFire.UTC().Format(time.RFC3339)
				switch {
				case r.Disarmed != "":
					next = "disarmed (" + r.Disarmed + ")"
				case r.NextFire.IsZero():
					next = "done"
				}
				purpose := r.Purpose
				if purpose == "" {
					purpose = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", r.ID, r.SessionID, next, r.FireCount, purpose)
			}
			return tw.Flush()
		},
	}
}

// checkSchedules loads the agent's schedules/*.md, printing every
// problem (schedules/x.md:2: bad cron "…": …) like a validation error.
func checkSchedules(c *cli.Context, a *runner.Agent) ([]schedule.Schedule, error) {
	scheds, err := schedule.Load(a.Dir)
	if err != nil {
		fmt.Fprintln(c.App.ErrWriter, err.Error())
		return nil, errReported
	}
	return scheds, nil
}

// printSchedules lists the schedules with their next three fire times.
func printSchedules(c *cli.Context, scheds []schedule.Schedule) {
	if len(scheds) == 0 {
		return
	}
	fmt.Fprintln(c.App.Writer, "schedules (cron, UTC; next three fire times):")
	now := time.Now()
	for _, s := range scheds {
		var next []string
		for _, t := range s.Next(now, 3) {
			next = append(next, t.Format(time.RFC3339))
		}
		fmt.Fprintf(c.App.Writer, "  %s: %q: %s\n", s.ID, s.Cron, strings.Join(next, ", "))
	}
}
