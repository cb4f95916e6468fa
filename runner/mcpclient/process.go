package mcpclient

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// process is a stdio server: its own process group, so closing it kills
// every process it started (an npx wrapper's node, a shell's children).
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *tail
	done   chan struct{} // closed when the leader has exited
	err    error         // the leader's exit, once done

	closeOnce sync.Once
}

// closeGrace is how long close waits for the server to exit after its
// stdin is closed, and again after SIGTERM, before SIGKILL.
const closeGrace = time.Second

func startProcess(r *resolved, dir string) (*process, error) {
	cmd := exec.Command(r.command[0], r.command[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), r.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A child that keeps stderr open must not keep Wait from returning.
	cmd.WaitDelay = closeGrace
	p := &process{cmd: cmd, stderr: &tail{max: 4 << 10}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if p.stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			return nil, ee.Err
		}
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Pid returns the leader's process id (also the group's).
func (p *process) Pid() int { return p.cmd.Process.Pid }

// exited reports whether the leader has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// close ends the server as the MCP spec asks (stdin closed, then SIGTERM,
// then SIGKILL), and then kills whatever is left of its process group.
func (p *process) close() {
	p.closeOnce.Do(func() {
		p.stdin.Close()
		pgid := p.cmd.Process.Pid
		wait := func() bool {
			select {
			case <-p.done:
				return true
			case <-time.After(closeGrace):
				return false
			}
		}
		if !wait() {
			syscall.Kill(-pgid, syscall.SIGTERM)
			if !wait() {
				syscall.Kill(-pgid, syscall.SIGKILL)
				<-p.done
			}
		}
		// The leader is gone; its children may not be.
		syscall.Kill(-pgid, syscall.SIGKILL)
	})
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
