package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/approval"
	"github.com/julyfs/julyfs/runner/sessions"
)

// This file is how july run decides the calls agent.yaml's approvals:
// asks for: on a terminal it asks, --approve=never|always decides for
// scripts, and with no terminal they are denied (as --approve=never).
// Under july serve they wait for an HTTP decision (--approval-timeout).

var approveFlag = &cli.StringFlag{Name: "approve", Usage: "decide the calls agent.yaml's approvals: asks for without asking: `never` (denied) or always (allowed); default: ask on the terminal, deny with none"}

var approvalTimeoutFlag = &cli.DurationFlag{Name: "approval-timeout", Value: approval.DefaultTimeout, Usage: "deny a call agent.yaml's approvals: asks for when no POST …/approvals/{callId} decides it within `DURATION`"}

// printApprovals prints july validate's approvals line: "approvals:
// edit: ask, delete: deny".
func printApprovals(w io.Writer, a *runner.Agent) {
	rules := a.ApprovalRules()
	if len(rules) == 0 {
		return
	}
	s := make([]string, len(rules))
	for i, r := range rules {
		s[i] = r.String()
	}
	fmt.Fprintf(w, "approvals: %s\n", strings.Join(s, ", "))
}

// printApproval prints an approval.decided event in july show's
// transcript: "approval Write: allow (user, always; edit: ask)".
func printApproval(w io.Writer, ev sessions.Event) {
	var d sessions.ApprovalDecided
	if json.Unmarshal(ev.Data, &d) != nil {
		return
	}
	by := d.By
	if d.Always {
		by += ", always"
	}
	fmt.Fprintf(w, "approval %s: %s (%s; %s)\n", d.ToolName, d.Decision, by, d.Rule)
}

// approver returns who decides agent a's asked calls under july run.
func approver(c *cli.Context, a *runner.Agent) (approval.Asker, error) {
	switch v := c.String("approve"); v {
	case "always":
		return approval.Flag{Allow: true}, nil
	case "never":
		return approval.Flag{Reason: "approvals are denied in this run (--approve=never)"}, nil
	case "":
	default:
		return nil, usagef(c, "--approve %q: want never or always (or leave it out to be asked on the terminal)", v)
	}
	if in, ok := c.App.Reader.(*os.File); ok && term.IsTerminal(int(in.Fd())) {
		return approval.NewTerminal(in, c.App.ErrWriter), nil
	}
	if a.HasAsk() {
		fmt.Fprintln(c.App.ErrWriter, "july: no terminal to ask on: the calls agent.yaml's approvals: asks for are denied (as --approve=never; give --approve=always to allow them)")
	}
	return approval.Flag{Reason: "there is no terminal to ask on, so it was denied (as --approve=never)"}, nil
}
