package grepscan

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func scanLines(t *testing.T, pattern string, fold bool, data string, stopAfter int) []string {
	t.Helper()
	m, err := Compile(pattern, fold)
	require.NoError(t, err, "Compile(%q)", pattern)
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
		assert.Equal(t, c.want, scanLines(t, c.pattern, c.fold, c.data, c.stop), "Scan(%q, fold %v) on %q", c.pattern, c.fold, c.data)

	}
}
