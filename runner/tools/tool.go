// Package tools holds the native tools the runner synthesizes from a bound
// [vfs.FileSystem] (Read, LS, Grep, Glob, Write, StrReplace, Delete,
// SemanticSearch) and the host-default Shell tool.
//
// A [Tool] is a name, a description, a JSON schema for its arguments, the
// aliases accepted at invoke time, its [Effect] (read or write) and a Run
// function over already-validated arguments. Tools do not validate or alias
// their own arguments: the runner's dispatcher does that once for every
// caller (july call, the MCP server, the agent loop).
//
// # Results and errors
//
// Run returns a [Result]: text and image parts, optional structured content,
// and an error flag. A failure the model should read (a missing file, an
// edit precondition, a bad pattern) is a Result with IsError set whose text
// is the contract string of the [vfs.PathError]; Run returns a Go error only
// for the same failures, which the dispatcher turns into such a Result. A
// tool never panics on bad input and never returns a partial success
// without saying so: every cut output ends with a bracketed notice.
//
// # Concurrency
//
// Tools hold no state of their own beyond their options; they are safe for
// concurrent use when their tree is.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/julyfs/julyfs/vfs"
)

// Effect says whether a tool changes the tree (or the host).
type Effect uint8

const (
	// EffectRead tools only observe: a dry run runs them.
	EffectRead Effect = iota + 1
	// EffectWrite tools change the tree or the host: a dry run stubs them.
	EffectWrite
)

// String returns "read" or "write".
func (e Effect) String() string {
	switch e {
	case EffectRead:
		return "read"
	case EffectWrite:
		return "write"
	}
	return fmt.Sprintf("effect(%d)", uint8(e))
}

// MarshalText renders the effect as its String.
func (e Effect) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// Tool is one model-facing tool.
type Tool struct {
	// Name is the model-facing name (Read, StrReplace, ...).
	Name string
	// Description is the model-facing description.
	Description string
	// Schema describes the canonical arguments; it is a JSON object schema
	// that refuses unknown properties.
	Schema *jsonschema.Schema
	// OutputSchema, when set, describes Result.Structured.
	OutputSchema *jsonschema.Schema
	// Aliases maps an accepted argument name onto its canonical name
	// (old_string -> oldText). The dispatcher renames before validation.
	Aliases map[string]string
	// Effect is read or write.
	Effect Effect
	// Destructive reports that a write may overwrite or remove data (it
	// is meaningful for EffectWrite tools only).
	Destructive bool
	// OpenWorld reports that the tool reaches beyond the bound tree (the
	// host shell does; the file tools do not).
	OpenWorld bool
	// Run executes the tool on arguments that passed Schema, as JSON.
	Run func(ctx context.Context, args json.RawMessage) (*Result, error)
}

// Part is one piece of a tool's output: text, or an image whose Data is the
// raw bytes (base64 on the wire).
type Part struct {
	Type     string `json:"type"` // "text" or "image"
	Text     string `json:"text,omitempty"`
	Data     []byte `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
}

// Result is what a tool call returns to the model.
type Result struct {
	// Tool is the name of the tool that ran (set by the dispatcher).
	Tool string `json:"tool,omitempty"`
	// Effect is the tool's effect (set by the dispatcher).
	Effect Effect `json:"effect,omitempty"`
	// Content is the model-facing output.
	Content []Part `json:"content"`
	// Structured is the machine-readable result, for tools that have one
	// (StrReplace's {"occurrencesModified": N}).
	Structured any `json:"structured,omitempty"`
	// IsError marks a failed call; Content then holds the message.
	IsError bool `json:"isError,omitempty"`
	// Stubbed marks a write that a dry run answered without running it.
	Stubbed bool `json:"stubbed,omitempty"`
}

// Text returns a successful result holding s.
func Text(s string) *Result {
	return &Result{Content: []Part{{Type: "text", Text: s}}}
}

// Error returns an error result whose text is err's message (for a
// vfs.PathError, the contract string with its path and pattern shown by
// vfs.DisplayPath).
func Error(err error) *Result {
	msg := err.Error()
	if pe, ok := err.(*vfs.PathError); ok {
		c := *pe
		c.Path, c.Pattern = vfs.DisplayPath(c.Path), vfs.DisplayPath(c.Pattern)
		msg = c.Error()
	}
	return &Result{Content: []Part{{Type: "text", Text: msg}}, IsError: true}
}

// Errorf returns an error result with a formatted message.
func Errorf(format string, args ...any) *Result {
	return &Result{Content: []Part{{Type: "text", Text: fmt.Sprintf(format, args...)}}, IsError: true}
}

// String joins the text parts of r and describes its image parts, for
// printing.
func (r *Result) String() string {
	var b strings.Builder
	for i, p := range r.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch p.Type {
		case "image":
			fmt.Fprintf(&b, "[image %s, %d bytes]", p.MIMEType, len(p.Data))
		default:
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// define builds a Tool whose Run decodes its arguments into In.
func define[In any](t Tool, run func(ctx context.Context, in In) (*Result, error)) *Tool {
	t.Run = func(ctx context.Context, args json.RawMessage) (*Result, error) {
		var in In
		if len(args) > 0 {
			if err := json.Unmarshal(args, &in); err != nil {
				return Errorf("invalid arguments for %s: %v", t.Name, err), nil
			}
		}
		return run(ctx, in)
	}
	return &t
}

// Schema helpers. Every object schema refuses unknown properties so a
// misspelled argument is an error the model can read, not a silent default.

var falseSchema = &jsonschema.Schema{Not: &jsonschema.Schema{}}

func object(required []string, props map[string]*jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:                 "object",
		Properties:           props,
		Required:             required,
		AdditionalProperties: falseSchema,
	}
}

func str(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: desc}
}

func enum(desc string, values ...string) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string", Description: desc}
	for _, v := range values {
		s.Enum = append(s.Enum, v)
	}
	return s
}

func integer(desc string, minimum float64) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Description: desc, Minimum: jsonschema.Ptr(minimum)}
}

func boolean(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "boolean", Description: desc}
}

func stringList(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "array", Description: desc, Items: &jsonschema.Schema{Type: "string"}}
}
