package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/julyfs/julyfs/runner/tools"
)

// The model-facing names of the web tools.
const (
	NameWebFetch  = "WebFetch"
	NameWebSearch = "WebSearch"
)

// DefaultSearchResults is how many results WebSearch returns when the call
// does not say.
const DefaultSearchResults = 10

// FetchResult is WebFetch's structured result.
type FetchResult struct {
	Page
	// OutputLocation is where the page's text was written when it was too
	// large to show inline (the proto's output_location).
	OutputLocation string `json:"output_location,omitempty"`
}

// NewFetchTool returns the WebFetch tool: a page as text, inline when it
// is small, else written through spill and named by path.
func NewFetchTool(f *Fetcher, spill *Spill) *tools.Tool {
	t := &tools.Tool{
		Name: NameWebFetch,
		Description: "Fetch a web page (http or https) and return it as text: HTML as readable markdown, " +
			"other text types as they are. Binary content is refused. A large page is written to a file whose path the result gives.",
		Schema: &jsonschema.Schema{
			Type:                 "object",
			Required:             []string{"url"},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
			Properties: map[string]*jsonschema.Schema{
				"url": {Type: "string", Description: "The URL to fetch (http or https)."},
			},
		},
		Effect:    tools.EffectRead,
		OpenWorld: true,
	}
	t.Run = func(ctx context.Context, args json.RawMessage) (*tools.Result, error) {
		var in struct {
			URL string `json:"url"`
		}
		if err := unmarshal(args, &in); err != nil {
			return tools.Errorf("invalid arguments for %s: %v", NameWebFetch, err), nil
		}
		p, err := f.Fetch(ctx, in.URL)
		if err != nil {
			return tools.Error(err), nil
		}
		var head strings.Builder
		fmt.Fprintf(&head, "URL: %s\n", p.URL)
		if p.Title != "" {
			fmt.Fprintf(&head, "Title: %s\n", oneLine(p.Title))
		}
		fmt.Fprintf(&head, "Content-Type: %s (%d bytes", p.ContentType, p.Bytes)
		if p.Truncated {
			fmt.Fprintf(&head, ", cut at the %d-byte cap", p.Bytes)
		}
		head.WriteString(")\n\n")
		res := FetchResult{Page: *p}
		if len(p.Text) <= spill.Limit() {
			r := tools.Text(head.String() + p.Text)
			r.Structured = res
			return r, nil
		}
		path, err := spill.Write(p.Text)
		if err != nil {
			return tools.Error(err), nil
		}
		res.OutputLocation = path
		fmt.Fprintf(&head, "The page as text is %d bytes, too large to show here. It was written to %s\n%s", len(p.Text), path, FollowUpHost)
		r := tools.Text(head.String())
		r.Structured = res
		return r, nil
	}
	return t
}

// NewSearchTool returns the WebSearch tool over s: results as title, URL
// and snippet, inline when small, else written through spill.
func NewSearchTool(s Searcher, spill *Spill) *tools.Tool {
	t := &tools.Tool{
		Name:        NameWebSearch,
		Description: "Search the web. Returns results as title, URL and snippet; fetch a result's page with WebFetch.",
		Schema: &jsonschema.Schema{
			Type:                 "object",
			Required:             []string{"query"},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
			Properties: map[string]*jsonschema.Schema{
				"query":      {Type: "string", Description: "What to search for.", MinLength: jsonschema.Ptr(1)},
				"numResults": {Type: "integer", Description: fmt.Sprintf("How many results (1 to 20, default %d).", DefaultSearchResults), Minimum: jsonschema.Ptr(1.0), Maximum: jsonschema.Ptr(20.0)},
			},
		},
		Aliases:   map[string]string{"search_term": "query", "num_results": "numResults"},
		Effect:    tools.EffectRead,
		OpenWorld: true,
	}
	t.Run = func(ctx context.Context, args json.RawMessage) (*tools.Result, error) {
		var in struct {
			Query      string `json:"query"`
			NumResults int    `json:"numResults"`
		}
		if err := unmarshal(args, &in); err != nil {
			return tools.Errorf("invalid arguments for %s: %v", NameWebSearch, err), nil
		}
		if strings.TrimSpace(in.Query) == "" {
			return tools.Errorf("the query is empty"), nil
		}
		n := in.NumResults
		if n <= 0 {
			n = DefaultSearchResults
		}
		results, err := s.Search(ctx, in.Query, n)
		if err != nil {
			return tools.Errorf("web search failed: %v", err), nil
		}
		var b strings.Builder
		if len(results) == 0 {
			fmt.Fprintf(&b, "No results for %q.", in.Query)
		}
		for i, r := range results {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, oneLine(r.Title), oneLine(r.URL))
			if r.Snippet != "" {
				fmt.Fprintf(&b, "   %s\n", oneLine(r.Snippet))
			}
		}
		text := b.String()
		if len(text) <= spill.Limit() {
			return tools.Text(text), nil
		}
		path, err := spill.Write(text)
		if err != nil {
			return tools.Error(err), nil
		}
		return tools.Text(fmt.Sprintf("%d results for %q, %d bytes, too large to show here. They were written to %s\n%s", len(results), in.Query, len(text), path, FollowUpHost)), nil
	}
	return t
}

// oneLine puts s on one line and escapes control characters.
func oneLine(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	return strings.TrimSpace(b.String())
}

func unmarshal(args []byte, v any) error {
	if len(args) == 0 {
		return nil
	}
	return json.Unmarshal(args, v)
}
