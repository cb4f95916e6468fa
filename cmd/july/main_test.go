package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"july": func() {
			os.Exit(run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// TestScripts runs the script tests in testdata/script: each file is a
// txtar archive of a script and the agent directories it works on.
// $EXAMPLES is the repository's examples directory.
func TestScripts(t *testing.T) {
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	require.NoError(t, err)
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			env.Setenv("EXAMPLES", examples)
			return nil
		},
	})
}
