package tools

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// refNumberLines is Read's rendering as it was before streaming (the
// whole file in memory), kept as the reference for FuzzNumberLines.
func refNumberLines(p string, data []byte, offset, limit int, opts Options) string {
	if len(data) == 0 {
		return "[" + p + " is empty]"
	}
	total := bytes.Count(data, []byte{'\n'})
	if data[len(data)-1] != '\n' {
		total++
	}
	if offset < 1 {
		offset = 1
	}
	if offset > total {
		return fmt.Sprintf("[offset %d is past the end of %s (%s)]", offset, p, plural(total, "line"))
	}
	userLimit := limit > 0
	if limit <= 0 {
		limit = opts.MaxReadLines
	}
	var b strings.Builder
	n, last := 0, offset-1
	byteCut := false
	for line := range bytes.Lines(data) {
		n++
		if n < offset {
			continue
		}
		if n >= offset+limit {
			break
		}
		s := strings.TrimRight(string(bytes.TrimSuffix(line, []byte{'\n'})), "\r")
		s = cutLine(s, opts.MaxLineLength)
		entry := fmt.Sprintf("%6d\t%s", n, s)
		if b.Len()+len(entry)+1 > opts.MaxOutputBytes && n > offset {
			byteCut = true
			break
		}
		if n > offset {
			b.WriteByte('\n')
		}
		b.WriteString(entry)
		last = n
	}
	if last < total {
		why := "line limit"
		switch {
		case byteCut:
			why = fmt.Sprintf("%d-byte output limit", opts.MaxOutputBytes)
		case userLimit:
			why = "limit"
		}
		cutNotice(&b, fmt.Sprintf("Showing lines %d-%d of %d (%s). Use offset=%d to read more.", offset, last, total, why, last+1))
	}
	return b.String()
}

// FuzzNumberLines checks the streaming line reader (with a 16-byte buffer,
// so lines cross it) against the in-memory rendering it replaced.
func FuzzNumberLines(f *testing.F) {
	for _, s := range []string{"", "a", "a\n", "a\r\n\r\nb", "\r\r\r\n", strings.Repeat("x", 40) + "\r\n" + strings.Repeat("é", 20), "one\ntwo\nthree\n"} {
		f.Add([]byte(s), 1, 0, uint8(5))
	}
	f.Fuzz(func(t *testing.T, data []byte, offset, limit int, maxLine uint8) {
		opts := Options{MaxLineLength: int(maxLine%40) + 1, MaxReadLines: 7, MaxOutputBytes: 200}.withDefaults()
		if limit > 1<<20 || offset > 1<<20 {
			return // the reference's offset+limit would overflow
		}
		want := refNumberLines("/f", data, offset, limit, opts)
		got, err := numberLines("/f", bufio.NewReaderSize(bytes.NewReader(data), 16), offset, limit, opts)
		require.NoError(t, err)
		require.Equal(t, want, got, "numberLines(%q, %d, %d, max %d)", data, offset, limit, opts.MaxLineLength)
	})
}
