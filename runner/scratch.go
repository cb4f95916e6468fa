package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/julyfs/julyfs/runner/tools"
	"github.com/julyfs/julyfs/runner/web"
	"github.com/julyfs/julyfs/vfs"
)

// This file is the spec's "/tmp scratch for webSearch and webFetch": the
// web tools spill large output to the harness's {cwd}/agent-tools/{uuid}.txt
// as on the host; under an authored root, the turn copies each file the
// tool wrote this turn into its own /tmp/{uuid}.txt (same uuid), deletes
// the host file, and rewrites the host path (and the follow-up sentence)
// in the web tool's result, text and output_location alike. Synthesized
// Read and Grep map a path argument still carrying the host path onto
// /tmp. Other tools and other paths are left alone. Without a root
// nothing is rewritten: the host path stays.

// overlaySpill is one turn's rewriting under an authored root.
type overlaySpill struct {
	fs      vfs.FileSystem // the turn's tree: the root with /tmp
	hostDir string         // {cwd}/agent-tools, absolute and clean
	spill   *web.Spill
}

// tmpPath is the /tmp path of a host spill file, or "" when p is not a
// file directly under hostDir.
func (o *overlaySpill) tmpPath(p string) string {
	if filepath.Dir(p) != o.hostDir || !strings.HasSuffix(p, ".txt") {
		return ""
	}
	return ScratchPrefix + "/" + filepath.Base(p)
}

// result moves the files the call spilled into /tmp and rewrites r.
func (o *overlaySpill) result(ctx context.Context, r *tools.Result) *tools.Result {
	if r == nil || r.IsError {
		return r
	}
	seen := r.String()
	if fr, ok := r.Structured.(web.FetchResult); ok {
		seen += "\n" + fr.OutputLocation
	}
	for _, host := range o.spill.Claim(seen) {
		dest := o.tmpPath(host)
		err := o.copy(ctx, host, dest)
		os.Remove(host)
		if err != nil {
			return tools.Errorf("the output was too large to show and could not be kept in %s: %v", ScratchPrefix, err)
		}
		for i, p := range r.Content {
			if p.Type == "text" {
				p.Text = strings.ReplaceAll(p.Text, host, dest)
				p.Text = strings.ReplaceAll(p.Text, web.FollowUpHost, web.FollowUpOverlay)
				r.Content[i] = p
			}
		}
		if fr, ok := r.Structured.(web.FetchResult); ok && fr.OutputLocation == host {
			fr.OutputLocation = dest
			r.Structured = fr
		}
	}
	return r
}

// copy copies the host file into the turn's tree.
func (o *overlaySpill) copy(ctx context.Context, host, dest string) error {
	data, err := os.ReadFile(host)
	if err != nil {
		return err
	}
	return o.fs.Write(ctx, dest, data)
}

// input maps a Read or Grep call's path argument from the host spill path
// onto /tmp.
func (o *overlaySpill) input(args json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return args
	}
	p, ok := m["path"].(string)
	if !ok {
		return args
	}
	dest := o.tmpPath(filepath.Clean(p))
	if dest == "" || !filepath.IsAbs(p) {
		return args
	}
	m["path"] = dest
	out, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return out
}

// wrapRun returns a copy of t whose Run passes through before and after.
func wrapRun(t *tools.Tool, before func(json.RawMessage) json.RawMessage, after func(context.Context, *tools.Result) *tools.Result) *tools.Tool {
	c := *t
	run := t.Run
	c.Run = func(ctx context.Context, args json.RawMessage) (*tools.Result, error) {
		if before != nil {
			args = before(args)
		}
		r, err := run(ctx, args)
		if err != nil || after == nil {
			return r, err
		}
		return after(ctx, r), nil
	}
	return &c
}

// overlayTools wraps a turn's tools for the /tmp overlay: the web tools'
// results and Read's and Grep's inputs.
func overlayTools(ts []*tools.Tool, o *overlaySpill) []*tools.Tool {
	out := make([]*tools.Tool, len(ts))
	for i, t := range ts {
		switch t.Name {
		case web.NameWebFetch, web.NameWebSearch:
			out[i] = wrapRun(t, nil, o.result)
		case tools.NameRead, tools.NameGrep:
			out[i] = wrapRun(t, o.input, nil)
		default:
			out[i] = t
		}
	}
	return out
}

// harnessDir returns the directory the web tools spill under: the host
// default's working directory, or, under an authored root, a private
// directory made for the session (removed on Close).
func (s *Session) harnessDir() (string, error) {
	if !s.agent.Plan.Root {
		return s.agent.Cwd, nil
	}
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if s.hdir == "" {
		d, err := os.MkdirTemp("", "july-harness-")
		if err != nil {
			return "", fmt.Errorf("making the harness directory: %w", err)
		}
		s.hdir = d
	}
	return s.hdir, nil
}
