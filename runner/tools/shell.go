package tools

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

type shellArgs struct {
	Command string `json:"command"`
	Timeout int    `json:"timeout"` // milliseconds
}

// NewShell returns the host-default Shell tool: `bash -c command` in dir
// (the agent's working directory), stdin empty, stdout and stderr merged
// and cut at opts.MaxShellOutput bytes, killed with its whole process group
// when the timeout passes or the call is cancelled. A non-zero exit is an
// error result carrying the output and the exit status.
func NewShell(dir string, opts Options) *Tool {
	opts = opts.withDefaults()
	return define(Tool{
		Name: NameShell,
		Description: fmt.Sprintf("Runs a bash command in the agent's working directory (%s) and returns its merged "+
			"stdout and stderr (cut at %d bytes). timeout is in milliseconds (default %d, at most %d).",
			dir, opts.MaxShellOutput, opts.ShellTimeout.Milliseconds(), opts.MaxShellTimeout.Milliseconds()),
		Schema: object([]string{"command"}, map[string]*jsonschema.Schema{
			"command": str("The bash command line."),
			"timeout": integer("Timeout in milliseconds.", 1),
		}),
		Aliases:     map[string]string{"cmd": "command"},
		Effect:      EffectWrite,
		Destructive: true,
		OpenWorld:   true,
	}, func(ctx context.Context, in shellArgs) (*Result, error) {
		timeout := opts.ShellTimeout
		if in.Timeout > 0 {
			timeout = min(time.Duration(in.Timeout)*time.Millisecond, opts.MaxShellTimeout)
		}
		return runShell(ctx, dir, in.Command, timeout, opts.MaxShellOutput), nil
	})
}

func runShell(ctx context.Context, dir, command string, timeout time.Duration, maxOut int) *Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// The whole group: a pipeline or a background child dies too.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 2 * time.Second
	out := &Capped{Max: maxOut}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	var b strings.Builder
	b.WriteString(strings.TrimRight(string(out.Buf), "\n"))
	if out.Total > len(out.Buf) {
		cutNotice(&b, fmt.Sprintf("Output cut: showing the first %d of %d bytes.", len(out.Buf), out.Total))
	}
	var exit *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		cutNotice(&b, fmt.Sprintf("Command timed out after %s and was killed.", timeout))
	case ctx.Err() != nil:
		cutNotice(&b, "Command cancelled.")
	case errors.As(err, &exit):
		cutNotice(&b, fmt.Sprintf("Exit status %d.", exit.ExitCode()))
	case err != nil:
		cutNotice(&b, "Could not run the command: "+err.Error())
	default:
		if b.Len() == 0 {
			b.WriteString("(no output)")
		}
		return Text(b.String())
	}
	r := Text(b.String())
	r.IsError = true
	return r
}
