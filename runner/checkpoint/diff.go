package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/cow"
)

// FileDiff is one file that differs between two states.
type FileDiff struct {
	Path string `json:"path"`
	// Status is "added", "deleted" or "modified".
	Status string `json:"status"`
	// Binary: one side holds a NUL byte; no lines are compared.
	Binary  bool `json:"binary,omitempty"`
	Added   int  `json:"added"`
	Removed int  `json:"removed"`
	// OldMode and NewMode are the permission bits, when they differ.
	OldMode uint32 `json:"oldMode,omitempty"`
	NewMode uint32 `json:"newMode,omitempty"`
	// Unified is the git-style unified diff of the file (headers
	// included), "" for a binary file.
	Unified string `json:"-"`
}

// side is one file's state: its contents as a diff shows them (a link
// as "link to TARGET"), whether it exists, its mode.
type side struct {
	data   []byte
	exists bool
	mode   uint32
}

func read(ctx context.Context, v vfs.FileSystem, p string) (side, error) {
	info, err := v.Stat(ctx, p)
	if err != nil {
		return side{}, err
	}
	if info.Link {
		target, err := vfs.Readlink(ctx, v, p)
		if err != nil {
			return side{}, err
		}
		return side{data: []byte("link to " + target + "\n"), exists: true}, nil
	}
	if info.Kind != vfs.KindFile {
		return side{}, nil
	}
	data, err := v.Read(ctx, p)
	if err != nil {
		return side{}, err
	}
	s := side{data: data, exists: true}
	if info.HasMode {
		s.mode = vfs.ModeBits(info.Mode)
	}
	return s, nil
}

// Diff compares the state from with the state to (each a layer's entries
// over base, their blobs in the layer directory layer; nil entries are
// the base itself): the files that differ, in path order. A directory
// the layer removed or made opaque counts each base file under it.
func Diff(ctx context.Context, base vfs.FileSystem, layer string, from, to []cow.Entry) ([]FileDiff, error) {
	va, vb := cow.View(base, layer, from), cow.View(base, layer, to)
	var paths []string
	for _, ch := range cow.Changes(from, to) {
		paths = append(paths, ch.Path)
		for _, e := range []cow.Entry{ch.Old, ch.New} {
			if e.Type == cow.TypeWhiteout && e.BaseKind == "dir" || e.Type == cow.TypeDir && e.Opaque {
				for p, err := range vfs.WalkFiles(ctx, base, ch.Path) {
					if err != nil {
						return nil, err
					}
					paths = append(paths, p)
				}
			}
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	var out []FileDiff
	for _, p := range paths {
		a, err := read(ctx, va, p)
		if err != nil {
			return nil, err
		}
		b, err := read(ctx, vb, p)
		if err != nil {
			return nil, err
		}
		if a.exists == b.exists && bytes.Equal(a.data, b.data) && a.mode == b.mode {
			continue
		}
		out = append(out, fileDiff(p, a, b))
	}
	return out, nil
}

func fileDiff(p string, a, b side) FileDiff {
	d := FileDiff{Path: p, Status: "modified"}
	fromName, toName := "a"+p, "b"+p
	switch {
	case !a.exists:
		d.Status, fromName = "added", "/dev/null"
	case !b.exists:
		d.Status, toName = "deleted", "/dev/null"
	}
	if a.exists && b.exists && a.mode != b.mode && a.mode != 0 && b.mode != 0 {
		d.OldMode, d.NewMode = a.mode, b.mode
	}
	header := fmt.Sprintf("diff --git a%s b%s\n", p, p)
	switch d.Status {
	case "added":
		header += fmt.Sprintf("new file mode 100%o\n", max(b.mode, 0o644))
	case "deleted":
		header += fmt.Sprintf("deleted file mode 100%o\n", max(a.mode, 0o644))
	}
	if d.OldMode != 0 {
		header += fmt.Sprintf("old mode 100%o\nnew mode 100%o\n", d.OldMode, d.NewMode)
	}
	if vfs.IsBinary(a.data) || vfs.IsBinary(b.data) {
		d.Binary = true
		if !bytes.Equal(a.data, b.data) {
			header += fmt.Sprintf("Binary files %s and %s differ\n", fromName, toName)
		}
		d.Unified = header
		return d
	}
	al, bl := lines(a.data), lines(b.data)
	body, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: al, B: bl, FromFile: fromName, ToFile: toName, Context: 3})
	for _, line := range strings.Split(body, "\n") {
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
		case strings.HasPrefix(line, "+"):
			d.Added++
		case strings.HasPrefix(line, "-"):
			d.Removed++
		}
	}
	d.Unified = header + body
	return d
}

// lines splits data into lines with their newlines; a last line without
// one gets one (the diff does not mark it).
func lines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	out := strings.SplitAfter(string(data), "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	} else {
		out[len(out)-1] += "\n"
	}
	return out
}
