package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/julyfs/julyfs/internal/julyfscli"
	"github.com/julyfs/julyfs/internal/julyfscli/full"
)

// TestMain lets the scripts run this test binary as julyfs with every
// command in-process, as julyfsd runs them.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"julyfs": func() { julyfscli.Main(full.Heavy()) },
	})
}

// TestScripts runs julyfs's CLI script tests (../julyfs/testdata/script)
// on julyfsd: it is the same command line, with the heavy commands (index
// build, search --index) carried out here rather than handed on.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "../julyfs/testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("JULYFSD", "/nonexistent/julyfsd-must-not-be-needed")
			env.Setenv("JULYFS_TEST_POSTGRES", os.Getenv("JULYFS_TEST_POSTGRES"))
			return nil
		},
		// [postgres]: as in cmd/julyfs's TestScripts.
		Condition: func(cond string) (bool, error) {
			if cond == "postgres" {
				return os.Getenv("JULYFS_TEST_POSTGRES") != "", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}
