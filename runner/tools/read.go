package tools

import (
	"bytes"
	"context"
	"fmt"
	"strings"

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
			"through large files. jpeg, png, gif and webp images come back as an image.", opts.MaxReadLines, opts.MaxLineLength),
		Schema: object([]string{"path"}, map[string]*jsonschema.Schema{
			"path":   str("Path of the file to read."),
			"offset": integer("1-based line number to start reading from (default 1).", 0),
			"limit":  integer("Number of lines to read.", 0),
		}),
		Aliases: map[string]string{"file_path": "path", "filePath": "path", "target_file": "path"},
		Effect:  EffectRead,
	}, func(ctx context.Context, in readArgs) (*Result, error) {
		p := opts.path(in.Path)
		data, err := fsys.Read(ctx, p)
		if err != nil {
			return nil, err
		}
		if mime := ImageType(data); mime != "" {
			return &Result{Content: []Part{{Type: "image", Data: data, MIMEType: mime}}}, nil
		}
		if vfs.IsBinary(data) {
			return Errorf("%s is a binary file (%d bytes); Read shows text and jpeg/png/gif/webp images", vfs.DisplayPath(p), len(data)), nil
		}
		return Text(numberLines(p, data, in.Offset, in.Limit, opts)), nil
	})
}

// numberLines renders lines [offset, offset+limit) of data.
func numberLines(p string, data []byte, offset, limit int, opts Options) string {
	p = vfs.DisplayPath(p)
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
