// Package mcpclient connects an agent to the MCP servers its agent.yaml
// lists under mcp: and offers each server's tools to the model as
// mcp__<server>__<tool>, on the official go-sdk client.
//
// A server is a command (stdio: its own process group, so closing kills
// every process it started) or a streamable HTTP url with headers. Every
// string of its configuration may name ${VAR}, expanded from the
// environment when the server starts; an expanded value (of four bytes or
// more) is replaced by [redacted] in every error this package returns.
//
// # Lifetime
//
// A [Set] is one session's connections. Its servers start on the first
// call to [Set.Tools], all in parallel, each bounded by its startTimeout,
// and stop with [Set.Close]. A server that fails to start offers no tools
// (its [Status] says why) and the others serve; each later call to
// [Set.Tools] (a session makes one per turn) starts it again once its
// backoff has passed, and its tools join from then on. A server that dies
// mid-session fails the call that saw it, with the end of its stderr; the
// next call restarts it at once, and after further failures in a row
// restarts wait a backoff that doubles up to [MaxBackoff].
//
// # Tools
//
// A tool's effect is read when the server annotates it readOnlyHint, else
// write (a dry run stubs it). Its input schema must be an object schema:
// a missing type becomes "object", and a top-level anyOf, oneOf, allOf,
// not, enum or other type, or a name providers refuse, keeps the tool
// from being offered, with the reason in Status.Refused. Results are
// converted part by part (text, images; audio and binary resources as a
// note); text over the inline limit goes to Options.Spill, or is cut with
// a notice. A message over maxMessageBytes fails the connection with an
// error naming that bound.
//
// # Allowlist
//
// [ParseAllow] reads tools: entries mcp:server/tool and mcp:server/*. A
// list with no such entry serves every server's tools; with one, only the
// named tools, and servers named nowhere are not started. An entry naming
// an unconfigured server is a problem (fail closed).
//
// A Set is safe for concurrent use.
package mcpclient
