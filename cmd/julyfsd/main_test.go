package main

import (
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
			return nil
		},
	})
}
