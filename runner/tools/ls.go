package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/julyfs/julyfs/vfs"
)

type lsArgs struct {
	Path   string   `json:"path"`
	Ignore []string `json:"ignore"`
}

// NewLS returns the LS tool, built from List and Stat: the immediate
// children of a directory, directories with a trailing "/" and files with
// their size (a link also with " -> " and its target; one to a directory
// or to nothing says so instead of a size), minus
// those matching an ignore glob.
func NewLS(fsys vfs.FileSystem, opts Options) *Tool {
	opts = opts.withDefaults()
	return define(Tool{
		Name: NameLS,
		Description: fmt.Sprintf("Lists the files and directories directly inside a directory (default /), directories "+
			"with a trailing slash and files with their size (a symbolic link also with \" -> target\"). ignore takes glob patterns matched against each entry's "+
			"name or its path relative to the listed directory. At most %d entries. A name with control characters or invalid "+
			"UTF-8 is shown Go-quoted (\"bad\\xff.txt\"); to use it, quote the whole path the same way (\"/dir/bad\\xff.txt\").", opts.MaxEntries),
		Schema: object(nil, map[string]*jsonschema.Schema{
			"path":   str("Directory to list (default /)."),
			"ignore": stringList("Glob patterns of entries to leave out."),
		}),
		Aliases: map[string]string{"target_directory": "path", "dir": "path", "directory": "path"},
		Effect:  EffectRead,
	}, func(ctx context.Context, in lsArgs) (*Result, error) {
		dir := opts.path(in.Path)
		var ignore []*vfs.Pattern
		for _, g := range in.Ignore {
			pat, err := vfs.CompilePattern(g)
			if err != nil {
				return nil, err
			}
			ignore = append(ignore, pat)
		}
		info, err := fsys.Stat(ctx, dir)
		if err != nil {
			return nil, err
		}
		switch info.Kind {
		case vfs.KindMissing:
			return nil, vfs.NotFound(dir)
		case vfs.KindFile:
			return Text(fmt.Sprintf("%s (%s)", vfs.DisplayPath(dir), size(info.Size))), nil
		}
		var b strings.Builder
		b.WriteString(vfs.DisplayPath(withSlash(dir)))
		shown, total := 0, 0
		for e, err := range fsys.List(ctx, dir) {
			if err != nil {
				return nil, err
			}
			rel, _ := vfs.Rel(e.Path, dir)
			if ignored(ignore, rel) {
				continue
			}
			total++
			if shown >= opts.MaxEntries {
				continue
			}
			shown++
			b.WriteString("\n  ")
			if e.Kind == vfs.KindDir && !e.Link {
				b.WriteString(vfs.DisplayPath(withSlash(vfs.Base(e.Path))))
				continue
			}
			child, err := fsys.Stat(ctx, e.Path)
			if err != nil {
				return nil, err
			}
			b.WriteString(vfs.DisplayPath(vfs.Base(e.Path)))
			switch {
			case child.Kind == vfs.KindFile:
				fmt.Fprintf(&b, " (%s)", size(child.Size))
			case child.Kind == vfs.KindDir:
				b.WriteString(" (directory)") // a link to one: not followed
			case child.Link:
				b.WriteString(" (missing)") // dangling, or out of the tree
			}
			if child.Link {
				// A link (where the tree has them) is marked with its
				// target, as ls -l does; its size is its target's.
				if target, err := vfs.Readlink(ctx, fsys, e.Path); err == nil {
					fmt.Fprintf(&b, " -> %s", vfs.DisplayPath(target))
				}
			}
		}
		if total == 0 {
			b.WriteString("\n  (empty)")
		}
		if shown < total {
			cutNotice(&b, fmt.Sprintf("Showing %d of %d entries.", shown, total))
		}
		return Text(b.String()), nil
	})
}

func ignored(ignore []*vfs.Pattern, rel string) bool {
	for _, p := range ignore {
		if p.Match(rel) || p.Match(vfs.Base("/"+rel)) {
			return true
		}
	}
	return false
}

func withSlash(p string) string {
	if strings.HasSuffix(p, "/") {
		return p
	}
	return p + "/"
}

func size(n int64) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}
