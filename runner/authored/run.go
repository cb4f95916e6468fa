package authored

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/runner/tools"
)

// waitDelay bounds how long a call waits for its output pipes once the
// process group is killed (a descendant that left the group may hold
// them).
const waitDelay = 2 * time.Second

// run runs one call: the command with args on stdin, in its own process
// group, killed whole at the timeout, on cancellation and after it exits.
func (d *Def) run(ctx context.Context, args []byte, env []string, maxOut int) *tools.Result {
	prog, err := d.resolve()
	if err != nil {
		return tools.Errorf("%s (%s): %v", d.Name, d.File, err)
	}
	cmd := exec.Command(prog, d.Command[1:]...)
	cmd.Args[0] = d.Command[0]
	cmd.Dir, cmd.Env = d.Cwd, env
	cmd.Stdin = bytes.NewReader(args)
	stdout, stderr := &tools.Capped{Max: maxOut}, &tools.Capped{Max: maxOut}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = waitDelay
	if err := cmd.Start(); err != nil {
		return tools.Errorf("%s (%s): could not start %q: %v", d.Name, d.File, d.Command[0], err)
	}
	pgid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() {
		// Wait for the exit without reaping: while the leader is a zombie
		// its pid, the group's id, cannot be reused, so killing the group
		// afterwards reaches only what the command left behind.
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, pgid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				break
			}
		}
		close(exited)
	}()
	timer := time.NewTimer(d.Timeout)
	defer timer.Stop()
	var cause string
	select {
	case <-exited:
	case <-timer.C:
		cause = fmt.Sprintf("timed out after %s and was killed with its process group (raise timeout: in %s, at most %s)", d.Timeout, d.File, MaxTimeout)
	case <-ctx.Done():
		cause = "cancelled; it was killed with its process group"
	}
	// The whole group, whether the command exited or not: a child it
	// started in the background dies with the call.
	syscall.Kill(-pgid, syscall.SIGKILL)
	<-exited
	err = cmd.Wait()

	var b strings.Builder
	var exit *exec.ExitError
	switch {
	case cause != "":
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		cause = fmt.Sprintf("exit status %d", exit.ExitCode())
	case errors.As(err, &exit):
		cause = "killed by " + exit.String()
	case err != nil && !errors.Is(err, exec.ErrWaitDelay):
		cause = err.Error()
	}
	if cause == "" {
		b.WriteString(strings.TrimRight(string(stdout.Buf), "\n"))
		notice(&b, stdout, "stdout")
		if b.Len() == 0 {
			b.WriteString("(no output)")
		}
		return tools.Text(b.String())
	}
	fmt.Fprintf(&b, "%s (%s): %s", d.Name, d.File, cause)
	// The message is stderr; stdout when the command said nothing there.
	out, name := stderr, "stderr"
	if out.Total == 0 {
		out, name = stdout, "stdout"
	}
	if text := strings.TrimRight(string(out.Buf), "\n"); text != "" {
		b.WriteString("\n\n")
		b.WriteString(text)
	}
	notice(&b, out, name)
	r := tools.Text(b.String())
	r.IsError = true
	return r
}

// notice says so when the output c holds was cut.
func notice(b *strings.Builder, c *tools.Capped, name string) {
	if c.Total <= len(c.Buf) {
		return
	}
	if b.Len() > 0 {
		b.WriteString("\n\n")
	}
	fmt.Fprintf(b, "[Output cut: showing the first %d of %d bytes of %s.]", len(c.Buf), c.Total, name)
}
