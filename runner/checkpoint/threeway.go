package checkpoint

import (
	"context"
	"fmt"
	"os"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/cow"
)

// ThreeWay is a conflicting file's three versions: the base's when the
// session first changed the path (base), the base's now (the tree: what
// someone else made of it) and the session's. Each change is shown as a
// unified diff from the first.
type ThreeWay struct {
	// BaseKept: the base's version was kept (files up to
	// cow.MaxBaseCopy bytes); without it, Tree is "" and Session is the
	// diff from the tree now to the session's version.
	BaseKept bool `json:"baseKept"`
	// Tree is the diff base → the tree now; Session base → the
	// session's version.
	Tree    string `json:"tree"`
	Session string `json:"session"`
	// Note says why a side is missing (a base too large to keep, a blob
	// a damaged layer lost, a binary file).
	Note string `json:"note,omitempty"`
}

// threeWay returns the three versions of the layer c's conflicting entry
// e.
func threeWay(ctx context.Context, c *cow.FS, e cow.Entry) (*ThreeWay, error) {
	cur, err := read(ctx, c.Base(), e.Path)
	if err != nil {
		return nil, err
	}
	ses, err := read(ctx, c, e.Path)
	if err != nil {
		return nil, err
	}
	tw := &ThreeWay{}
	var orig side
	switch {
	case e.BaseKind == "":
		tw.BaseKept = true // nothing was there
	case e.BaseKind == "file" && e.BaseHash != "":
		data, err := os.ReadFile(cow.BlobPath(c.Dir(), e.BaseHash))
		if err != nil {
			tw.Note = fmt.Sprintf("the base's version (blob %s) is missing from the layer", e.BaseHash)
			break
		}
		orig, tw.BaseKept = side{data: data, exists: true}, true
	case e.BaseKind == "file":
		tw.Note = fmt.Sprintf("the base's version was not kept (files over %d bytes are compared by etag only)", cow.MaxBaseCopy)
	default:
		tw.Note = "the base had a " + e.BaseKind + " there"
	}
	if vfs.IsBinary(orig.data) || vfs.IsBinary(cur.data) || vfs.IsBinary(ses.data) {
		tw.Note = "binary file: no lines are compared"
		return tw, nil
	}
	if !tw.BaseKept {
		tw.Session = unified("tree", "session", cur, ses)
		return tw, nil
	}
	tw.Tree = unified("base", "tree", orig, cur)
	tw.Session = unified("base", "session", orig, ses)
	return tw, nil
}

// unified is the unified diff of a to b, labelled from and to (a side
// that does not exist is /dev/null).
func unified(from, to string, a, b side) string {
	if !a.exists {
		from = "/dev/null"
	}
	if !b.exists {
		to = "/dev/null"
	}
	text, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: lines(a.data), B: lines(b.data), FromFile: from, ToFile: to, Context: 3})
	return text
}
