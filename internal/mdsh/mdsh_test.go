package mdsh

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Words(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if got, err := Words("a 'b"); err == nil {
		t.Errorf("Words(%q) = %q, want an error", "a 'b", got)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	want := []Command{
		{Line: "julyfs ls --mount /=temp: /     # children of /", Args: []string{"julyfs", "ls", "--mount", "/=temp:", "/"}, Comment: "children of /"},
		{Line: "echo hello | julyfs write --mount /=temp: /a   # stdin to a file", Args: []string{"julyfs", "write", "--mount", "/=temp:", "/a"}, Stdin: "hello\n", Comment: "stdin to a file"},
		{Line: "julyfs", Args: []string{"julyfs"}},
		{Line: "julyfs cat --mount /=temp: /nope   # not found: /nope", Args: []string{"julyfs", "cat", "--mount", "/=temp:", "/nope"}, Comment: "not found: /nope"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Commands = %+v,\nwant %+v", got, want)
	}
	if _, err := Commands("```sh\njulyfs grep 'x /\n```\n", "julyfs"); err == nil {
		t.Errorf("Commands with an unclosed quote: no error")
	}
}

func TestReadFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(name, []byte("```sh\njuly tools x   # the tools\n```\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(name, "july")
	want := []Command{{Line: "july tools x   # the tools", Args: []string{"july", "tools", "x"}, Comment: "the tools"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ReadFile = %+v, %v; want %+v", got, err, want)
	}
	if err := os.WriteFile(name, []byte("```sh\njuly call x '{\n```\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(name, "july"); err == nil || !strings.HasPrefix(err.Error(), name+": ") {
		t.Errorf("ReadFile with an unclosed quote: %v, want an error naming the file", err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "nope.md"), "july"); !os.IsNotExist(err) {
		t.Errorf("ReadFile of a missing file: %v, want not exist", err)
	}
}
