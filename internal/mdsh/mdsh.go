// Package mdsh reads the shell commands out of a Markdown document's sh
// code blocks, so that a test can run the commands a README shows and
// keep it true.
//
// It understands the simple shell the READMEs use: one command a line,
// words separated by spaces and grouped by single quotes, a comment after
// '#' (anywhere on the line: commands cannot contain '#'), and an
// `echo WORDS | ` prefix that feeds WORDS and a newline to the command's
// standard input. Blocks fenced as anything but ```sh are not read, so a
// command a test cannot run (one that serves until stopped, or needs
// FUSE) goes in a ```text block. The package has no state.
package mdsh

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Command is one command line of a sh block.
type Command struct {
	Line    string   // the line as written
	Args    []string // the words; Args[0] is the program
	Stdin   string   // what `echo X | ` feeds it: "X\n"; "" without echo
	Comment string   // the text after '#', trimmed
}

var shBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")

// Commands returns the lines of markdown's sh blocks that run prog, in
// document order. Other lines (comments, mkdir, go run) are left out. A
// line whose quotes do not close is an error naming it.
func Commands(markdown, prog string) ([]Command, error) {
	var cmds []Command
	for _, b := range shBlock.FindAllStringSubmatch(markdown, -1) {
		for line := range strings.SplitSeq(b[1], "\n") {
			text, comment, _ := strings.Cut(line, "#")
			text = strings.TrimSpace(text)
			stdin := ""
			if echo, rest, ok := strings.Cut(text, " | "); ok && strings.HasPrefix(echo, "echo ") {
				stdin, text = strings.TrimPrefix(echo, "echo ")+"\n", rest
			}
			if !strings.HasPrefix(text, prog+" ") && text != prog {
				continue
			}
			args, err := Words(text)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", line, err)
			}
			cmds = append(cmds, Command{Line: line, Args: args, Stdin: stdin, Comment: strings.TrimSpace(comment)})
		}
	}
	return cmds, nil
}

// ReadFile returns the commands that run prog in the sh blocks of the
// Markdown file name, as Commands does.
func ReadFile(name, prog string) ([]Command, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	cmds, err := Commands(string(b), prog)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return cmds, nil
}

// Words splits a command line as sh does for simple words: spaces and
// tabs separate words and single quotes group; a pair of quotes with
// nothing between them is an empty word. There are no other quotes or
// escapes.
func Words(s string) ([]string, error) {
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
