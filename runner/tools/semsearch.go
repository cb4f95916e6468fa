package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/julyfs/julyfs/vfs"
)

type searchArgs struct {
	Query      string `json:"query"`
	Path       string `json:"path"`
	NumResults int    `json:"numResults"`
}

// defaultSearchResults is how many results SemanticSearch returns when the
// call does not say.
const defaultSearchResults = 10

// NewSemanticSearch returns the SemanticSearch tool over the tree's Search
// verb: ranked results, best first. A tree without an index has none.
func NewSemanticSearch(fsys vfs.FileSystem, opts Options) *Tool {
	opts = opts.withDefaults()
	return define(Tool{
		Name: NameSemanticSearch,
		Description: fmt.Sprintf("Searches the tree's index by meaning and keywords and returns the best matching files, "+
			"best first, as path:line (score) with a snippet. path scopes the search; numResults defaults to %d.",
			defaultSearchResults),
		Schema: object([]string{"query"}, map[string]*jsonschema.Schema{
			"query":      str("What to look for, in words."),
			"path":       str("Only results under this path (default /)."),
			"numResults": integer("How many results (default 10).", 1),
		}),
		Aliases: map[string]string{"num_results": "numResults", "maxResults": "numResults", "target_directory": "path"},
		Effect:  EffectRead,
	}, func(ctx context.Context, in searchArgs) (*Result, error) {
		n := in.NumResults
		if n <= 0 {
			n = defaultSearchResults
		}
		n = min(n, opts.MaxEntries)
		q := vfs.SearchQuery{Query: in.Query, Path: opts.path(in.Path), MaxResults: n}
		var b strings.Builder
		count := 0
		for r, err := range vfs.Limit(fsys.Search(ctx, q), n) {
			if err != nil {
				return nil, err
			}
			if count > 0 {
				b.WriteByte('\n')
			}
			count++
			b.WriteString(vfs.DisplayPath(r.Path))
			if r.LineNumber > 0 {
				fmt.Fprintf(&b, ":%d", r.LineNumber)
			}
			fmt.Fprintf(&b, " (score %.3f)", r.Score)
			if s := strings.TrimSpace(r.Snippet); s != "" {
				for line := range strings.SplitSeq(s, "\n") {
					b.WriteString("\n    ")
					b.WriteString(cutLine(strings.TrimRight(line, "\r"), opts.MaxLineLength))
				}
			}
			if b.Len() > opts.MaxOutputBytes {
				cutNotice(&b, fmt.Sprintf("Output cut at %d bytes after %d results.", opts.MaxOutputBytes, count))
				break
			}
		}
		if count == 0 {
			return Text("No results found."), nil
		}
		return Text(b.String()), nil
	})
}
