package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/julyfs/julyfs/vfs"
)

type readArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// NewRead returns the Read tool: the file's lines numbered like `cat -n`
// ("%6d\t<line>"), from offset for limit lines, with a notice when the
// output is cut; a jpeg, png, gif or webp file (by content) is one image
// part.
func NewRead(fsys vfs.FileSystem, opts Options) *Tool {
	opts = opts.withDefaults()
	return define(Tool{
		Name: NameRead,
		Description: fmt.Sprintf("Reads a file. Text comes back with numbered lines (cat -n style); at most %d lines "+
			"unless limit says otherwise, lines longer than %d bytes are cut. Use offset (1-based line) and limit to page "+
			"through large files. jpeg, png, gif and webp images come back as an image. A path that LS, Glob or Grep printed in "+
			"double quotes (Go syntax, for names with control characters or invalid UTF-8) may be passed as printed.", opts.MaxReadLines, opts.MaxLineLength),
		Schema: object([]string{"path"}, map[string]*jsonschema.Schema{
			"path":   str("Path of the file to read."),
			"offset": integer("1-based line number to start reading from (default 1).", 0),
			"limit":  integer("Number of lines to read.", 0),
		}),
		Aliases: map[string]string{"file_path": "path", "filePath": "path", "target_file": "path"},
		Effect:  EffectRead,
	}, func(ctx context.Context, in readArgs) (*Result, error) {
		return read(ctx, fsys, opts, in)
	})
}

// MaxImageBytes bounds an image Read returns whole.
const MaxImageBytes = 20 << 20

// read opens the file for ranged reads where the tree can (vfs.FileOpener
// or vfs.RangeReader), so a Read of a few lines of a large file reads
// little more than those lines and holds at most a buffer and
// MaxOutputBytes of output; other trees are read whole.
func read(ctx context.Context, fsys vfs.FileSystem, opts Options, in readArgs) (*Result, error) {
	p := opts.path(in.Path)
	br, size, done, err := openText(ctx, fsys, p)
	if err != nil {
		return nil, err
	}
	defer done()
	head, err := br.Peek(8000)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	if mime := ImageType(head); mime != "" {
		if size > MaxImageBytes {
			return Errorf("%s is a %s image of %d bytes, more than the %d Read returns", vfs.DisplayPath(p), mime, size, MaxImageBytes), nil
		}
		data, err := io.ReadAll(br)
		if err != nil {
			return nil, err
		}
		return &Result{Content: []Part{{Type: "image", Data: data, MIMEType: mime}}}, nil
	}
	if vfs.IsBinary(head) {
		return Errorf("%s is a binary file (%d bytes); Read shows text and jpeg/png/gif/webp images", vfs.DisplayPath(p), size), nil
	}
	text, err := numberLines(p, br, in.Offset, in.Limit, opts)
	if err != nil {
		return nil, err
	}
	return Text(text), nil
}

// openText opens the file at p for one sequential read: through ranged
// reads where the tree has them (vfs.FileOpener or vfs.RangeReader), so
// memory stays at the buffer's size, else by reading it whole. The reader
// is one of readBufs: done closes the file and returns the reader, so
// nothing may keep a slice of its buffer past done.
func openText(ctx context.Context, fsys vfs.FileSystem, p string) (br *bufio.Reader, size int64, done func(), err error) {
	_, opener := fsys.(vfs.FileOpener)
	_, ranged := fsys.(vfs.RangeReader)
	if opener || ranged {
		f, err := vfs.OpenFile(ctx, fsys, p)
		if err != nil {
			return nil, 0, nil, err
		}
		br = getReadBuf(io.NewSectionReader(f, 0, f.Size()))
		return br, f.Size(), func() { putReadBuf(br); f.Close() }, nil
	}
	data, err := fsys.Read(ctx, p)
	if err != nil {
		return nil, 0, nil, err
	}
	br = getReadBuf(bytes.NewReader(data))
	return br, int64(len(data)), func() { putReadBuf(br) }, nil
}

// readBufSize is the buffer of a Read's reader: the whole of a small file
// in one read(2), larger ones in pieces of this size.
const readBufSize = 64 << 10

// readBufs holds readBufSize readers between calls, so a Read of a small
// file does not allocate (and the garbage collector does not clear) a
// buffer each time.
var readBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufSize) }}

func getReadBuf(r io.Reader) *bufio.Reader {
	br := readBufs.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

func putReadBuf(br *bufio.Reader) {
	br.Reset(nil)
	readBufs.Put(br)
}

// numberLines renders lines [offset, offset+limit) of the text r yields,
// reading it once: lines before offset are skipped, each line is held
// only up to the line cut, and after the last line shown the rest is only
// counted (for the "of N" in the notice).
func numberLines(path string, r *bufio.Reader, offset, limit int, opts Options) (string, error) {
	p := vfs.DisplayPath(path)
	if _, err := r.Peek(1); errors.Is(err, io.EOF) {
		return "[" + p + " is empty]", nil
	}
	if offset < 1 {
		offset = 1
	}
	userLimit := limit > 0
	if limit <= 0 {
		limit = opts.MaxReadLines
	}
	end := satAdd(offset, limit) // first line not shown
	ls := lineScanner{r: r, keep: opts.MaxLineLength + 8}
	var b strings.Builder
	n, last := 0, offset-1
	byteCut := false
	for n+1 < end {
		head, full, ok, err := ls.next()
		if err != nil {
			return "", err
		}
		if !ok {
			break
		}
		n++
		if n < offset {
			continue
		}
		entry := fmt.Sprintf("%6d\t%s", n, cutHead(head, full, opts.MaxLineLength))
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
	rest, err := ls.countRest()
	if err != nil {
		return "", err
	}
	total := n + rest
	if offset > total {
		return fmt.Sprintf("[offset %d is past the end of %s (%s)]", offset, p, plural(total, "line")), nil
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
	return b.String(), nil
}

// lineScanner reads lines keeping at most keep bytes of each.
type lineScanner struct {
	r    *bufio.Reader
	keep int
	buf  []byte
}

// next returns the start of the next line (at most keep bytes, without
// its "\n") and the line's full length without the "\n" and trailing
// "\r"s; ok is false at the end of the input.
func (s *lineScanner) next() (head []byte, full int, ok bool, err error) {
	s.buf = s.buf[:0]
	cr := 0 // trailing '\r's so far
	for {
		chunk, err := s.r.ReadSlice('\n')
		body := chunk
		nl := len(body) > 0 && body[len(body)-1] == '\n'
		if nl {
			body = body[:len(body)-1]
		}
		if len(chunk) > 0 {
			ok = true
		}
		full += len(body)
		if room := s.keep - len(s.buf); room > 0 {
			s.buf = append(s.buf, body[:min(room, len(body))]...)
		}
		if t := len(body) - len(bytes.TrimRight(body, "\r")); t == len(body) {
			cr += t
		} else {
			cr = t
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return nil, 0, false, err
		}
		full -= cr
		return s.buf[:min(len(s.buf), full)], full, ok, nil
	}
}

// countRest counts the lines left in the input without keeping them,
// through the reader's own buffer.
func (s *lineScanner) countRest() (int, error) {
	n, last := 0, byte('\n')
	for {
		if s.r.Buffered() == 0 {
			if _, err := s.r.Peek(1); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return 0, err
			}
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		n += bytes.Count(buf, []byte{'\n'})
		last = buf[len(buf)-1]
		s.r.Discard(len(buf))
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

// cutHead renders a line of full bytes whose first bytes are head: as is
// when it fits max, else cut on a UTF-8 boundary with a notice, as
// cutLine does.
func cutHead(head []byte, full, max int) string {
	if full <= max {
		return string(head)
	}
	cut := min(max, len(head))
	for cut > 0 && cut < len(head) && !utf8Start(head[cut]) {
		cut--
	}
	return string(head[:cut]) + "... [line cut: " + strconv.Itoa(full) + " bytes]"
}

// ImageType returns the MIME type of data when its content is a jpeg, png,
// gif or webp image, else "".
func ImageType(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\xFF\xD8\xFF")):
		return "image/jpeg"
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1A\n")):
		return "image/png"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "image/gif"
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
