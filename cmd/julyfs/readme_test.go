package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADME runs every julyfs command in the README's sh blocks from the
// repository root, so the README stays true. A command whose comment is a
// contract error ("# read-only mount: /p") must fail with exactly that
// message; every other command must succeed. /tmp/scratch is replaced by
// a temporary directory.
func TestREADME(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	t.Chdir(root)
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	ran := 0
	for _, b := range blocks {
		for _, line := range strings.Split(b[1], "\n") {
			cmd, comment, _ := strings.Cut(line, "#")
			cmd = strings.TrimSpace(strings.ReplaceAll(cmd, "/tmp/scratch", scratch))
			comment = strings.TrimSpace(comment)
			stdin := ""
			if echo, rest, ok := strings.Cut(cmd, " | "); ok && strings.HasPrefix(echo, "echo ") {
				stdin, cmd = strings.TrimPrefix(echo, "echo ")+"\n", rest
			}
			if !strings.HasPrefix(cmd, "julyfs ") {
				continue // go run, scripts/test, mkdir: not julyfs verbs
			}
			args, err := shellWords(cmd)
			if err != nil {
				t.Errorf("README: %s: %v", line, err)
				continue
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), args, strings.NewReader(stdin), &stdout, &stderr)
			ran++
			wantErr := ""
			for _, prefix := range []string{"not found: ", "read-only mount: ", "no mount for path: "} {
				if strings.HasPrefix(comment, prefix) {
					wantErr = comment
				}
			}
			switch {
			case wantErr != "" && (code != 1 || strings.TrimSpace(stderr.String()) != wantErr):
				t.Errorf("README: %s\n  exit %d, stderr %q; want exit 1 and %q", line, code, stderr.String(), wantErr)
			case wantErr == "" && code != 0:
				t.Errorf("README: %s\n  exit %d, stderr %q", line, code, stderr.String())
			}
		}
	}
	if ran < 10 {
		t.Errorf("ran %d README commands; the README's sh blocks were not found", ran)
	}
}

// shellWords splits a command line as sh does for the simple words the
// README uses: spaces separate words, single quotes group.
func shellWords(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // a word has started
	)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unclosed single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
