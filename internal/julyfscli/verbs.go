package julyfscli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/vfs"
)

func lsCommand() *cli.Command {
	return &cli.Command{
		Name:      "ls",
		Usage:     "list the immediate children of a directory",
		ArgsUsage: "[PATH]",
		Description: `Prints the files and directories directly under PATH (default /), one
absolute path per line, sorted. With -l each line is KIND SIZE MTIME PATH.
ls of a file prints the file; ls of a missing path fails with not found.

Examples:
   julyfs ls --mount /=local:. /
   julyfs ls -l --mount /=local:. /docs
   julyfs ls / --mount /repo=local:./src --mount /notes=temp:`,
		Flags: withVerbFlags(
			&cli.BoolFlag{Name: "l", Usage: "long format: kind, size, modification time, path"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return Usagef(c, "ls takes one PATH, got %d arguments", c.NArg())
			}
			fsys, closeTree, err := OpenTree(c)
			if err != nil {
				return err
			}
			defer closeTree()
			p := vfs.Clean(vfs.ParseDisplayPath(c.Args().First()))
			long := c.Bool("l")
			out := newOutput(c)
			listed := false
			for e, err := range fsys.List(c.Context, p) {
				if err != nil {
					return out.done(err)
				}
				listed = true
				line := vfs.DisplayPath(e.Path)
				if long {
					info, err := fsys.Stat(c.Context, e.Path)
					if err != nil {
						return out.done(err)
					}
					if info.Kind == vfs.KindMissing && !e.Link { // gone since listed
						info = vfs.FileInfo{Path: e.Path, Kind: e.Kind}
					}
					line = longLine(info)
					if e.Link {
						line = linkLine(c.Context, fsys, e.Path, info)
					}
				}
				if !out.line(line) {
					break
				}
			}
			if !listed {
				// An empty listing is an empty directory, a file or nothing:
				// say which, as ls(1) does.
				info, err := fsys.Stat(c.Context, p)
				if err != nil {
					return out.done(err)
				}
				switch info.Kind {
				case vfs.KindMissing:
					return out.done(vfs.NotFound(p))
				case vfs.KindFile:
					line := vfs.DisplayPath(p)
					if long {
						line = longLine(info)
					}
					out.line(line)
				}
			}
			return out.done(nil)
		},
	}
}

// longLine renders an ls -l line: kind, size, mtime, path.
func longLine(info vfs.FileInfo) string {
	kind, size := "file", strconv.FormatInt(info.Size, 10)
	if info.Kind == vfs.KindDir {
		kind, size = "dir", "-"
	}
	return fmt.Sprintf("%-4s %10s  %-19s  %s", kind, size, formatTime(info.ModTime), vfs.DisplayPath(info.Path))
}

// linkLine renders an ls -l line for the link at p, which info (Stat,
// which follows it) describes: kind "link", the link's own mtime, and its
// target, as ls(1) shows it ("-> ?" when the tree cannot read it).
func linkLine(ctx context.Context, fsys vfs.FileSystem, p string, info vfs.FileInfo) string {
	target, err := vfs.Readlink(ctx, fsys, p)
	if err != nil {
		target = "?"
	} else {
		target = vfs.DisplayPath(target)
	}
	mtime := info.LinkModTime
	if mtime.IsZero() {
		mtime = info.ModTime
	}
	return fmt.Sprintf("%-4s %10s  %-19s  %s -> %s", "link", "-", formatTime(mtime), vfs.DisplayPath(p), target)
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format(time.DateTime)
}

func statCommand() *cli.Command {
	return &cli.Command{
		Name:      "stat",
		Usage:     "describe a path: kind, size, modification time, etag",
		ArgsUsage: "PATH",
		Description: `Prints one "field: value" line each for path, kind (file or directory), size
in bytes, mtime (RFC 3339) and etag (an opaque version string that changes
when the contents do). A missing path fails with not found.

Examples:
   julyfs stat --mount /=local:./docs /guide.md
   julyfs stat /repo --mount /repo=local:./src`,
		Flags: verbFlags(),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return Usagef(c, "stat takes one PATH, got %d arguments", c.NArg())
			}
			fsys, closeTree, err := OpenTree(c)
			if err != nil {
				return err
			}
			defer closeTree()
			p := vfs.Clean(vfs.ParseDisplayPath(c.Args().First()))
			info, err := fsys.Stat(c.Context, p)
			if err != nil {
				return err
			}
			if info.Kind == vfs.KindMissing {
				return vfs.NotFound(p)
			}
			mtime := "-"
			if !info.ModTime.IsZero() {
				mtime = info.ModTime.Format(time.RFC3339Nano)
			}
			etag := info.ETag
			if etag == "" {
				etag = "-"
			}
			out := newOutput(c)
			out.line("path:  " + vfs.DisplayPath(info.Path))
			out.line("kind:  " + info.Kind.String())
			out.line("size:  " + strconv.FormatInt(info.Size, 10))
			out.line("mtime: " + mtime)
			out.line("etag:  " + etag)
			return out.done(nil)
		},
	}
}

func catCommand() *cli.Command {
	return &cli.Command{
		Name:      "cat",
		Usage:     "print the contents of files",
		ArgsUsage: "PATH...",
		Description: `Prints each file's bytes as they are, one after another. A path that cannot be
read is reported on stderr and the others are still printed; the exit
status is then 1.

Examples:
   julyfs cat --mount /=local:./docs /guide.md
   julyfs cat /a.txt /b.txt --mount /=local:.`,
		Flags: verbFlags(),
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return Usagef(c, "cat needs at least one PATH")
			}
			fsys, closeTree, err := OpenTree(c)
			if err != nil {
				return err
			}
			defer closeTree()
			out := newOutput(c)
			var errs []error
			for _, p := range c.Args().Slice() {
				ok, err := catFile(c.Context, fsys, vfs.Clean(vfs.ParseDisplayPath(p)), out)
				if err != nil {
					errs = append(errs, err)
				}
				if !ok {
					break
				}
			}
			return out.done(errors.Join(errs...))
		},
	}
}

// catPiece is how much of a file cat holds at once from a tree that reads
// by range.
const catPiece = 1 << 20

// catFile writes the file at p to out: in pieces of catPiece from a tree
// that reads by range (so a file of gigabytes costs one piece), else read
// whole. ok is false when out can take no more.
func catFile(ctx context.Context, fsys vfs.FileSystem, p string, out *output) (ok bool, err error) {
	_, opener := fsys.(vfs.FileOpener)
	_, ranged := fsys.(vfs.RangeReader)
	if !opener && !ranged {
		data, err := fsys.Read(ctx, p)
		if err != nil {
			return true, err
		}
		return out.write(data), nil
	}
	r, err := vfs.OpenFile(ctx, fsys, p)
	if err != nil {
		return true, err
	}
	defer r.Close()
	buf := make([]byte, min(r.Size(), catPiece))
	for off := int64(0); off < r.Size(); {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), r.Size()-off)], off)
		if n > 0 && !out.write(buf[:n]) {
			return false, nil
		}
		off += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return true, err
		}
	}
	return true, nil
}

func globCommand() *cli.Command {
	return &cli.Command{
		Name:      "glob",
		Usage:     "find files and directories by pattern",
		ArgsUsage: "PATTERN [DIR]",
		Description: `Prints the paths under DIR (default /) whose path relative to DIR matches
PATTERN, sorted. '*' and '?' stay within one path segment, '**' crosses
directories ('**/*.go' also matches a.go at the top), {a,b} alternates and
[abc] is a class. A pattern that starts with / is matched from the root:
'/repo/**/*.go'. Quote patterns so the shell does not expand them.

Examples:
   julyfs glob --mount /=local:. '**/*.md'
   julyfs glob '*.go' /src --mount /=local:.          # only directly under /src
   julyfs glob --mount /repo=local:./src --mount /notes=temp: '/repo/**/*.go'`,
		Flags: verbFlags(),
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 || c.NArg() > 2 {
				return Usagef(c, "glob takes PATTERN [DIR], got %d arguments", c.NArg())
			}
			fsys, closeTree, err := OpenTree(c)
			if err != nil {
				return err
			}
			defer closeTree()
			out := newOutput(c)
			for e, err := range fsys.Glob(c.Context, c.Args().Get(0), vfs.Clean(vfs.ParseDisplayPath(c.Args().Get(1)))) {
				if err != nil {
					return out.done(err)
				}
				if !out.line(vfs.DisplayPath(e.Path)) {
					break
				}
			}
			return out.done(nil)
		},
	}
}

func grepCommand() *cli.Command {
	return &cli.Command{
		Name:      "grep",
		Usage:     "search file contents with a regular expression",
		ArgsUsage: "PATTERN [PATH]",
		Description: `Prints every line under PATH (a file or a directory, default /) that matches
PATTERN, as path:line:text, sorted by path then line number. PATTERN is Go
RE2 syntax (https://golang.org/s/re2syntax): 'TODO|FIXME', 'func \w+\('.
Binary files are skipped.

A matching line longer than --max-line-bytes (default 2000) is printed cut
to that many bytes (at a UTF-8 boundary) followed by "... [line cut: N
bytes]", N its whole length, as the Grep tool shows it: a 200 MB line
prints 2 KB, and trees that stream (local, hostfiles) never hold more of
it than a window of the scan. --max-line-bytes 0 prints whole lines.

--glob filters files: a pattern without a slash matches the file name at any
depth ('*.go'), one with a slash is relative to PATH ('src/**/*.go').

Like grep, julyfs grep exits 0 when a line matched, 1 when none did (with
no output) and prints errors on stderr with exit 1, e.g.
"invalid grep pattern: (". A pattern that starts with '-' goes after '--'.

Examples:
   julyfs grep --mount /=local:. 'TODO|FIXME' / --glob '*.md' -i --max 50
   julyfs grep 'func main' / --glob '*.go' --mount /repo=local:./src --mount /notes=temp:
   julyfs grep --mount /=local:. -- '-v' /`,
		Flags: withVerbFlags(
			&cli.StringFlag{Name: "glob", Aliases: []string{"g"}, Usage: "only files matching `GLOB` ('*.go': file name at any depth)"},
			&cli.BoolFlag{Name: "ignore-case", Aliases: []string{"i"}, Usage: "match without regard to case"},
			&cli.IntFlag{Name: "max", Usage: "stop after `N` matching lines (0: no limit)"},
			&cli.IntFlag{Name: "max-line-bytes", Value: defaultMaxLineBytes, Usage: "print at most `N` bytes of a matching line, then \"... [line cut: LEN bytes]\" (0: whole lines)"},
		),
		Action: func(c *cli.Context) error {
			if err := checkQueryArgs(c, "grep takes PATTERN [PATH]"); err != nil {
				return err
			}
			maxLine := c.Int("max-line-bytes")
			if maxLine < 0 {
				return Usagef(c, "--max-line-bytes must not be negative")
			}
			fsys, closeTree, err := OpenTree(c)
			if err != nil {
				return err
			}
			defer closeTree()
			q := vfs.GrepQuery{
				Pattern:         c.Args().Get(0),
				Path:            vfs.Clean(vfs.ParseDisplayPath(c.Args().Get(1))),
				Glob:            c.String("glob"),
				CaseInsensitive: c.Bool("ignore-case"),
				MaxResults:      c.Int("max"),
			}
			if maxLine > 0 {
				// One byte more than is printed, so a line of exactly
				// maxLine bytes is known to be whole.
				q.MaxLineBytes = maxLine + 1
			}
			out := newOutput(c)
			hits := 0
			buf := make([]byte, 0, 256)
			for r, err := range fsys.Grep(c.Context, q) {
				if err != nil {
					return out.done(err)
				}
				hits++
				buf = append(buf[:0], vfs.DisplayPath(r.Path)...)
				buf = append(buf, ':')
				buf = strconv.AppendInt(buf, int64(r.LineNumber), 10)
				buf = append(buf, ':')
				buf = appendLine(buf, r, maxLine)
				buf = append(buf, '\n')
				if !out.write(buf) {
					break
				}
			}
			if err := out.done(nil); err != nil {
				return err
			}
			if hits == 0 {
				return errNoMatch
			}
			return nil
		},
	}
}

// defaultMaxLineBytes is julyfs grep's default line cap: the Grep tool's
// default MaxLineLength.
const defaultMaxLineBytes = 2000

// appendLine appends r's line to buf, cut to max bytes (0: whole) at a
// UTF-8 boundary and marked with its whole length the way the Grep tool
// marks it: "... [line cut: N bytes]". A tree that cut the line itself
// says its length in r.LineBytes; one that ignored the cap returned it
// whole, and it is cut here.
func appendLine(buf []byte, r vfs.GrepResult, max int) []byte {
	full := len(r.Line)
	if r.LineBytes > 0 {
		full = r.LineBytes
	}
	if max <= 0 || full <= max {
		return append(buf, r.Line...)
	}
	cut := min(max, len(r.Line))
	for cut > 0 && cut < len(r.Line) && r.Line[cut]&0xC0 == 0x80 {
		cut--
	}
	buf = append(buf, r.Line[:cut]...)
	buf = append(buf, "... [line cut: "...)
	buf = strconv.AppendInt(buf, int64(full), 10)
	return append(buf, " bytes]"...)
}

func writeCommand() *cli.Command {
	return &cli.Command{
		Name:      "write",
		Usage:     "create or replace a file with what is on standard input",
		ArgsUsage: "PATH",
		Description: `Reads standard input to the end and writes it to PATH, creating the file (and
the directories above it) or replacing it. Prints nothing on success. A
read-only mount fails with "read-only mount: PATH".

--if-match ETAG makes the write a compare-and-swap: it replaces the file
only if its etag (as "julyfs stat" prints it) is still ETAG, and then
prints the new etag. Otherwise it fails with "conflict: PATH" (exit 1)
and changes nothing: someone else changed the file since you looked, so
read it again and retry. The check and the write are one atomic step on
hostfiles, local, temp and union trees (another process cannot slip in
between); a plugin tree without conditional writes gets a check, then a
write.

Examples:
   echo hello | julyfs write --mount /=local:./scratch /hello.txt
   julyfs write /notes/today.md --mount /notes=local:./notes < today.md
   etag=$(julyfs stat --mount /host=hostfiles:./state /host/n.md | sed -n 's/^etag: *//p')
   julyfs write --if-match "$etag" --mount /host=hostfiles:./state /host/n.md < n.md`,
		Flags: withVerbFlags(
			&cli.StringFlag{Name: "if-match", Usage: "write only if the file's etag is `ETAG`, else fail with conflict: PATH; print the new etag"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return Usagef(c, "write takes one PATH (the contents come from standard input), got %d arguments", c.NArg())
			}
			ifMatch := c.String("if-match")
			if c.IsSet("if-match") && (ifMatch == "" || ifMatch == "-") {
				return Usagef(c, "--if-match needs the file's etag (julyfs stat prints it); %q is none", ifMatch)
			}
			fsys, closeTree, err := OpenTree(c)
			if err != nil {
				return err
			}
			defer closeTree()
			data, err := io.ReadAll(c.App.Reader)
			if err != nil {
				return fmt.Errorf("reading standard input: %w", err)
			}
			p := vfs.Clean(vfs.ParseDisplayPath(c.Args().First()))
			if ifMatch == "" {
				return fsys.Write(c.Context, p, data)
			}
			etag, err := vfs.WriteIf(c.Context, fsys, p, data, vfs.Precondition{IfMatch: ifMatch})
			if err != nil {
				return err
			}
			if etag == "" {
				etag = "-"
			}
			out := newOutput(c)
			out.line(etag)
			return out.done(nil)
		},
	}
}

func rmCommand() *cli.Command {
	return &cli.Command{
		Name:      "rm",
		Usage:     "delete files",
		ArgsUsage: "PATH...",
		Description: `Deletes each file. A path that cannot be deleted (missing: "not found: PATH";
read-only: "read-only mount: PATH") is reported on stderr, the others are
still deleted, and the exit status is 1.

Examples:
   julyfs rm --mount /=local:./scratch /old.txt
   julyfs rm /a.txt /b.txt --mount /=local:./scratch`,
		Flags: verbFlags(),
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return Usagef(c, "rm needs at least one PATH")
			}
			fsys, closeTree, err := OpenTree(c)
			if err != nil {
				return err
			}
			defer closeTree()
			var errs []error
			for _, p := range c.Args().Slice() {
				if err := fsys.Delete(c.Context, vfs.Clean(vfs.ParseDisplayPath(p))); err != nil {
					errs = append(errs, err)
				}
			}
			return displayErr(errors.Join(errs...))
		},
	}
}

func searchCommand(h Heavy) *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "ranked full-text search (needs an index)",
		ArgsUsage: "QUERY [PATH]",
		Description: `Prints the best matches for QUERY under PATH (default /), best first, one
per line: the path, the score and, when a line of the file matched, its
number and text:

   /repo/net/http/header.go  0.18  L20: // A Header represents the key-value pairs in an HTTP header.

A file found by its path alone has no line. A tree without a search index has no results: search then prints nothing
and exits 0.

With --index DIR the index in DIR serves the search (built, or brought up
to date with the tree, first; see 'julyfs index build').

Examples:
   julyfs search --mount /=local:./docs 'how do I mount' --max 5
   julyfs search --mount /repo=local:./src --index .julyfs/index 'parse http header'`,
		Flags: withVerbFlags(append([]cli.Flag{
			&cli.IntFlag{Name: "max", Value: 10, Usage: "at most `N` results (0: no limit)"},
		}, indexFlags()...)...),
		Action: func(c *cli.Context) error {
			if err := checkQueryArgs(c, "search takes QUERY [PATH]"); err != nil {
				return err
			}
			dir := c.String("index")
			if dir != "" && h.OpenIndex == nil {
				return h.delegate(c, "julyfs search --index")
			}
			fsys, closeTree, err := OpenTree(c)
			if err != nil {
				return err
			}
			defer closeTree()
			if dir != "" {
				f, closeIndex, err := h.OpenIndex(c, fsys, dir)
				if err != nil {
					return err
				}
				defer closeIndex()
				fsys = f
			}
			q := vfs.SearchQuery{
				Query:      c.Args().Get(0),
				Path:       vfs.Clean(vfs.ParseDisplayPath(c.Args().Get(1))),
				MaxResults: c.Int("max"),
			}
			out := newOutput(c)
			for r, err := range fsys.Search(c.Context, q) {
				if err != nil {
					return out.done(err)
				}
				if !out.line(searchLine(r)) {
					break
				}
			}
			return out.done(nil)
		},
	}
}

// searchLine renders a search result: the path, two spaces, the score
// with two decimals, and, when the result has a line, two spaces and
// "L<line>: <snippet>" with the snippet on one line:
//
//	/repo/net/http/header.go  0.18  L20: // A Header represents the key-value pairs in an HTTP header.
func searchLine(r vfs.SearchResult) string {
	s := vfs.DisplayPath(r.Path) + "  " + strconv.FormatFloat(r.Score, 'f', 2, 64)
	if r.LineNumber > 0 {
		s += "  L" + strconv.Itoa(r.LineNumber) + ":"
		if snippet := oneLine(r.Snippet); snippet != "" {
			s += " " + snippet
		}
	}
	return s
}

// oneLine replaces line breaks in s with spaces.
func oneLine(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\n' || c == '\r' {
			b[i] = ' '
		}
	}
	return string(b)
}

// checkQueryArgs checks the arguments grep and search share: one query and
// an optional path (usage names them), and a --max that is not negative.
func checkQueryArgs(c *cli.Context, usage string) error {
	if c.NArg() < 1 || c.NArg() > 2 {
		return Usagef(c, "%s, got %d arguments", usage, c.NArg())
	}
	if c.Int("max") < 0 {
		return Usagef(c, "--max must not be negative")
	}
	return nil
}
