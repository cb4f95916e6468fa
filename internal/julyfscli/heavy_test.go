package julyfscli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
		switch {
		case tt.delegated && !slices.Equal(got, tt.args):
			t.Errorf("julyfs %q: delegated %q, want the arguments as typed", tt.args, got)
		case !tt.delegated && got != nil:
			t.Errorf("julyfs %q: delegated to julyfsd, want it run in-process", tt.args)
		}
		if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("julyfs %q: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
				tt.args, code, stdout.String(), stderr.String(), tt.code, tt.stdout, tt.stderr)
		}
	}
}

// TestFindCompanion checks where julyfs looks for julyfsd and the error
// when it is nowhere.
func TestFindCompanion(t *testing.T) {
	bin := t.TempDir()
	fake := filepath.Join(bin, Companion)
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()

	t.Setenv("JULYFSD", "")
	t.Setenv("PATH", empty)
	_, err := FindCompanion("julyfs mount")
	want := "julyfs mount needs julyfsd, the companion that holds FUSE and the search index: " +
		"go install github.com/julyfs/julyfs/cmd/julyfsd@latest (or set JULYFSD to its path)"
	if err == nil || err.Error() != want {
		t.Errorf("no julyfsd: %v, want %q", err, want)
	}

	t.Setenv("PATH", empty+":"+bin)
	if p, err := FindCompanion("julyfs mount"); err != nil || p != fake {
		t.Errorf("julyfsd on PATH: %q, %v; want %q", p, err, fake)
	}

	other := filepath.Join(t.TempDir(), "my-julyfsd")
	if err := os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("JULYFSD", other)
	if p, err := FindCompanion("julyfs mount"); err != nil || p != other {
		t.Errorf("JULYFSD=%s: %q, %v", other, p, err)
	}
	t.Setenv("JULYFSD", filepath.Join(empty, "nope"))
	if _, err := FindCompanion("julyfs index build"); err == nil ||
		!strings.HasPrefix(err.Error(), "julyfs index build needs julyfsd: JULYFSD="+filepath.Join(empty, "nope")+": ") {
		t.Errorf("JULYFSD naming nothing: %v", err)
	}
	t.Setenv("JULYFSD", empty)
	if _, err := FindCompanion("julyfs mount"); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("JULYFSD naming a directory: %v", err)
	}
}

// TestExecCompanionLoop checks that a julyfs started as julyfsd refuses to
// hand a command on again.
func TestExecCompanionLoop(t *testing.T) {
	t.Setenv(delegatedEnv, "1")
	err := ExecCompanion("julyfs mount", []string{"mount", "/mnt/x"})
	if err == nil || !strings.Contains(err.Error(), "must be the julyfsd executable") {
		t.Errorf("ExecCompanion with %s set: %v", delegatedEnv, err)
	}
}
