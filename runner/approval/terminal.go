package approval

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/julyfs/julyfs/runner/sessions"
)

// MaxAnswer bounds one line read as an answer, in bytes; a longer line
// is read as no answer and asked again.
const MaxAnswer = 4096

// Terminal asks on a terminal: it writes
//
//	Allow StrReplace on /src/x.go? [y/N/a(lways)]
//
// to Out and reads one line from In: y or yes allows the call, a or
// always allows the tool for the rest of the session, n, no or an empty
// line denies it; anything else asks again. The end of In denies the
// call and every later one. One question is asked at a time.
type Terminal struct {
	in  io.Reader
	out io.Writer

	ask   sync.Mutex // one question at a time
	once  sync.Once
	lines chan string // closed at the end of in
}

// NewTerminal returns a Terminal reading answers from in and writing the
// questions to out.
func NewTerminal(in io.Reader, out io.Writer) *Terminal {
	return &Terminal{in: in, out: out}
}

// read reads lines from in into t.lines until its end. Started on the
// first question, it lives until in ends (a read cannot be interrupted,
// so a question given up on (ctx ended) leaves the read pending for the
// next one).
func (t *Terminal) read() {
	br := bufio.NewReaderSize(t.in, MaxAnswer)
	defer close(t.lines)
	for {
		line, err := br.ReadSlice('\n')
		long := err == bufio.ErrBufferFull
		for err == bufio.ErrBufferFull {
			_, err = br.ReadSlice('\n')
		}
		if long {
			t.lines <- "\x00" // over MaxAnswer: not an answer
		} else if len(line) > 0 || err == nil {
			t.lines <- string(line)
		}
		if err != nil {
			return
		}
	}
}

// Ask asks about req on the terminal.
func (t *Terminal) Ask(ctx context.Context, req Request) (Answer, error) {
	t.ask.Lock()
	defer t.ask.Unlock()
	t.once.Do(func() {
		t.lines = make(chan string)
		go t.read()
	})
	if req.Waiting != nil {
		if err := req.Waiting(); err != nil {
			return Answer{}, err
		}
	}
	fmt.Fprintf(t.out, "Allow %s? [y/N/a(lways)] ", req.Summary)
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(t.out)
			return Answer{}, ctx.Err()
		case line, ok := <-t.lines:
			if !ok {
				fmt.Fprintln(t.out)
				return Answer{By: sessions.DecidedByUser, Reason: "no answer came (the terminal's input ended), so it was denied"}, nil
			}
			switch strings.ToLower(strings.TrimSpace(line)) {
			case "y", "yes":
				return Answer{Allow: true, By: sessions.DecidedByUser}, nil
			case "a", "always":
				return Answer{Allow: true, Always: true, By: sessions.DecidedByUser}, nil
			case "", "n", "no":
				return Answer{By: sessions.DecidedByUser, Reason: "the user denied it"}, nil
			}
			fmt.Fprintf(t.out, "Answer y (yes), n (no) or a (always for this session). Allow %s? [y/N/a(lways)] ", req.Summary)
		}
	}
}
