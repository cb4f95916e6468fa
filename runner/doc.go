// Package runner loads an agent definition (a directory with agent.yaml and
// instructions.md), works out the tools its model gets, binds the tree it
// runs on, and dispatches tool calls: the part of an agent runtime that
// needs no model. july call, july mcp and the agent loop all use it.
//
// # Agents and plans
//
// [Load] reads agent.yaml: name, model, instructions, root (a mount table
// in the grammar of a root config file's mounts:, decoded by package
// rootspec; omitted, the agent runs on the host disk at its working
// directory), tools (the allowlist), local.* and runtime, and
// workspaceFiles. It reports every problem at once as a *[ValidationError]:
// unknown fields and tool names, and each fail-closed combination of the
// spec (an authored root with shell, task or readLints, or with local.cwd,
// local.workspaceDir, local.sandbox or a cloud runtime; an authored tool
// named like a synthesized one; seeded files under memory/, or under /tmp
// with a root; a root mount under /tmp). [PlanTools] is the spec's
// allowlist table as a function.
//
// # Sessions and turns
//
// [Agent.Open] binds the tree once per [Session] (a static root is shared
// by every turn and every caller of the session) and seeds workspaceFiles
// through it. [Session.Turn] starts a [Turn]: the session's tree, with a
// fresh empty /tmp mounted over an authored root when the plan binds
// scratch (the spec's per-turn union of the root with a temp /tmp), and a
// [Dispatcher] over the tools synthesized from that tree (package
// runner/tools) plus, on the host default, Shell.
//
// # Search index
//
// An agent's index: (or SessionOptions.IndexDir) names a vfs/index
// directory. Open wraps the authored root in it, so SemanticSearch is
// served by the index and writes through the session keep it current; the
// index is synced with the tree when it opens and held exclusively (a
// second process gets index.ErrInUse) until Session.Close.
//
// # Dispatch and errors
//
// [Dispatcher.Call] is the one path for every tool call: it maps argument
// aliases, validates the arguments against the tool's JSON schema, records
// the call's effect (read or write) for observers, stubs writes in a dry
// run, and returns a structured result. Every failure (an unknown tool, bad
// arguments, a contract error from the tree, a panic in a tool) is a result
// with IsError set whose text the model can read; Call never panics and
// never returns a Go error.
//
// # The agent loop
//
// [Loop] runs the turns of one durable session (package runner/sessions)
// on one bound tree: [Loop.Run] appends message.received and
// turn.started, asks the model (package runner/model, resolved from a
// spec by [ResolveModel]) with the system prompt ([Agent.SystemPrompt]:
// instructions.md and the environment brief) and the conversation, runs
// the tool calls it asks for through the turn's [Dispatcher] (consecutive
// read calls concurrently, write calls alone and in order, results in the
// model's order), gives the results back, and repeats until the model
// replies with text, MaxSteps model calls have been made, or the context
// is cancelled. Each step is an event appended and fsynced before the loop
// goes on; a failed turn is a turn.failed event and a *[TurnError], and
// the session stays usable. [Replay] rebuilds the conversation from a
// session's events, so a session continues in another process; the files
// of the agent's temp: mounts are kept with the session (temp.json) and
// put back before the first turn a Loop runs.
//
// # Harness tools and live roots
//
// The loop's turns (harnesstools.go) add the harness builtins the plan
// grants: WebFetch and WebSearch (package runner/web; agent.yaml's web:),
// whose large output is spilled to the harness cwd's agent-tools and,
// under an authored root, moved into the turn's /tmp with the result
// rewritten (scratch.go, the spec's tables); UpdateTodos and ReadTodos over
// the session's todos.json; Task, a child loop in its own session, on the
// host default. readLints is refused. A root whose mounts name {sessionId}
// or {agentName}, or a SessionOptions.RootFactory, is built once per
// session and never shared (liveroot.go). [Session.WatchTree] is the
// session's tree with the current turn's /tmp, for a watching mount.
//
// # Concurrency
//
// Agents and plans are immutable after Load. Sessions, turns and
// dispatchers are safe for concurrent use when the bound tree is (every
// tree in this module is). A Loop runs one turn at a time (Run holds a
// lock for the whole turn).
package runner
