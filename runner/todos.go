package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/julyfs/julyfs/runner/tools"
)

// This file is the harness's todo list: UpdateTodos and ReadTodos over a
// per-session list. The list is kept with the session (todos.json in its
// directory, written atomically on every update) and every update is in
// the session's events as the tool's result, so july show prints it.

// The todo tools' model-facing names.
const (
	NameUpdateTodos = "UpdateTodos"
	NameReadTodos   = "ReadTodos"
)

// TodosFile holds a session's todo list, in its directory.
const TodosFile = "todos.json"

// The statuses a todo may have.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
)

// Todo is one item of the list.
type Todo struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Status  string `json:"status"`
}

// todoList is a session's list; dir, once set, is where it is kept.
type todoList struct {
	mu    sync.Mutex
	items []Todo
	dir   string
}

// load reads dir/todos.json (none: an empty list) and keeps the list
// there from now on.
func (l *todoList) load(dir string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dir = dir
	data, err := os.ReadFile(filepath.Join(dir, TodosFile))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the todo list: %w", err)
	}
	var st struct {
		Todos []Todo `json:"todos"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("reading the todo list %s: %w", filepath.Join(dir, TodosFile), err)
	}
	l.items = st.Todos
	return nil
}

// save writes the list to dir/todos.json atomically; without a dir (july
// call, july mcp) the list lives in memory only.
func (l *todoList) save() error {
	if l.dir == "" {
		return nil
	}
	data, err := json.MarshalIndent(struct {
		Todos []Todo `json:"todos"`
	}{l.items}, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(l.dir, TodosFile+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(l.dir, TodosFile))
	}
	return err
}

// update replaces the list, or with merge updates items by id and appends
// new ones.
func (l *todoList) update(items []Todo, merge bool) ([]Todo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var next []Todo
	if merge {
		next = append(next, l.items...)
		for _, it := range items {
			found := false
			for i := range next {
				if next[i].ID == it.ID {
					if it.Content != "" {
						next[i].Content = it.Content
					}
					if it.Status != "" {
						next[i].Status = it.Status
					}
					found = true
					break
				}
			}
			if !found {
				if it.Content == "" {
					return nil, fmt.Errorf("todo %q is new and has no content", it.ID)
				}
				if it.Status == "" {
					it.Status = TodoPending
				}
				next = append(next, it)
			}
		}
	} else {
		seen := map[string]bool{}
		for _, it := range items {
			if seen[it.ID] {
				return nil, fmt.Errorf("two todos have id %q", it.ID)
			}
			seen[it.ID] = true
			if it.Content == "" {
				return nil, fmt.Errorf("todo %q has no content", it.ID)
			}
			if it.Status == "" {
				it.Status = TodoPending
			}
			next = append(next, it)
		}
	}
	prev := l.items
	l.items = next
	if err := l.save(); err != nil {
		l.items = prev
		return nil, fmt.Errorf("keeping the todo list: %w", err)
	}
	return append([]Todo(nil), next...), nil
}

func (l *todoList) list() []Todo {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Todo(nil), l.items...)
}

// RenderTodos renders a list for the model and for july show.
func RenderTodos(items []Todo) string {
	if len(items) == 0 {
		return "The todo list is empty."
	}
	done := 0
	var b strings.Builder
	for _, it := range items {
		mark := " "
		switch it.Status {
		case TodoCompleted:
			mark = "x"
			done++
		case TodoInProgress:
			mark = "~"
		}
		fmt.Fprintf(&b, "\n- [%s] %s: %s", mark, it.ID, it.Content)
	}
	return fmt.Sprintf("Todos (%d of %d completed):", done, len(items)) + b.String()
}

func todoTools(l *todoList) []*tools.Tool {
	item := &jsonschema.Schema{
		Type:                 "object",
		Required:             []string{"id"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		Properties: map[string]*jsonschema.Schema{
			"id":      {Type: "string", Description: "A short unique id for the item.", MinLength: jsonschema.Ptr(1)},
			"content": {Type: "string", Description: "What to do."},
			"status":  {Type: "string", Enum: []any{TodoPending, TodoInProgress, TodoCompleted}, Description: "pending (default), in_progress or completed."},
		},
	}
	update := &tools.Tool{
		Name: NameUpdateTodos,
		Description: "Update this session's todo list: with merge false (the default) the given items replace the list; with merge true " +
			"items update the existing ones by id (content and status) and new ids are appended. Returns the whole list.",
		Schema: &jsonschema.Schema{
			Type:                 "object",
			Required:             []string{"todos"},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
			Properties: map[string]*jsonschema.Schema{
				"todos": {Type: "array", Items: item, Description: "The items."},
				"merge": {Type: "boolean", Description: "Merge into the list by id instead of replacing it."},
			},
		},
		Effect: tools.EffectWrite,
		Run: func(ctx context.Context, args json.RawMessage) (*tools.Result, error) {
			var in struct {
				Todos []Todo `json:"todos"`
				Merge bool   `json:"merge"`
			}
			if err := json.Unmarshal(args, &in); err != nil {
				return tools.Errorf("invalid arguments for %s: %v", NameUpdateTodos, err), nil
			}
			items, err := l.update(in.Todos, in.Merge)
			if err != nil {
				return tools.Error(err), nil
			}
			r := tools.Text(RenderTodos(items))
			r.Structured = map[string]any{"todos": items}
			return r, nil
		},
	}
	read := &tools.Tool{
		Name:        NameReadTodos,
		Description: "Read this session's todo list.",
		Schema: &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
			Properties: map[string]*jsonschema.Schema{}},
		Effect: tools.EffectRead,
		Run: func(ctx context.Context, args json.RawMessage) (*tools.Result, error) {
			items := l.list()
			r := tools.Text(RenderTodos(items))
			r.Structured = map[string]any{"todos": items}
			return r, nil
		},
	}
	return []*tools.Tool{update, read}
}
