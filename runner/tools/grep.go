package tools

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/julyfs/julyfs/vfs"
)

// Grep output modes: the spec's native result kinds content, files and
// count. files_with_matches (the ripgrep-style name) is accepted as an
// alias of files.
const (
	GrepContent          = "content"
	GrepFiles            = "files"
	GrepCount            = "count"
	GrepFilesWithMatches = "files_with_matches"
)

type grepArgs struct {
	Pattern         string `json:"pattern"`
	Path            string `json:"path"`
	Glob            string `json:"glob"`
	OutputMode      string `json:"output_mode"`
	CaseInsensitive bool   `json:"-i"`
	LineNumbers     *bool  `json:"-n"`
	After           int    `json:"-A"`
	Before          int    `json:"-B"`
	Context         int    `json:"-C"`
	HeadLimit       int    `json:"head_limit"`
	Offset          int    `json:"offset"`
}

// NewGrep returns the Grep tool over the tree's Grep verb, with the
// native pagination on top: output_mode (content, files, count;
// files_with_matches is an alias of files), context lines, head_limit and
// offset.
func NewGrep(fsys vfs.FileSystem, opts Options) *Tool {
	opts = opts.withDefaults()
	return define(Tool{
		Name: NameGrep,
		Description: fmt.Sprintf("Searches file contents with a regular expression (Go RE2 syntax, matched per line). "+
			"output_mode: files (default; files_with_matches is an alias) lists matching files, content shows matching lines as "+
			"path:line:text (with -A/-B/-C context lines as path-line-text), count shows path:count. glob filters files "+
			"(a slash-free pattern matches the name at any depth). head_limit and offset page through the entries "+
			"(matches in content mode, files otherwise); at most %d entries unless head_limit says otherwise.", opts.MaxEntries),
		Schema: object([]string{"pattern"}, map[string]*jsonschema.Schema{
			"pattern":     str("Regular expression (Go RE2 syntax)."),
			"path":        str("File or directory to search (default /)."),
			"glob":        str("Glob filter on file paths, e.g. *.go or src/**/*.ts."),
			"output_mode": enum("What to show (default files; files_with_matches is an alias of files).", GrepContent, GrepFiles, GrepCount, GrepFilesWithMatches),
			"-i":          boolean("Case-insensitive match."),
			"-n":          boolean("Show line numbers in content mode (default true)."),
			"-A":          integer("Lines of context after each match (content mode).", 0),
			"-B":          integer("Lines of context before each match (content mode).", 0),
			"-C":          integer("Lines of context before and after each match (content mode).", 0),
			"head_limit":  integer("Show at most this many entries.", 0),
			"offset":      integer("Skip this many entries first.", 0),
		}),
		Aliases: map[string]string{
			"query": "pattern", "regex": "pattern",
			"outputMode": "output_mode", "headLimit": "head_limit",
			"case_insensitive": "-i", "caseInsensitive": "-i", "ignore_case": "-i",
			"context": "-C", "after": "-A", "before": "-B",
			"include": "glob", "target_directory": "path",
		},
		Effect: EffectRead,
	}, func(ctx context.Context, in grepArgs) (*Result, error) {
		return grep(ctx, fsys, opts, in)
	})
}

func grep(ctx context.Context, fsys vfs.FileSystem, opts Options, in grepArgs) (*Result, error) {
	mode := in.OutputMode
	if mode == "" || mode == GrepFilesWithMatches {
		mode = GrepFiles
	}
	limit := in.HeadLimit
	if limit <= 0 {
		limit = opts.MaxEntries
	}
	// offset and head_limit come from the caller and may be as large as an
	// int holds: every sum below saturates instead of wrapping.
	offset := max(in.Offset, 0)
	in.Offset = offset
	end := satAdd(offset, limit) // one past the last entry shown
	q := vfs.GrepQuery{
		Pattern:         in.Pattern,
		Path:            opts.path(in.Path),
		Glob:            in.Glob,
		CaseInsensitive: in.CaseInsensitive,
		// Lines are shown cut to MaxLineLength (one byte more lets a
		// "\r" go before the cut) and not at all outside content mode:
		// the tree never holds more of a long line than that and its
		// scan window.
		MaxLineBytes: 1,
	}
	// Entries [in.Offset, in.Offset+limit) are shown; one more tells that
	// more exist.
	want := satAdd(end, 1)
	var entries []string // files, or "path:count"
	var hits []vfs.GrepResult
	more := false
	switch mode {
	case GrepContent:
		q.MaxResults = want
		q.MaxLineBytes = satAdd(opts.MaxLineLength, 1)
		for h, err := range fsys.Grep(ctx, q) {
			if err != nil {
				return nil, err
			}
			// Keep only the part of the line that is shown, copied, so a
			// long line (or the buffer it points into) is not retained. A
			// tree that cut the line says how long it was.
			if h.LineBytes > 0 {
				h.Line = cutHead([]byte(h.Line), h.LineBytes, opts.MaxLineLength)
			} else {
				h.Line = strings.Clone(cutLine(strings.TrimSuffix(h.Line, "\r"), opts.MaxLineLength))
			}
			hits = append(hits, h)
		}
		if len(hits) > end {
			more = true
			hits = hits[:end]
		}
		hits = hits[min(in.Offset, len(hits)):]
	default:
		var counts []int
		last := "" // the raw path of the last entry
		for h, err := range fsys.Grep(ctx, q) {
			if err != nil {
				return nil, err
			}
			if n := len(entries); n > 0 && last == h.Path {
				counts[n-1]++
				continue
			}
			if len(entries) == want-1 {
				more = true // every earlier file's count is complete
				break
			}
			entries = append(entries, vfs.DisplayPath(h.Path))
			last = h.Path
			counts = append(counts, 1)
		}
		if mode == GrepCount {
			for i := range entries {
				entries[i] = fmt.Sprintf("%s:%d", entries[i], counts[i])
			}
		}
		entries = entries[min(in.Offset, len(entries)):]
	}

	var b strings.Builder
	shown := len(entries)
	noun := "files"
	if mode == GrepContent {
		noun = "matches"
		var err error
		shown, err = writeContent(ctx, fsys, &b, hits, in, opts)
		if err != nil {
			return nil, err
		}
	} else {
		for i, e := range entries {
			if b.Len()+len(e)+1 > opts.MaxOutputBytes {
				shown = i
				break
			}
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(e)
		}
	}
	total := len(entries)
	if mode == GrepContent {
		total = len(hits)
	}
	switch {
	case total == 0 && in.Offset > 0 && !more:
		return Text(fmt.Sprintf("No matches at offset %d.", in.Offset)), nil
	case total == 0:
		return Text("No matches found."), nil
	case shown < total:
		cutNotice(&b, fmt.Sprintf("Output cut at %d bytes after %s %d-%d. Use offset=%d to see more.",
			opts.MaxOutputBytes, noun, satAdd(offset, 1), satAdd(offset, shown), satAdd(offset, shown)))
	case more:
		cutNotice(&b, fmt.Sprintf("Showing %s %d-%d; more exist. Use offset=%d to see more.",
			noun, satAdd(offset, 1), satAdd(offset, shown), satAdd(offset, shown)))
	}
	return Text(b.String()), nil
}

// maxContext bounds -A, -B and -C.
const maxContext = 1 << 40

// satAdd returns a+b for non-negative a and b, or math.MaxInt when the sum
// overflows.
func satAdd(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// writeContent renders content-mode hits, with context lines when asked,
// and returns how many hits fit under the output cap.
func writeContent(ctx context.Context, fsys vfs.FileSystem, b *strings.Builder, hits []vfs.GrepResult, in grepArgs, opts Options) (int, error) {
	numbers := in.LineNumbers == nil || *in.LineNumbers
	before, after := in.Before, in.After
	if in.Context > 0 {
		before, after = max(before, in.Context), max(after, in.Context)
	}
	// Line numbers plus context must not overflow: no file has more lines
	// than maxContext.
	before, after = min(max(before, 0), maxContext), min(max(after, 0), maxContext)
	// line renders one output line; text is already cut.
	line := func(p string, n int, sep byte, text string) string {
		p = vfs.DisplayPath(p)
		if numbers {
			return fmt.Sprintf("%s%c%d%c%s", p, sep, n, sep, text)
		}
		return fmt.Sprintf("%s%c%s", p, sep, text)
	}
	emit := func(s string) bool {
		if b.Len()+len(s)+1 > opts.MaxOutputBytes && b.Len() > 0 {
			return false
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
		return true
	}
	if before == 0 && after == 0 {
		for i, h := range hits {
			if !emit(line(h.Path, h.LineNumber, ':', h.Line)) {
				return i, nil
			}
		}
		return len(hits), nil
	}
	// With context: one sequential read per file (ranged where the tree
	// can, holding each line only up to the line cut), groups of
	// overlapping windows separated by "--" as grep and ripgrep print
	// them.
	shown := 0
	lastPath, lastLine, cur := "", 0, 0 // cur: lines consumed from the file
	var ls *lineScanner
	closeFile := func() {}
	defer func() { closeFile() }()
	for i := 0; i < len(hits); {
		p := hits[i].Path
		if p != lastPath {
			closeFile()
			r, _, c, err := openText(ctx, fsys, p)
			if err != nil {
				closeFile = func() {}
				return shown, err
			}
			ls, closeFile = &lineScanner{r: r, keep: opts.MaxLineLength + 8}, c
			lastPath, lastLine, cur = p, 0, 0
		}
		// The window of hits i..j-1, whose context overlaps or touches.
		j := i + 1
		for j < len(hits) && hits[j].Path == p && hits[j].LineNumber-before <= hits[j-1].LineNumber+after+1 {
			j++
		}
		from := max(1, hits[i].LineNumber-before, lastLine+1)
		to := hits[j-1].LineNumber + after
		for cur < from-1 {
			_, _, ok, err := ls.next()
			if err != nil {
				return shown, err
			}
			if !ok {
				break
			}
			cur++
		}
		var group bytes.Buffer
		if b.Len() > 0 {
			group.WriteString("--\n")
		}
		k := i
		for n := cur + 1; n <= to; n++ {
			head, full, ok, err := ls.next()
			if err != nil {
				return shown, err
			}
			if !ok {
				break
			}
			cur++
			sep := byte('-')
			for k < j && hits[k].LineNumber < n {
				k++
			}
			if k < j && hits[k].LineNumber == n {
				sep = ':'
				k++
			}
			if n > from {
				group.WriteByte('\n')
			}
			group.WriteString(line(p, n, sep, cutHead(head, full, opts.MaxLineLength)))
		}
		if !emit(strings.TrimPrefix(group.String(), "\n")) {
			return shown, nil
		}
		shown += j - i
		lastLine = cur
		i = j
	}
	return shown, nil
}
