package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/sessions"
)

// This file is july run (the agent loop), july sessions and july show.

// DefaultStateDir is the state root inside the agent directory.
const DefaultStateDir = ".july"

var stateRootFlag = &cli.StringFlag{Name: "state-root", Usage: "keep sessions under `DIR` (default: .july in the agent directory)"}

// stateRoot returns the state root for agent a.
func stateRoot(c *cli.Context, a *runner.Agent) string {
	if d := c.String("state-root"); d != "" {
		return d
	}
	return filepath.Join(a.Dir, DefaultStateDir)
}

// checkRun reports the problems in agent.yaml that keep a from running
// (see runner.Agent.RunProblems) like a validation error.
func checkRun(c *cli.Context, a *runner.Agent, override string) error {
	ps := a.RunProblems(override)
	if len(ps) == 0 {
		return nil
	}
	ve := &runner.ValidationError{Dir: c.Args().First(), Problems: ps}
	fmt.Fprintln(c.App.ErrWriter, ve.Error())
	return errReported
}

// validateRun prints july validate's model line, and which harness
// builtins the plan grants by default but july run does not give the
// model yet (checkRun has passed).
func validateRun(c *cli.Context, a *runner.Agent) {
	if u := a.Plan.Unserved(); len(u) > 0 {
		fmt.Fprintf(c.App.Writer, "not served (july run leaves them out): %s\n", strings.Join(u, ", "))
	}
	for _, n := range a.Notes {
		fmt.Fprintf(c.App.Writer, "note: %s\n", n)
	}
	printApprovals(c.App.Writer, a)
	if a.Config.Model == "" {
		fmt.Fprintln(c.App.Writer, "model: (none: july run needs --model)")
		return
	}
	desc, _ := runner.DescribeModel(a.Config.Model)
	fmt.Fprintf(c.App.Writer, "model: %s\n", desc)
}

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run one turn of an agent: the message to the model, tool calls, the reply",
		ArgsUsage: "DIR",
		Description: `Sends the message (-m, or stdin) to the agent's model, runs the tool calls
it asks for on the agent's tree until it replies, and prints the reply on
stdout. Each run is one turn of a session kept under the state root
(.july in the agent directory, or --state-root): a new session, or the one
--session names, whose history is given to the model again.

   july run examples/notes --model script:examples/notes/demo.script.yaml -m "..."
   july run examples/notes --session ses_01J... -m "Now make it shorter"
   echo "question" | july run examples/project

--model overrides agent.yaml's model: script:FILE (a scripted model, offline),
openai:NAME, anthropic:NAME, or a bare name whose prefix tells the provider.
--dry-run runs read tools and stubs write tools. --json prints the session's
events as NDJSON as they happen instead of the reply, with the streamed text
as message.appended lines (which have no index: they are not in the log). -v prints the tool calls
and the streamed text on stderr. --print-prompt prints the system prompt (and
a new session's first-message preamble) without calling a model.

Calls agent.yaml's approvals: asks for are asked on the terminal
("Allow StrReplace on /src/x.go? [y/N/a(lways)]"); --approve=never|always
decides them without asking; with no terminal they are denied.

Ctrl-C ends the turn with turn.failed ("turn interrupted"); the session stays
usable. A second Ctrl-C exits at once.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "the `MESSAGE` (default: read stdin)"},
			&cli.StringFlag{Name: "session", Usage: "continue session `ID`"},
			&cli.StringFlag{Name: "model", Usage: "the model `SPEC` (overrides agent.yaml's model)"},
			stateRootFlag,
			&cli.IntFlag{Name: "max-steps", Value: runner.DefaultMaxSteps, Usage: "fail the turn after `N` model calls without a reply"},
			&cli.DurationFlag{Name: "model-timeout", Usage: "fail a model call whose server sends nothing for `DURATION` (retried; default: agent.yaml's modelTimeout, else 120s)"},
			&cli.Int64Flag{Name: "max-message", Value: sessions.DefaultMaxMessageBytes, Usage: "refuse a message over `BYTES`"},
			&cli.Int64Flag{Name: "model-max-reply", Usage: "fail a model reply over `BYTES` (default: agent.yaml's modelMaxReply, else 32 bytes per output token, at least 1 MiB)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "run read tools, stub write tools, skip the commit"},
			&cli.BoolFlag{Name: "json", Usage: "print the session's events as NDJSON as they happen"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "print tool calls and streamed text on stderr"},
			&cli.BoolFlag{Name: "print-prompt", Usage: "print the system prompt and exit"},
			indexFlag,
			watchFlags[0], watchFlags[1],
			cowFlag,
			approveFlag,
		},
		Action: runAction,
	}
}

func runAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef(c, "want one agent directory, got %d arguments", c.NArg())
	}
	if c.Int("max-steps") < 1 {
		return usagef(c, "--max-steps must be at least 1")
	}
	if c.IsSet("model-timeout") && c.Duration("model-timeout") < time.Second {
		return usagef(c, "--model-timeout must be at least 1s")
	}
	if c.Int64("model-max-reply") < 0 {
		return usagef(c, "--model-max-reply must not be negative")
	}
	if c.Int64("max-message") < 1 {
		return usagef(c, "--max-message must be at least 1")
	}
	if c.IsSet("session") && strings.TrimSpace(c.String("session")) == "" {
		return usagef(c, "--session is empty: give a session id (july sessions lists them), or leave --session out for a new session")
	}
	a, err := load(c)
	if err != nil {
		return err
	}
	stderr := c.App.ErrWriter
	if c.Bool("print-prompt") {
		return printPrompt(c, a)
	}
	if err := checkRun(c, a, c.String("model")); err != nil {
		return err
	}
	spec, modelDir := a.Config.Model, a.Dir
	if s := c.String("model"); s != "" {
		spec, modelDir = s, ""
	}
	if _, _, _, err := model.ParseSpec(spec); err != nil {
		return err
	}
	text := c.String("message")
	if !c.IsSet("message") {
		// One newline more than the bound may be trimmed; anything past it
		// is over the bound, and not read.
		limit := c.Int64("max-message") + 1
		data, err := io.ReadAll(io.LimitReader(c.App.Reader, limit+1))
		if err != nil {
			return err
		}
		if int64(len(data)) > limit {
			return fmt.Errorf("message on stdin is over the limit of %d bytes (raise it with july run --max-message BYTES)", limit-1)
		}
		text = strings.TrimRight(string(data), "\n")
	}
	if strings.TrimSpace(text) == "" {
		return usagef(c, "no message: give -m MESSAGE, or pipe it on stdin")
	}
	if err := sessions.CheckMessage(text, c.Int64("max-message")); err != nil {
		return err
	}
	if modelDir == "" {
		if modelDir, err = os.Getwd(); err != nil {
			return err
		}
	}
	mopts := model.Options{Dir: modelDir, IdleTimeout: a.Config.ModelTimeout, MaxReplyBytes: a.Config.ModelMaxReply}
	if c.IsSet("model-timeout") {
		mopts.IdleTimeout = c.Duration("model-timeout")
	}
	if c.IsSet("model-max-reply") {
		mopts.MaxReplyBytes = c.Int64("model-max-reply")
	}
	m, err := runner.ResolveModel(spec, mopts)
	if err != nil {
		return err
	}
	ask, err := approver(c, a)
	if err != nil {
		return err
	}

	// The first Ctrl-C cancels the turn; the second exits.
	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	go func() {
		select {
		case <-sig:
		case <-ctx.Done():
			return
		}
		fmt.Fprintln(stderr, "july: interrupting the turn (Ctrl-C again to exit now)")
		cancel()
		<-sig
		os.Exit(130)
	}()

	out := c.App.Writer
	verbose := c.Bool("verbose")
	opts := runner.LoopOptions{Model: m, MaxSteps: c.Int("max-steps")}
	calls := map[string]sessions.Call{}
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	var werr error
	turnID, sessionID := "", ""
	opts.OnEvent = func(ev sessions.Event) {
		turnID = ev.TurnID
		if c.Bool("json") && werr == nil {
			werr = enc.Encode(ev)
		}
		if verbose {
			printVerbose(stderr, ev, calls)
		}
	}
	opts.OnDelta = func(d model.Delta) {
		if verbose {
			io.WriteString(stderr, d.Text)
		}
		if c.Bool("json") && werr == nil && d.Text != "" {
			// Streamed text: printed as it comes, not kept in the log (the
			// message.completed event that follows has all of it).
			werr = enc.Encode(appended{Type: "message.appended", SessionID: sessionID, TurnID: turnID,
				At: time.Now().UTC(), Data: sessions.MessageCompleted{Text: d.Text}})
		}
	}
	// A continued session is held first: an unknown session or a busy one
	// fails before the tree is bound.
	var unmount func()
	st := sessions.New(stateRoot(c, a))
	st.MaxMessageBytes = c.Int64("max-message")
	oopts := runner.OpenOptions{
		Store:   st,
		Resume:  c.String("session"),
		Session: runner.SessionOptions{DryRun: c.Bool("dry-run"), IndexDir: c.String("index"), Index: indexOptions(c), Approver: ask},
		Loop:    opts,
		Bound: func(s *runner.Session) (err error) {
			unmount, err = mountWatch(c, s)
			return err
		},
	}
	oopts.Session.MCPWarn = func(m string) { fmt.Fprintf(stderr, "warning: %s\n", m) }
	if c.Bool("cow") || a.Cow || c.String("session") != "" {
		// A --cow session, or a continued one that may be.
		oopts.Layer = cowLayer(c, a, stderr)
	}
	sl, err := a.OpenLoop(ctx, oopts)
	defer func() {
		// The watch view first, then the tree and the session.
		if unmount != nil {
			unmount()
		}
		if sl != nil {
			sl.Close()
		}
	}()
	if err != nil {
		return err
	}
	for _, w := range sl.Warnings {
		fmt.Fprintf(stderr, "july: warning: %s\n", w)
	}
	log, loop := sl.Log, sl.Loop
	sessionID = log.ID()
	res, err := loop.Run(ctx, text)
	for _, w := range log.TakeWarnings() {
		fmt.Fprintf(stderr, "july: warning: %s\n", w)
	}
	if werr != nil {
		return werr
	}
	var te *runner.TurnError
	if errors.As(err, &te) {
		if te.Interrupted() {
			fmt.Fprintf(stderr, "july: turn interrupted; session %s is kept: continue with --session %s\n", log.ID(), log.ID())
		} else {
			fmt.Fprintf(stderr, "july: turn failed: %s\n", te.Message)
			fmt.Fprintf(stderr, "july: session %s is kept: continue with --session %s\n", log.ID(), log.ID())
		}
		return errReported
	}
	if err != nil {
		return err
	}
	if !c.Bool("json") {
		if _, err := fmt.Fprintln(out, res.Text); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "july: session %s (%d steps, %s)\n", log.ID(), res.Steps, tokens(res.Usage))
	return nil
}

// appended is a streamed piece of assistant text in --json output: the
// event envelope without an index, since it is not in the log.
type appended struct {
	Type      string                    `json:"type"`
	SessionID string                    `json:"sessionId"`
	TurnID    string                    `json:"turnId"`
	At        time.Time                 `json:"at"`
	Data      sessions.MessageCompleted `json:"data"`
}

// printPrompt prints the system prompt and, for a new session, the
// first message's preamble.
func printPrompt(c *cli.Context, a *runner.Agent) error {
	w := c.App.Writer
	fmt.Fprint(w, a.SystemPrompt())
	if c.String("session") != "" {
		return nil
	}
	s, err := a.Open(c.Context, runner.SessionOptions{NoIndex: true, SessionID: liveSessionID(a)})
	if err != nil {
		return err
	}
	defer s.Close()
	pre, err := s.FirstTurnPreamble(c.Context)
	if err != nil {
		return err
	}
	if pre != "" {
		fmt.Fprintf(w, "\n--- before the first message of a session ---\n%s\n", pre)
	}
	return nil
}

// printVerbose prints a tool call when its result arrives.
func printVerbose(w io.Writer, ev sessions.Event, calls map[string]sessions.Call) {
	switch ev.Type {
	case sessions.TypeActionsRequested:
		var d sessions.ActionsRequested
		if json.Unmarshal(ev.Data, &d) == nil {
			for _, c := range d.Calls {
				calls[c.CallID] = c
			}
		}
	case sessions.TypeActionResult:
		var d sessions.ActionResult
		if json.Unmarshal(ev.Data, &d) != nil {
			return
		}
		call := calls[d.CallID]
		args := string(call.Args)
		if call.RawArgs != "" {
			args = strconv.Quote(call.RawArgs)
		}
		status := "ok"
		switch {
		case d.Stubbed:
			status = "stubbed (dry run)"
		case d.IsError:
			status = "error: " + oneLine(d.Output, 120)
		}
		fmt.Fprintf(w, "july: %s %s -> %s\n", d.ToolName, args, status)
	case sessions.TypeMessageCompleted:
		var d sessions.MessageCompleted
		if json.Unmarshal(ev.Data, &d) == nil && d.Text != "" {
			fmt.Fprintln(w)
		}
	}
}

// oneLine shortens s to its first line, at most max bytes, with control
// characters escaped.
func oneLine(s string, max int) string {
	first, _, cut := strings.Cut(s, "\n")
	if len(first) > max {
		first, cut = first[:max], true
	}
	q := strconv.Quote(first)
	q = q[1 : len(q)-1]
	if cut {
		q += "..."
	}
	return q
}

func tokens(u model.Usage) string {
	s := fmt.Sprintf("%d input + %d output tokens", u.InputTokens, u.OutputTokens)
	if u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
		s += fmt.Sprintf(", cache %d read / %d written", u.CacheReadTokens, u.CacheWriteTokens)
	}
	return s
}

func sessionsCommand() *cli.Command {
	return &cli.Command{
		Name:      "sessions",
		Usage:     "list an agent's sessions",
		ArgsUsage: "DIR",
		Description: `Lists the sessions under the agent's state root (.july in the agent
directory, or --state-root), oldest first: id, when it started, its turns, its
tokens (input/output) and its last message. --json prints session.json of each.`,
		Flags: []cli.Flag{stateRootFlag, &cli.BoolFlag{Name: "json", Usage: "one JSON object per session"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef(c, "want one agent directory, got %d arguments", c.NArg())
			}
			a, err := load(c)
			if err != nil {
				return err
			}
			list, err := sessions.New(stateRoot(c, a)).List()
			if err != nil {
				return err
			}
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetEscapeHTML(false)
				for _, m := range list {
					if err := enc.Encode(m); err != nil {
						return err
					}
				}
				return nil
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTARTED\tTURNS\tTOKENS\tLAST MESSAGE")
			for _, m := range list {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d/%d\t%s\n", m.ID, m.Created.Local().Format(time.DateTime), m.Turns,
					m.Usage.InputTokens, m.Usage.OutputTokens, oneLine(m.LastMessage, 60))
			}
			return tw.Flush()
		},
	}
}

func showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print a session's transcript",
		ArgsUsage: "DIR ID",
		Description: `Prints the session's turns as a readable transcript: messages, tool calls
with their results, replies, and how each turn ended. --json prints the raw
events, one per line.`,
		Flags: []cli.Flag{stateRootFlag, &cli.BoolFlag{Name: "json", Usage: "the raw events as NDJSON"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return usagef(c, "want DIR ID, got %d arguments", c.NArg())
			}
			a, err := load(c)
			if err != nil {
				return err
			}
			meta, events, warns, err := sessions.New(stateRoot(c, a)).Read(c.Args().Get(1))
			if err != nil {
				return err
			}
			for _, w := range warns {
				fmt.Fprintf(c.App.ErrWriter, "july: warning: %s\n", w)
			}
			w := c.App.Writer
			if c.Bool("json") {
				enc := json.NewEncoder(w)
				enc.SetEscapeHTML(false)
				for _, ev := range events {
					if err := enc.Encode(ev); err != nil {
						return err
					}
				}
				return nil
			}
			return transcript(w, meta, events)
		},
	}
}

// transcript prints events for people.
func transcript(w io.Writer, meta sessions.Meta, events []sessions.Event) error {
	fmt.Fprintf(w, "session %s: agent %s, model %s, started %s, %d turns, %s\n", meta.ID, meta.Agent, meta.Model,
		meta.Created.Local().Format(time.DateTime), meta.Turns, tokens(meta.Usage))
	turn := 0
	calls := map[string]sessions.Call{}
	todos := ""
	if meta.Parent != "" {
		fmt.Fprintf(w, "(a subagent of session %s)\n", meta.Parent)
	}
	if meta.ForkOf != nil {
		fmt.Fprintf(w, "(forked from session %s at turn %d)\n", meta.ForkOf.Session, meta.ForkOf.Turn)
	}
	for _, ev := range events {
		switch ev.Type {
		case sessions.TypeMessageReceived:
			var d sessions.MessageReceived
			json.Unmarshal(ev.Data, &d)
			turn++
			fmt.Fprintf(w, "\n## turn %d (%s, %s)\n\n", turn, ev.TurnID, ev.At.Local().Format(time.DateTime))
			if d.Preamble != "" {
				fmt.Fprintf(w, "[with %s: %d bytes]\n", runner.AgentsFile, len(d.Preamble))
			}
			fmt.Fprintf(w, "user: %s\n", indent(d.Text))
		case sessions.TypeTurnStarted:
			var d sessions.TurnStarted
			json.Unmarshal(ev.Data, &d)
			if d.DryRun {
				fmt.Fprintln(w, "(dry run: writes stubbed)")
			}
		case sessions.TypeMessageCompleted:
			var d sessions.MessageCompleted
			json.Unmarshal(ev.Data, &d)
			if d.Text != "" {
				fmt.Fprintf(w, "assistant: %s\n", indent(d.Text))
			}
		case sessions.TypeActionsRequested:
			var d sessions.ActionsRequested
			json.Unmarshal(ev.Data, &d)
			for _, c := range d.Calls {
				calls[c.CallID] = c
			}
		case sessions.TypeActionResult:
			var d sessions.ActionResult
			json.Unmarshal(ev.Data, &d)
			c := calls[d.CallID]
			args := string(c.Args)
			if c.RawArgs != "" {
				args = strconv.Quote(c.RawArgs)
			}
			tag := ""
			switch {
			case d.Stubbed:
				tag = " (stubbed)"
			case d.IsError:
				tag = " (error)"
			}
			fmt.Fprintf(w, "tool %s %s%s\n  %s\n", d.ToolName, args, tag, indent(strings.TrimRight(d.Output, "\n")))
			if d.ToolName == runner.NameUpdateTodos && !d.IsError && !d.Stubbed {
				todos = d.Output
			}
		case sessions.TypeTurnCompleted:
			var d sessions.TurnCompleted
			json.Unmarshal(ev.Data, &d)
			fmt.Fprintf(w, "-- turn completed (%s)\n", tokens(d.Usage))
			printCheckpoint(w, d.Checkpoint)
		case sessions.TypeTurnFailed:
			var d sessions.TurnFailed
			json.Unmarshal(ev.Data, &d)
			fmt.Fprintf(w, "-- turn failed: %s\n", indent(d.Message))
			printCheckpoint(w, d.Checkpoint)
		case sessions.TypeSessionRewound:
			var d sessions.SessionRewound
			json.Unmarshal(ev.Data, &d)
			fmt.Fprintf(w, "-- rewound to the end of turn %d\n", d.ToTurn)
		case sessions.TypeApprovalDecided:
			printApproval(w, ev)
		}
	}
	if todos != "" {
		fmt.Fprintf(w, "\n## todo list\n\n  %s\n", indent(todos))
	}
	return nil
}

// indent continues a multi-line text two spaces in, with control
// characters other than newlines and tabs escaped.
func indent(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString("\n  ")
		case r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
