package julyfscli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urfave/cli/v2"
)

// TestDelegation checks which command lines julyfs hands to julyfsd (with
// the arguments as typed) and which it runs itself: help, usage errors and
// search without --index stay in-process.
func TestDelegation(t *testing.T) {
	mount := alphaMount(t)
	tests := []struct {
		args      []string
		delegated bool
		code      int
		stdout    string // a substring of stdout
		stderr    string // a substring of stderr
	}{
		{args: []string{"mount", "--mount", "/=temp:", "/mnt/x"}, delegated: true},
		{args: []string{"mount", "/mnt/x", "--mount", "/=temp:", "--index", "idx"}, delegated: true},
		{args: []string{"unmount", "--lazy", "/mnt/x"}, delegated: true},
		{args: []string{"index", "build", mount, "--index", "idx"}, delegated: true},
		{args: []string{"search", mount, "alpha", "--index", "idx", "--max", "3"}, delegated: true},
		{args: []string{"search", "--index=idx", mount, "alpha"}, delegated: true},
		{args: []string{"search", mount, "alpha"}},
		{args: []string{"search", mount, "alpha", "--rebuild"}},
		{args: []string{"mount", "--help"}, stdout: "--entry-timeout value"},
		{args: []string{"help", "mount"}, stdout: "fusermount3"},
		{args: []string{"index", "--help"}, stdout: "build"},
		{args: []string{"index"}, stdout: "build"},
		{args: []string{"index", "build", "--help"}, stdout: "--max-file-size BYTES"},
		{args: []string{"unmount", "-h"}, stdout: "--lazy"},
		{args: []string{"search", "--help"}, stdout: "--index DIR"},
		{args: []string{"mount", "--mount", "/=temp:"}, code: 2, stderr: "mount takes one directory, got 0 arguments"},
		{args: []string{"unmount"}, code: 2, stderr: "unmount takes one directory"},
		{args: []string{"index", "build", mount}, code: 1, stderr: `Required flag "index" not set`}, // as before the split
		{args: []string{"index", "build", mount, "--index", "i", "x"}, code: 2, stderr: "index build takes no arguments"},
		{args: []string{"search", mount, "--index", "i"}, code: 2, stderr: "search takes QUERY [PATH], got 0 arguments"},
	}
	for _, tt := range tests {
		var got []string
		h := Heavy{Delegate: func(c *cli.Context, args []string) error {
			got = args
			return nil
		}}
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"julyfs"}, tt.args...), nil, &stdout, &stderr, h)
		if tt.delegated {
			assert.True(t, slices.Equal(got, tt.args), "julyfs %q: delegated %q, want the arguments as typed", tt.args, got)
		} else {
			assert.Nil(t, got, "julyfs %q: delegated to julyfsd, want it run in-process", tt.args)
		}
		assert.Equal(t, tt.code, code, "julyfs %q: exit", tt.args)
		assert.Contains(t, stdout.String(), tt.stdout, "julyfs %q: stdout", tt.args)
		assert.Contains(t, stderr.String(), tt.stderr, "julyfs %q: stderr", tt.args)
	}
}

// TestFindCompanion checks where julyfs looks for julyfsd and the error
// when it is nowhere.
func TestFindCompanion(t *testing.T) {
	bin := t.TempDir()
	fake := filepath.Join(bin, Companion)
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755))
	empty := t.TempDir()

	t.Setenv("JULYFSD", "")
	t.Setenv("PATH", empty)
	_, err := FindCompanion("julyfs mount")
	want := "julyfs mount needs julyfsd, the companion that holds FUSE and the search index: " +
		"go install github.com/julyfs/julyfs/cmd/julyfsd@latest (or set JULYFSD to its path)"
	assert.EqualError(t, err, want, "no julyfsd")

	t.Setenv("PATH", empty+":"+bin)
	p, err := FindCompanion("julyfs mount")
	assert.NoError(t, err, "julyfsd on PATH")
	assert.Equal(t, fake, p, "julyfsd on PATH")

	other := filepath.Join(t.TempDir(), "my-julyfsd")
	require.NoError(t, os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755))
	t.Setenv("JULYFSD", other)
	p, err = FindCompanion("julyfs mount")
	assert.NoError(t, err, "JULYFSD=%s", other)
	assert.Equal(t, other, p, "JULYFSD=%s", other)
	t.Setenv("JULYFSD", filepath.Join(empty, "nope"))
	_, err = FindCompanion("julyfs index build")
	if assert.Error(t, err, "JULYFSD naming nothing") {
		assert.True(t, strings.HasPrefix(err.Error(), "julyfs index build needs julyfsd: JULYFSD="+filepath.Join(empty, "nope")+": "), "JULYFSD naming nothing: %v", err)
	}
	t.Setenv("JULYFSD", empty)
	_, err = FindCompanion("julyfs mount")
	if assert.Error(t, err, "JULYFSD naming a directory") {
		assert.Contains(t, err.Error(), "is a directory", "JULYFSD naming a directory")
	}
}

// TestExecCompanionLoop checks that a julyfs started as julyfsd refuses to
// hand a command on again.
func TestExecCompanionLoop(t *testing.T) {
	t.Setenv(delegatedEnv, "1")
	err := ExecCompanion("julyfs mount", []string{"mount", "/mnt/x"})
	if assert.Error(t, err, "ExecCompanion with %s set", delegatedEnv) {
		assert.Contains(t, err.Error(), "must be the julyfsd executable", "ExecCompanion with %s set", delegatedEnv)
	}
}
