package mdsh

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"julyfs ls  /", []string{"julyfs", "ls", "/"}},
		{"grep 'func New' /\t-i", []string{"grep", "func New", "/", "-i"}},
		{"call x '{\"path\":\"/a b\"}'", []string{"call", "x", `{"path":"/a b"}`}},
		{"a '' b", []string{"a", "", "b"}},
		{"a'b c'd e", []string{"ab cd", "e"}},
	}
	for _, tt := range tests {
		got, err := Words(tt.in)
		assert.NoError(t, err, "Words(%q)", tt.in)
		assert.Equal(t, tt.want, got, "Words(%q)", tt.in)
	}
	got, err := Words("a 'b")
	assert.Error(t, err, "Words(%q) = %q, want an error", "a 'b", got)
}

func TestCommands(t *testing.T) {
	doc := "# Title\n\n```sh\n" +
		"julyfs ls --mount /=temp: /     # children of /\n" +
		"mkdir -p /tmp/x\n" +
		"echo hello | julyfs write --mount /=temp: /a   # stdin to a file\n" +
		"julyfsx nope\n" +
		"# julyfs commented out\n" +
		"julyfs\n" +
		"```\n\n```text\njulyfs mount /mnt   # not run\n```\n\n" +
		"```sh\njulyfs cat --mount /=temp: /nope   # not found: /nope\n```\n"
	got, err := Commands(doc, "julyfs")
	require.NoError(t, err)
	want := []Command{
		{Line: "julyfs ls --mount /=temp: /     # children of /", Args: []string{"julyfs", "ls", "--mount", "/=temp:", "/"}, Comment: "children of /"},
		{Line: "echo hello | julyfs write --mount /=temp: /a   # stdin to a file", Args: []string{"julyfs", "write", "--mount", "/=temp:", "/a"}, Stdin: "hello\n", Comment: "stdin to a file"},
		{Line: "julyfs", Args: []string{"julyfs"}},
		{Line: "julyfs cat --mount /=temp: /nope   # not found: /nope", Args: []string{"julyfs", "cat", "--mount", "/=temp:", "/nope"}, Comment: "not found: /nope"},
	}
	assert.Equal(t, want, got, "Commands")
	_, err = Commands("```sh\njulyfs grep 'x /\n```\n", "julyfs")
	assert.Error(t, err, "Commands with an unclosed quote: no error")
}

func TestReadFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "README.md")
	require.NoError(t, os.WriteFile(name, []byte("```sh\njuly tools x   # the tools\n```\n"), 0o644))
	got, err := ReadFile(name, "july")
	want := []Command{{Line: "july tools x   # the tools", Args: []string{"july", "tools", "x"}, Comment: "the tools"}}
	assert.NoError(t, err, "ReadFile")
	assert.Equal(t, want, got, "ReadFile")
	require.NoError(t, os.WriteFile(name, []byte("```sh\njuly call x '{\n```\n"), 0o644))
	_, err = ReadFile(name, "july")
	if assert.Error(t, err, "ReadFile with an unclosed quote, want an error naming the file") {
		assert.True(t, strings.HasPrefix(err.Error(), name+": "), "ReadFile with an unclosed quote: %v, want an error naming the file", err)
	}
	_, err = ReadFile(filepath.Join(t.TempDir(), "nope.md"), "july")
	assert.True(t, os.IsNotExist(err), "ReadFile of a missing file: %v, want not exist", err)
}
