package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/julyfs/julyfs/vfs"
)

type writeArgs struct {
	Path     string `json:"path"`
	Contents string `json:"contents"`
}

// NewWrite returns the Write tool: it creates or replaces a file and prints
// "Wrote contents to <path>".
func NewWrite(fsys vfs.FileSystem, opts Options) *Tool {
	opts = opts.withDefaults()
	return define(Tool{
		Name:        NameWrite,
		Description: "Creates a file, or replaces an existing file, with contents.",
		Schema: object([]string{"path", "contents"}, map[string]*jsonschema.Schema{
			"path":     str("Path of the file to write."),
			"contents": str("The whole new contents of the file."),
		}),
		Aliases: map[string]string{
			"file_path": "path", "filePath": "path", "target_file": "path",
			"fileText": "contents", "file_text": "contents", "content": "contents",
		},
		Effect:      EffectWrite,
		Destructive: true,
	}, func(ctx context.Context, in writeArgs) (*Result, error) {
		p := opts.path(in.Path)
		if err := fsys.Write(ctx, p, []byte(in.Contents)); err != nil {
			return nil, err
		}
		return Text("Wrote contents to " + vfs.DisplayPath(p)), nil
	})
}

type strReplaceArgs struct {
	Path       string `json:"path"`
	OldText    string `json:"oldText"`
	NewText    string `json:"newText"`
	ReplaceAll bool   `json:"replaceAll"`
}

// EditResult is StrReplace's structured result.
type EditResult struct {
	OccurrencesModified int `json:"occurrencesModified"`
}

// NewStrReplace returns the StrReplace tool: Read, an exact literal
// non-overlapping splice (never a regular expression), Write. It fails with
// the contract's edit errors when oldText is empty, equals newText, is
// missing, or occurs more than once without replaceAll; a failed write-back
// is "write failed: <path>". Success is {"occurrencesModified": N}.
//
// When the tree can compare-and-swap ([vfs.ConditionalWriter]), the
// write-back is conditional on the etag seen before the read, so a
// concurrent writer makes the edit fail with "conflict: <path>" instead of
// being lost.
func NewStrReplace(fsys vfs.FileSystem, opts Options) *Tool {
	opts = opts.withDefaults()
	return define(Tool{
		Name: NameStrReplace,
		Description: "Replaces exact text in a file. oldText must occur exactly once unless replaceAll is true; the match " +
			"is literal (no regular expressions) and occurrences do not overlap. Include enough surrounding context in " +
			"oldText to make it unique. Returns {\"occurrencesModified\": N}.",
		Schema: object([]string{"path", "oldText", "newText"}, map[string]*jsonschema.Schema{
			"path":       str("Path of the file to edit."),
			"oldText":    str("The exact text to replace."),
			"newText":    str("The text to replace it with."),
			"replaceAll": boolean("Replace every occurrence instead of exactly one."),
		}),
		OutputSchema: object([]string{"occurrencesModified"}, map[string]*jsonschema.Schema{
			"occurrencesModified": integer("How many occurrences were replaced.", 1),
		}),
		Aliases: map[string]string{
			"file_path": "path", "filePath": "path", "target_file": "path",
			"old_string": "oldText", "old_str": "oldText", "oldString": "oldText",
			"new_string": "newText", "new_str": "newText", "newString": "newText",
			"replace_all": "replaceAll",
		},
		Effect:      EffectWrite,
		Destructive: true,
	}, func(ctx context.Context, in strReplaceArgs) (*Result, error) {
		p := opts.path(in.Path)
		n, err := StrReplace(ctx, fsys, p, in.OldText, in.NewText, in.ReplaceAll)
		if err != nil {
			return nil, err
		}
		r := Text(fmt.Sprintf(`{"occurrencesModified":%d}`, n))
		r.Structured = EditResult{OccurrencesModified: n}
		return r, nil
	})
}

// StrReplace edits the file at clean path p in fsys and returns how many
// occurrences it replaced; see NewStrReplace for the rules.
func StrReplace(ctx context.Context, fsys vfs.FileSystem, p, oldText, newText string, replaceAll bool) (int, error) {
	switch {
	case oldText == "":
		return 0, vfs.EditError(p, vfs.EditEmptyOld)
	case oldText == newText:
		return 0, vfs.EditError(p, vfs.EditSame)
	}
	cw, cas := fsys.(vfs.ConditionalWriter)
	var etag string
	if cas {
		info, err := fsys.Stat(ctx, p)
		if err != nil {
			return 0, err
		}
		etag = info.ETag
	}
	data, err := fsys.Read(ctx, p)
	if err != nil {
		return 0, err
	}
	old := []byte(oldText)
	n := bytes.Count(data, old)
	switch {
	case n == 0:
		return 0, vfs.EditError(p, vfs.EditNotFound)
	case n > 1 && !replaceAll:
		return 0, vfs.EditError(p, vfs.EditMultipleFound)
	}
	// bytes.Replace is a literal, left-to-right, non-overlapping splice.
	out := bytes.Replace(data, old, []byte(newText), -1)
	if cas && etag != "" {
		_, err = cw.WriteIf(ctx, p, out, vfs.Precondition{IfMatch: etag})
	} else {
		err = fsys.Write(ctx, p, out)
	}
	if err != nil {
		var pe *vfs.PathError
		if errors.As(err, &pe) {
			return 0, err
		}
		return 0, vfs.WriteFailed(p, err)
	}
	return n, nil
}

type pathArgs struct {
	Path string `json:"path"`
}

// NewDelete returns the Delete tool: it removes a file and prints
// "Deleted <path>".
func NewDelete(fsys vfs.FileSystem, opts Options) *Tool {
	opts = opts.withDefaults()
	return define(Tool{
		Name:        NameDelete,
		Description: "Deletes a file.",
		Schema: object([]string{"path"}, map[string]*jsonschema.Schema{
			"path": str("Path of the file to delete."),
		}),
		Aliases:     map[string]string{"file_path": "path", "filePath": "path", "target_file": "path"},
		Effect:      EffectWrite,
		Destructive: true,
	}, func(ctx context.Context, in pathArgs) (*Result, error) {
		p := opts.path(in.Path)
		if err := fsys.Delete(ctx, p); err != nil {
			return nil, err
		}
		return Text("Deleted " + vfs.DisplayPath(p)), nil
	})
}
