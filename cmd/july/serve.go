package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/approval"
	"github.com/julyfs/julyfs/runner/host"
	"github.com/julyfs/julyfs/runner/httpapi"
	"github.com/julyfs/julyfs/runner/httpguard"
	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/playground"
	"github.com/julyfs/julyfs/runner/schedule"
	"github.com/julyfs/julyfs/runner/sessions"
)

// This file is july serve: agents as an HTTP service.

// ServeTokenEnv is the environment variable july serve reads a bearer
// token from when --token-file is not given.
const ServeTokenEnv = "JULY_SERVE_TOKEN"

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:      "serve",
		Usage:     "serve agents over HTTP: sessions with live events, schedules and reminders",
		ArgsUsage: "DIR...",
		Description: `Serves each agent directory under /<name>/v1/ (agent.yaml's name) at --addr
(default 127.0.0.1:3000; port 0 picks a free port, printed on stderr): create
a session, send it messages (queued behind a running turn), follow its events
as Server-Sent Events, cancel a turn; docs/serve.md is the API reference.

   july serve examples/notes --model script:examples/notes/demo.script.yaml
   july serve examples/notes examples/project --dev
   july serve examples/notes --addr 0.0.0.0:3000 --token-file tok

Sessions are the same .july/sessions/<id>/ july run and july show use: a
session is held only while a turn runs or waits, so july run --session can
continue it between turns. Schedules (schedules/*.md with cron: frontmatter)
fire on their cron and reminders on time, unless --dev (nothing fires by
itself: use the /v1/dev/ routes) or --no-schedules (schedules off; reminders
still fire).

Off loopback a bearer token is required (--token-file FILE, or $JULY_SERVE_TOKEN);
browser requests from another origin are refused. SIGTERM or SIGINT stops
accepting requests, lets running turns finish for --drain-timeout, then
interrupts them (turn.failed "turn interrupted") and exits 0. A turn cut short
by a killed server is closed as interrupted when the server starts again.

The playground, a web page over the same API, is at http://ADDR/: the agents,
their sessions live, a session's tree, and in --dev the schedules and
reminders to fire by hand.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:3000", Usage: "listen on `ADDR`"},
			&cli.StringFlag{Name: "token-file", Usage: "require the bearer token in `FILE` (its first line); default $" + ServeTokenEnv},
			&cli.BoolFlag{Name: "dev", Usage: "dev mode: schedules and reminders fire only through the /v1/dev/ routes"},
			&cli.BoolFlag{Name: "no-schedules", Usage: "do not fire schedules"},
			&cli.StringFlag{Name: "state-root", Usage: "keep sessions under `DIR` (default: .july in each agent directory; with several agents, DIR/<name>)"},
			&cli.StringFlag{Name: "model", Usage: "the model `SPEC` of every agent (overrides agent.yaml's model)"},
			&cli.IntFlag{Name: "max-steps", Value: runner.DefaultMaxSteps, Usage: "fail a turn after `N` model calls without a reply"},
			&cli.IntFlag{Name: "queue-limit", Value: host.DefaultQueueLimit, Usage: "messages that may wait behind a session's running turn (one more is 429)"},
			&cli.DurationFlag{Name: "drain-timeout", Value: 30 * time.Second, Usage: "on SIGTERM, how long running turns may go on before they are interrupted"},
			&cli.DurationFlag{Name: "heartbeat", Value: httpapi.DefaultHeartbeat, Usage: "interval of the comment lines on an events stream"},
			&cli.BoolFlag{Name: "json", Usage: "write an access log on stderr, one JSON object per request"},
			approvalTimeoutFlag,
			cowFlag,
			&cli.Int64Flag{Name: "max-file-bytes", Value: httpapi.DefaultMaxFileBytes, Usage: "the largest file (`N` bytes) the tree's file route serves"},
			&cli.IntFlag{Name: "max-tree-entries", Value: httpapi.DefaultMaxTreeEntries, Usage: "the most entries (`N`) the tree route lists for one directory"},
		},
		Action: serveAction,
	}
}

// served is one agent of the server.
type served struct {
	host  *host.Host
	sched *schedule.Scheduler
	rems  *schedule.Reminders
}

func serveAction(c *cli.Context) error {
	if c.NArg() < 1 {
		return usagef(c, "want at least one agent directory")
	}
	if c.Int("max-steps") < 1 {
		return usagef(c, "--max-steps must be at least 1")
	}
	if c.Int("queue-limit") < 1 {
		return usagef(c, "--queue-limit must be at least 1")
	}
	if c.Duration("approval-timeout") <= 0 {
		return usagef(c, "--approval-timeout must be positive")
	}
	stderr := c.App.ErrWriter
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "july serve: "+format+"\n", args...) }
	token, err := httpguard.ReadToken(c.String("token-file"), ServeTokenEnv)
	if err != nil {
		return err
	}
	// Every agent is loaded and checked before anything listens or fires.
	var agents []*runner.Agent
	for _, dir := range c.Args().Slice() {
		a, err := runner.Load(dir)
		var ve *runner.ValidationError
		if errors.As(err, &ve) {
			fmt.Fprintln(stderr, ve.Error())
			return errReported
		}
		if err != nil {
			return err
		}
		if ps := a.RunProblems(c.String("model")); len(ps) > 0 {
			fmt.Fprintln(stderr, (&runner.ValidationError{Dir: dir, Problems: ps}).Error())
			return errReported
		}
		agents = append(agents, a)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	var all []served
	defer func() {
		for _, s := range all {
			if s.sched != nil {
				s.sched.Stop()
			}
			if s.rems != nil {
				s.rems.Stop()
			}
		}
	}()
	var apiAgents []httpapi.Agent
	for _, a := range agents {
		spec, modelDir := a.Config.Model, a.Dir
		if s := c.String("model"); s != "" {
			spec, modelDir = s, cwd
		}
		if spec == "" {
			return fmt.Errorf("agent %s has no model: set model: in agent.yaml or give --model", a.Config.Name)
		}
		m, err := runner.ResolveModel(spec, model.Options{Dir: modelDir})
		if err != nil {
			return fmt.Errorf("agent %s: %w", a.Config.Name, err)
		}
		root := filepath.Join(a.Dir, DefaultStateDir)
		if d := c.String("state-root"); d != "" {
			root = d
			if len(agents) > 1 {
				root = filepath.Join(d, a.Config.Name)
			}
		}
		name := a.Config.Name
		approvals := approval.NewQueue(c.Duration("approval-timeout"))
		hopts := host.Options{Agent: a, Store: sessions.New(root), Model: m, MaxSteps: c.Int("max-steps"),
			QueueLimit: c.Int("queue-limit"), Logf: func(f string, args ...any) { logf(name+": "+f, args...) },
			Session: runner.SessionOptions{Approver: approvals, MCPWarn: func(m string) { logf("%s: warning: %s", name, m) }}}
		if err := serveLayer(c, a, &hopts); err != nil {
			return err
		}
		h, err := host.New(hopts)
		if err != nil {
			return err
		}
		warns, err := h.Recover()
		if err != nil {
			return fmt.Errorf("agent %s: %w", name, err)
		}
		for _, w := range warns {
			logf("%s: %s", name, w)
		}
		srv := served{host: h}
		sopts := schedule.Options{StateRoot: root, Sink: h, Logf: func(f string, args ...any) { logf(name+": "+f, args...) }}
		scheds, err := schedule.Load(a.Dir)
		if err != nil {
			return fmt.Errorf("agent %s: %w", name, err)
		}
		so := sopts
		so.Auto = !c.Bool("dev") && !c.Bool("no-schedules")
		if srv.sched, err = schedule.NewScheduler(scheds, so); err != nil {
			return fmt.Errorf("agent %s: %w", name, err)
		}
		ro := sopts
		ro.Auto = !c.Bool("dev")
		if srv.rems, err = schedule.OpenReminders(ro); err != nil {
			return fmt.Errorf("agent %s: %w", name, err)
		}
		h.UseReminders(srv.rems)
		tools, err := h.Tools(c.Context)
		if err != nil {
			return fmt.Errorf("agent %s: %w", name, err)
		}
		all = append(all, srv)
		apiAgents = append(apiAgents, httpapi.Agent{Host: h, Tools: tools, Scheduler: srv.sched, Reminders: srv.rems, Approvals: approvals})
	}
	opts := httpapi.Options{Agents: apiAgents, Token: token, Dev: c.Bool("dev"), Heartbeat: c.Duration("heartbeat")}
	if c.Bool("json") {
		opts.AccessLog = stderr
	}
	opts.Page, opts.MaxFileBytes, opts.MaxTreeEntries = playground.Handler(), c.Int64("max-file-bytes"), c.Int("max-tree-entries")
	api, err := httpapi.New(opts)
	if err != nil {
		return err
	}
	// Schedules and reminders first: another server firing them (it holds
	// their lock) refuses this one before it listens. Overdue ones fire
	// now, into sessions that run in the background.
	for i, s := range all {
		if err := s.sched.Start(); err != nil {
			return fmt.Errorf("agent %s: %w", agents[i].Config.Name, err)
		}
		if err := s.rems.Start(); err != nil {
			return fmt.Errorf("agent %s: %w", agents[i].Config.Name, err)
		}
	}
	ln, err := httpguard.Listen(c.String("addr"), token, httpguard.ListenOptions{Flag: "--addr", Env: ServeTokenEnv, What: "the agents"})
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: api.Handler(), ReadHeaderTimeout: 10 * time.Second}
	for _, a := range agents {
		logf("serving agent %s at http://%s/%s/v1/", a.Config.Name, ln.Addr(), a.Config.Name)
	}
	switch {
	case c.Bool("dev"):
		logf("dev mode: schedules and reminders fire only through the /v1/dev/ routes")
	case c.Bool("no-schedules"):
		logf("schedules are off (--no-schedules)")
	}

	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	stop()
	logf("stopping: no new requests; running turns may finish for %s", c.Duration("drain-timeout"))
	// No new connections or messages, nothing fires; running turns go on
	// for the drain timeout, then are interrupted; streams end last, so
	// they carry the turns' last events.
	shut := make(chan error, 1)
	go func() {
		sctx, cancel := context.WithTimeout(context.Background(), c.Duration("drain-timeout")+15*time.Second)
		defer cancel()
		shut <- hs.Shutdown(sctx)
	}()
	for _, s := range all {
		s.sched.Stop()
		s.rems.Stop()
	}
	dctx, cancel := context.WithTimeout(context.Background(), c.Duration("drain-timeout"))
	defer cancel()
	var failed error
	for _, s := range all {
		if err := s.host.Shutdown(dctx, 10*time.Second); err != nil {
			failed = err
		}
	}
	api.CloseStreams()
	if err := <-shut; err != nil && !errors.Is(err, context.DeadlineExceeded) {
		logf("closing connections: %v", err)
	}
	if failed != nil {
		return failed
	}
	logf("stopped")
	return nil
}
