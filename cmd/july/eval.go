package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/eval"
	"github.com/julyfs/julyfs/runner/sessions"
)

// This file is july eval: an agent's evals/*.yaml cases, each on a fresh
// copy-on-write session, as a table (or JSON), exit 1 on any failure.

func evalCommand() *cli.Command {
	return &cli.Command{
		Name:      "eval",
		Usage:     "run an agent's evals (evals/*.yaml) and report each case",
		ArgsUsage: "DIR",
		Description: `Runs every case of DIR/evals/*.yaml: its message (or turns) sent to the agent
on a fresh session (session.json purpose "eval") whose tree is a
copy-on-write layer over the agent's tree, so the agent's files are never
touched; then its assertions (succeeded, reply, files, called, notCalled,
maxSteps, maxTokens) are checked. Prints a table of the cases (result, turns,
model calls, tokens, time, session) and what failed, and exits 1 when any
case fails or an eval file is invalid (each problem as FILE:LINE).

   july eval examples/notes
   july eval examples/notes --run summary --json
   july eval examples/notes --model openai:gpt-4.1

A case's model is its model:, else agent.yaml's; --model runs every case on
SPEC instead. script:FILE in a case is relative to the agent directory, in
--model to the working directory. --run runs the cases whose name matches the
Go regular expression. On a terminal a progress line is shown on stderr. The
sessions stay under the state root: july show and july diff DIR SESSION show
what a case did.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Usage: "run every case on the model `SPEC` (overrides the cases' and agent.yaml's model)"},
			&cli.StringFlag{Name: "run", Usage: "run only the cases whose name matches `REGEXP`"},
			&cli.BoolFlag{Name: "json", Usage: "print the results as one JSON document"},
			&cli.IntFlag{Name: "max-steps", Value: runner.DefaultMaxSteps, Usage: "fail a turn after `N` model calls without a reply"},
			stateRootFlag,
		},
		Action: evalAction,
	}
}

// evalReport is july eval --json's document.
type evalReport struct {
	Agent  string         `json:"agent"`
	Passed int            `json:"passed"`
	Failed int            `json:"failed"`
	Cases  []*eval.Result `json:"cases"`
}

func evalAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef(c, "want one agent directory, got %d arguments", c.NArg())
	}
	if c.Int("max-steps") < 1 {
		return usagef(c, "--max-steps must be at least 1")
	}
	var filter *regexp.Regexp
	if p := c.String("run"); p != "" {
		var err error
		if filter, err = regexp.Compile(p); err != nil {
			return usagef(c, "--run: %v", err)
		}
	}
	a, err := load(c)
	if err != nil {
		return err
	}
	cases, err := eval.Load(a.Dir)
	var le *eval.LoadError
	if errors.As(err, &le) {
		fmt.Fprintln(c.App.ErrWriter, le.Error())
		return errReported
	}
	if err != nil {
		return err
	}
	if filter != nil {
		kept := cases[:0]
		for _, k := range cases {
			if filter.MatchString(k.Name) {
				kept = append(kept, k)
			}
		}
		cases = kept
	}
	if len(cases) == 0 {
		if filter != nil {
			return fmt.Errorf("no eval case matches --run %q", c.String("run"))
		}
		return fmt.Errorf("agent %s has no evals: write cases in %s/evals/*.yaml (see docs/evals.md)", a.Config.Name, c.Args().First())
	}
	opts := eval.Options{Store: sessions.New(stateRoot(c, a)), MaxSteps: c.Int("max-steps")}
	if spec := c.String("model"); spec != "" {
		if opts.ModelDir, err = os.Getwd(); err != nil {
			return err
		}
		opts.Model = spec
	}

	progress := isTerminal(c.App.ErrWriter)
	report := evalReport{Agent: a.Config.Name, Cases: []*eval.Result{}}
	start := time.Now()
	for i, k := range cases {
		if progress {
			fmt.Fprintf(c.App.ErrWriter, "\r\033[K%s %d/%d %s", bar(i, len(cases)), i, len(cases), k.Name)
		}
		r := eval.Run(c.Context, a, k, opts)
		report.Cases = append(report.Cases, r)
		if r.Passed {
			report.Passed++
		} else {
			report.Failed++
		}
		if c.Context.Err() != nil {
			break
		}
	}
	if progress {
		fmt.Fprint(c.App.ErrWriter, "\r\033[K")
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(report); err != nil {
			return err
		}
	} else if err := printEvalTable(c.App.Writer, report, time.Since(start)); err != nil {
		return err
	}
	if report.Failed > 0 || len(report.Cases) < len(cases) {
		return errReported
	}
	return nil
}

// bar is a progress bar of done out of total.
func bar(done, total int) string {
	const width = 20
	n := done * width / total
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}

func printEvalTable(w io.Writer, rep evalReport, took time.Duration) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tRESULT\tTURNS\tSTEPS\tTOKENS\tTIME\tSESSION")
	for _, r := range rep.Cases {
		res := "pass"
		if !r.Passed {
			res = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", r.Name, res, r.Turns, r.Steps, r.Tokens, r.Duration.Round(time.Millisecond), r.SessionID)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rep.Cases {
		if r.Passed {
			continue
		}
		fmt.Fprintf(w, "\n%s (%s:%d):\n", r.Name, r.File, r.Line)
		for _, f := range r.Failures {
			fmt.Fprintf(w, "  %s\n", f)
		}
	}
	_, err := fmt.Fprintf(w, "\n%d passed, %d failed (%s)\n", rep.Passed, rep.Failed, took.Round(time.Millisecond))
	return err
}
