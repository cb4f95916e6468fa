package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/julyfs/julyfs/vfs"
)

type globArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

// NewGlob returns the Glob tool over the tree's Glob verb: the paths under
// path matching pattern, in path order, directories with a trailing "/".
func NewGlob(fsys vfs.FileSystem, opts Options) *Tool {
	opts = opts.withDefaults()
	return define(Tool{
		Name: NameGlob,
		Description: fmt.Sprintf("Finds files and directories by glob pattern, relative to path (default /): * and ? stay "+
			"within a path segment, ** crosses directories, {a,b} alternates, [...] is a class. Results are in path "+
			"order, directories with a trailing slash; at most %d.", opts.MaxEntries),
		Schema: object([]string{"pattern"}, map[string]*jsonschema.Schema{
			"pattern": str("Glob pattern, e.g. **/*.go."),
			"path":    str("Directory the pattern is relative to (default /)."),
		}),
		Aliases: map[string]string{"glob_pattern": "pattern", "glob": "pattern", "target_directory": "path", "dir": "path"},
		Effect:  EffectRead,
	}, func(ctx context.Context, in globArgs) (*Result, error) {
		var b strings.Builder
		n := 0
		more := false
		for e, err := range fsys.Glob(ctx, in.Pattern, opts.path(in.Path)) {
			if err != nil {
				return nil, err
			}
			p := e.Path
			if e.Kind == vfs.KindDir {
				p = withSlash(p)
			}
			p = vfs.DisplayPath(p)
			if n == opts.MaxEntries || b.Len()+len(p)+1 > opts.MaxOutputBytes {
				more = true
				break
			}
			if n > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p)
			n++
		}
		if n == 0 {
			return Text("No files found."), nil
		}
		if more {
			cutNotice(&b, fmt.Sprintf("Showing the first %d paths; more match. Narrow the pattern or path.", n))
		}
		return Text(b.String()), nil
	})
}
