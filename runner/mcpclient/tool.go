package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/julyfs/julyfs/runner/tools"
)

// maxDescription bounds a tool's description as offered to the model.
const maxDescription = 4 << 10

// tool makes the model-facing tool for one of sv's tools, or says why a
// model provider would reject it.
func (s *Set) tool(sv *server, mt *mcp.Tool) (*tools.Tool, error) {
	name := MCPToolName(sv.name, mt.Name)
	if !toolName.MatchString(name) {
		return nil, fmt.Errorf("tool %q: its name %s is not one model providers accept (letters, digits, _ and -, at most 64)", mt.Name, name)
	}
	schema, err := cleanSchema(mt.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %q: its input schema %v", mt.Name, err)
	}
	if _, err := schema.Resolve(nil); err != nil {
		return nil, fmt.Errorf("tool %q: its input schema does not resolve: %v", mt.Name, err)
	}
	desc := mt.Description
	if desc == "" && mt.Annotations != nil {
		desc = mt.Annotations.Title
	}
	if desc == "" {
		desc = mt.Title
	}
	if len(desc) > maxDescription {
		desc = desc[:maxDescription] + " [description cut]"
	}
	t := &tools.Tool{
		Name:        name,
		Description: desc,
		Schema:      schema,
		Effect:      tools.EffectWrite,
		Destructive: true,
		OpenWorld:   true,
	}
	if a := mt.Annotations; a != nil {
		if a.ReadOnlyHint {
			t.Effect, t.Destructive = tools.EffectRead, false
		} else if a.DestructiveHint != nil {
			t.Destructive = *a.DestructiveHint
		}
		if a.OpenWorldHint != nil {
			t.OpenWorld = *a.OpenWorldHint
		}
	}
	server, remote := sv, mt.Name
	t.Run = func(ctx context.Context, args json.RawMessage) (*tools.Result, error) {
		var in map[string]any
		if len(args) > 0 {
			if err := json.Unmarshal(args, &in); err != nil {
				return tools.Errorf("invalid arguments for %s: %v", name, err), nil
			}
		}
		if in == nil {
			in = map[string]any{}
		}
		res, err := server.call(ctx, remote, in)
		if err != nil {
			return tools.Error(&ServerError{Server: server.name, Err: err}), nil
		}
		return s.result(res), nil
	}
	return t, nil
}

// cleanSchema turns a server's input schema into one every model provider
// takes: an object schema (an absent type on a schema with properties, or
// no schema at all, becomes "object"); a top-level combinator, enum or
// non-object type is refused, as OpenAI and Anthropic refuse it.
func cleanSchema(in any) (*jsonschema.Schema, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("is not JSON: %v", err)
	}
	var m map[string]any
	if string(raw) == "null" {
		m = map[string]any{}
	} else if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("is not a JSON object")
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "not", "enum"} {
		if _, ok := m[k]; ok {
			return nil, fmt.Errorf("has a top-level %s, which model providers refuse: the top level must be a plain object schema", k)
		}
	}
	switch ty := m["type"].(type) {
	case nil:
		m["type"] = "object"
	case string:
		if ty != "object" {
			return nil, fmt.Errorf("has type %q at the top level: model providers want \"object\"", ty)
		}
	default:
		return nil, fmt.Errorf("has type %v at the top level: model providers want \"object\"", ty)
	}
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
	}
	raw, _ = json.Marshal(m)
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("is not a schema july can read: %v", err)
	}
	return &s, nil
}

// result converts a server's answer into a tool result, text over the
// inline limit spilled (or cut, without a spill).
func (s *Set) result(res *mcp.CallToolResult) *tools.Result {
	r := &tools.Result{IsError: res.IsError, Structured: res.StructuredContent}
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			r.Content = append(r.Content, tools.Part{Type: "text", Text: text.String()})
			text.Reset()
		}
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			addText(&text, c.Text)
		case *mcp.ImageContent:
			flush()
			r.Content = append(r.Content, tools.Part{Type: "image", Data: c.Data, MIMEType: c.MIMEType})
		case *mcp.AudioContent:
			addText(&text, fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			addText(&text, fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
		case *mcp.EmbeddedResource:
			switch rc := c.Resource; {
			case rc == nil:
			case rc.Text != "":
				addText(&text, fmt.Sprintf("[resource %s]\n%s", rc.URI, rc.Text))
			default:
				addText(&text, fmt.Sprintf("[resource %s, %s, %d bytes of binary, not shown]", rc.URI, rc.MIMEType, len(rc.Blob)))
			}
		default:
			addText(&text, fmt.Sprintf("[%T content, not shown]", c))
		}
	}
	flush()
	if len(r.Content) == 0 && r.Structured != nil {
		if b, err := json.Marshal(r.Structured); err == nil {
			r.Content = append(r.Content, tools.Part{Type: "text", Text: string(b)})
		}
	}
	if len(r.Content) == 0 {
		r.Content = append(r.Content, tools.Part{Type: "text", Text: ""})
	}
	for i, p := range r.Content {
		if p.Type == "text" {
			r.Content[i].Text = s.bound(p.Text)
		}
	}
	return r
}

func addText(b *strings.Builder, s string) {
	if b.Len() > 0 {
		b.WriteByte('\n')
	}
	b.WriteString(s)
}

// bound returns text as is when it fits inline, else spilled to a file
// (or cut) with a sentence saying so.
func (s *Set) bound(text string) string {
	limit := s.opts.inline()
	if len(text) <= limit {
		return text
	}
	if s.opts.Spill != nil {
		if path, err := s.opts.Spill(text); err == nil {
			msg := fmt.Sprintf("The result is %d bytes, too large to show here. It was written to %s", len(text), path)
			if s.opts.SpillFollowUp != "" {
				msg += "\n" + s.opts.SpillFollowUp
			}
			return msg
		}
	}
	cut := text[:limit]
	for len(cut) > 0 && !validEnd(cut) {
		cut = cut[:len(cut)-1]
	}
	return cut + fmt.Sprintf("\n[result cut at %d of %d bytes]", len(cut), len(text))
}

// validEnd reports that s does not end inside a UTF-8 sequence.
func validEnd(s string) bool {
	r, size := utf8.DecodeLastRuneInString(s)
	return r != utf8.RuneError || size > 1
}
