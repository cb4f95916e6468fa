package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/internal/clirun"
	"github.com/julyfs/julyfs/internal/julyfscli"
)

// TestMain lets the scripts run this test binary as julyfs, exactly as
// main does: the heavy commands are handed to julyfsd by exec. The
// executables the tests build are removed afterwards.
func TestMain(m *testing.M) {
	testscript.Main(cleanupM{m}, map[string]func(){
		"julyfs": main,
	})
}

type cleanupM struct{ m *testing.M }

func (c cleanupM) Run() int {
	code := c.m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	return code
}

var (
	buildOnce sync.Once
	binDir    string // where built holds julyfs and julyfsd
	buildErr  error
)

// built returns the path of a julyfs and a julyfsd built from this
// repository, in separate directories (so julyfs finds julyfsd only
// through JULYFSD or PATH), built once for all the tests.
func built(t *testing.T) (julyfs, julyfsd string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "julyfs-test-bin-")
		if buildErr != nil {
			return
		}
		for _, name := range []string{"julyfs", "julyfsd"} {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(binDir, name, name), "github.com/julyfs/julyfs/cmd/"+name)
			out, err := cmd.CombinedOutput()
			cancel()
			if err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", name, err, out)
				return
			}
		}
	})
	require.NoError(t, buildErr)
	return filepath.Join(binDir, "julyfs", "julyfs"), filepath.Join(binDir, "julyfsd", "julyfsd")
}

// TestScripts runs the CLI script tests in testdata/script: each file is a
// txtar archive of a script and the files it works on. julyfs hands
// index build and search --index to a julyfsd built for the test.
func TestScripts(t *testing.T) {
	_, julyfsd := built(t)
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			env.Setenv("JULYFSD", julyfsd)
			// The PostgreSQL scripts/test starts, for hostfiles-pg.txtar.
			env.Setenv("JULYFS_TEST_POSTGRES", os.Getenv("JULYFS_TEST_POSTGRES"))
			return nil
		},
		// [postgres]: a PostgreSQL server is set (always in CI).
		Condition: func(cond string) (bool, error) {
			if cond == "postgres" {
				return os.Getenv("JULYFS_TEST_POSTGRES") != "", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

// delegations counts the commands run handed to julyfsd.
var delegations atomic.Int64

// run runs julyfs in-process as main does, except that a command handed to
// julyfsd runs the julyfsd built for the test as a child process on the
// same streams (exec would replace the test) and its exit status is
// returned as is.
func run(t *testing.T, ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	delegated := -1
	h := julyfscli.Heavy{Delegate: func(c *cli.Context, args []string) error {
		delegations.Add(1)
		_, julyfsd := built(t)
		cmd := exec.CommandContext(c.Context, julyfsd, args...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = c.App.Reader, c.App.Writer, c.App.ErrWriter
		cmd.WaitDelay = 5 * time.Second
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
			delegated = 0
		case errors.As(err, &ee) && ee.ExitCode() > 0:
			delegated = ee.ExitCode()
			return clirun.ErrSilent
		default:
			return err
		}
		return nil
	}}
	code := julyfscli.Run(ctx, args, stdin, stdout, stderr, h)
	if delegated >= 0 {
		return delegated
	}
	return code
}
