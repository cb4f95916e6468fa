package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"

	"github.com/julyfs/julyfs/rootspec"
	"github.com/julyfs/julyfs/runner/approval"
	"github.com/julyfs/julyfs/runner/mcpclient"
	"github.com/julyfs/julyfs/runner/tools"
	"github.com/julyfs/julyfs/runner/web"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
)

// SessionOptions configure Open.
type SessionOptions struct {
	// Root, when set, is the tree the session binds instead of the
	// agent's root (or the host disk): for tests and for programs that
	// build their tree themselves. The plan still comes from agent.yaml.
	Root vfs.FileSystem
	// Tools bounds tool output.
	Tools tools.Options
	// DryRun stubs write tools (see DispatchOptions.DryRun).
	DryRun bool
	// Observe is called after every tool call.
	Observe func(CallRecord)
	// IndexDir, when set, is the index directory that backs
	// SemanticSearch instead of agent.yaml's index (relative to the
	// process's working directory). The agent must have a root and serve
	// SemanticSearch.
	IndexDir string
	// Index configures opening the index (progress, log, rebuild).
	Index index.Options
	// SessionID is the session's id: the value of {sessionId} in a live
	// root, and the session of hostfiles trees scoped to it. Required for
	// an agent with a live root.
	SessionID string
	// ContinuationKey is passed to RootFactory.
	ContinuationKey string
	// RootFactory, when set, builds the session's tree (a Go live root)
	// instead of agent.yaml's root; the agent must have a root, whose
	// plan applies.
	RootFactory RootFactory
	// Harness configures the agent loop's harness tools (web, todos).
	Harness HarnessOptions
	// ScratchQuota, when positive, bounds the bytes of the files in each
	// turn's /tmp scratch (july mcp sets it: one turn per MCP session).
	ScratchQuota int64
	// NoIndex binds the tree without its index (SemanticSearch then finds
	// nothing), for callers that only list the tools: the index is
	// neither built nor locked.
	NoIndex bool

	// MCPWarn, when set, is told once per session of each MCP server that
	// could not be started on its first turn (its tools are then offered
	// from the turn that starts it, tried again with backoff) and of each
	// tool refused for its schema or name.
	MCPWarn func(msg string)
	// Approver decides the agent loop's calls that agent.yaml's
	// approvals: asks for (a terminal, a server's queue, a flag); nil
	// denies them. july call and july mcp do not ask: their caller is
	// the one deciding.
	Approver approval.Asker
}

// Session is an agent bound to its tree. A static root is built once per
// session and shared by all of its turns, so a Write in one turn is seen by
// the next; a temp root lives as long as the session (for july call, one
// process).
type Session struct {
	agent *Agent
	fs    vfs.FileSystem
	opts  SessionOptions
	close func() error // releases the tree; nil for SessionOptions.Root
	index *index.FS    // the index over the tree, when there is one

	hmu     sync.Mutex
	harness *harnessState // the loop's harness tools' state (harnesstools.go)
	hdir    string        // the harness directory made for a root (scratch.go)
	// watch is the /tmp of WatchTree's view (watch.go), nil until asked.
	watch     *switchFS
	watchTree vfs.FileSystem

	// schemas are the resolved schemas of the session's tools, resolved
	// on the first turn and reused by every later one (dispatch.go).
	schemas schemaCache

	// mcp is the session's MCP servers (mcp.go), nil until the first
	// loop turn; mcpSpill holds their large results; mcpOnce reports
	// their problems once.
	mcp      *mcpclient.Set
	mcpSpill *web.Spill
	mcpOnce  sync.Once
	gate     *approval.Gate // the loop's approvals (approvals.go), made on first use; hmu
	emu      sync.Mutex     // serializes the gate's events of concurrent calls
	// info is what the authored tools read at each call (authoredtools.go).
	info sessionInfo
}

// Open binds the agent's tree (its authored root, or the host disk at its
// working directory), wraps an authored root in its index when it has one
// (agent.yaml's index, or SessionOptions.IndexDir; built or brought up to
// date here, and held exclusively until Close), and writes its
// workspaceFiles through it. Close the session when done.
func (a *Agent) Open(ctx context.Context, opts SessionOptions) (*Session, error) {
	s := &Session{agent: a, fs: opts.Root, opts: opts}
	if !a.Plan.Root {
		s.opts.Tools.HostDir = a.Cwd
	}
	if s.fs == nil {
		var err error
		rc := RootContext{SessionID: opts.SessionID, AgentName: a.Config.Name, ContinuationKey: opts.ContinuationKey}
		switch {
		case opts.RootFactory != nil && !a.Plan.Root:
			err = errors.New("a root factory needs an agent with a root: in agent.yaml (its plan applies to the factory's tree)")
		case opts.RootFactory != nil:
			s.fs, s.close, err = openFactory(ctx, opts.RootFactory, rc)
		case a.live != nil && opts.SessionID == "":
			err = errors.New("its root is live (it names {sessionId} or {agentName}): bind it with a session id")
		case a.live != nil:
			s.fs, s.close, err = a.openLive(ctx, rc)
		case a.Plan.Root:
			s.fs, s.close, err = buildRoot(rootspec.WithSessionID(ctx, opts.SessionID), a.root)
		default:
			s.fs, s.close, err = hostTree(a.Cwd)
		}
		if err != nil {
			return nil, fmt.Errorf("agent %s: binding the tree: %w", a.Config.Name, err)
		}
	}
	dir, err := a.resolveIndexDir(opts.IndexDir)
	if err != nil {
		s.Close()
		return nil, err
	}
	if dir != "" && !opts.NoIndex {
		idx, err := openIndex(ctx, s.fs, dir, opts.Index)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("agent %s: %w", a.Config.Name, err)
		}
		s.fs, s.index = idx, idx
		treeClose := s.close
		s.close = func() error {
			err := idx.Close()
			if treeClose != nil {
				err = errors.Join(err, treeClose())
			}
			return err
		}
	}
	for _, p := range slices.Sorted(maps.Keys(a.Config.WorkspaceFiles)) {
		if err := s.fs.Write(ctx, vfs.Clean(p), []byte(a.Config.WorkspaceFiles[p])); err != nil {
			s.Close()
			return nil, fmt.Errorf("agent %s: seeding workspace file %s: %w", a.Config.Name, p, err)
		}
	}
	return s, nil
}

// Close releases the session's tree (the index, then the host directory
// handles of local mounts). Turns must not be used afterwards.
func (s *Session) Close() error {
	s.closeMCP()
	s.hmu.Lock()
	if s.hdir != "" {
		os.RemoveAll(s.hdir)
		s.hdir = ""
	}
	s.hmu.Unlock()
	if s.close == nil {
		return nil
	}
	c := s.close
	s.close = nil
	return c()
}

// Index returns the index that serves the tree's Search, or nil.
func (s *Session) Index() *index.FS { return s.index }

// Agent returns the session's agent.
func (s *Session) Agent() *Agent { return s.agent }

// FS returns the session's tree (without any turn's /tmp).
func (s *Session) FS() vfs.FileSystem { return s.fs }

// Turn is one turn's view: its tree (the session's tree, with a fresh
// empty /tmp on top when the plan binds scratch) and the dispatcher over
// the tools synthesized from it.
type Turn struct {
	// FS is the turn's tree.
	FS vfs.FileSystem
	// Dispatcher serves the plan's tools over FS.
	*Dispatcher
}

// Turn starts a turn. Its /tmp, when bound, is dropped with the Turn: the
// next turn gets a new, empty one. The tools are built afresh over the
// turn's tree, but their schemas are resolved once per session (the first
// turn) and reused.
func (s *Session) Turn() (*Turn, error) {
	fsys := s.fs
	if s.agent.Plan.ScratchTmp {
		var err error
		var scratch vfs.FileSystem
		if fsys, scratch, err = withScratch(fsys, s.opts.ScratchQuota); err != nil {
			return nil, err
		}
		s.setScratch(scratch)
	}
	ts := tools.Synthesize(fsys, s.agent.Plan.FileTools, s.opts.Tools)
	if s.agent.Plan.Shell {
		ts = append(ts, tools.NewShell(s.agent.Cwd, s.opts.Tools))
	}
	ts = append(ts, s.authoredTools()...)
	d, err := newDispatcher(ts, DispatchOptions{DryRun: s.opts.DryRun, Observe: s.opts.Observe}, &s.schemas)
	if err != nil {
		return nil, err
	}
	return &Turn{FS: fsys, Dispatcher: d}, nil
}
