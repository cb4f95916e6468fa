package grepscan

import (
	"fmt"
	"slices"
	"testing"
)

func scanLines(t *testing.T, pattern string, fold bool, data string, stopAfter int) []string {
	t.Helper()
	m, err := Compile(pattern, fold)
	if err != nil {
		t.Fatalf("Compile(%q): %v", pattern, err)
	}
	var out []string
	m.eachLine([]byte(data), func(n int, line []byte) bool {
		out = append(out, fmt.Sprintf("%d:%s", n, line))
		return stopAfter <= 0 || len(out) < stopAfter
	})
	return out
}

func TestScan(t *testing.T) {
	for _, c := range []struct {
		pattern string
		fold    bool
		data    string
		stop    int
		want    []string
	}{
		{"b", false, "a\nb\nc\nb", 0, []string{"2:b", "4:b"}},
		{"x", false, "x\r\ny\r\nx", 0, []string{"1:x\r", "3:x"}},
		{`x\r$`, false, "x\r\nx\n", 0, []string{"1:x\r"}},
		{"^$", false, "a\n\nb\n", 0, []string{"2:"}},
		{"^", false, "a\nb\n", 0, []string{"1:a", "2:b"}},
		{"^", false, "", 0, nil},
		{"^", false, "\n", 0, []string{"1:"}},
		{"end", false, "start\nthe end", 0, []string{"2:the end"}},
		{"todo", true, "TODO\nToDo\nnope\n", 0, []string{"1:TODO", "2:ToDo"}},
		{"kelvin", true, "\u212aelvin\n", 0, []string{"1:\u212aelvin"}},
		{"a|b", false, "a\nb\na\n", 2, []string{"1:a", "2:b"}},
		{"one", false, "one\none\none\n", 1, []string{"1:one"}},
		{"a\nb", false, "a\nb\n", 0, nil},
	} {
		if got := scanLines(t, c.pattern, c.fold, c.data, c.stop); !slices.Equal(got, c.want) {
			t.Errorf("Scan(%q, fold %v) on %q = %q, want %q", c.pattern, c.fold, c.data, got, c.want)
		}
	}
}
