package mcpclient

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// AllowPrefix starts an allowlist entry naming MCP tools: mcp:server/tool,
// or mcp:server/* for all of a server's tools.
const AllowPrefix = "mcp:"

// Allow is the part of agent.yaml's tools: list that narrows MCP tools.
// The zero Allow permits every tool of every server (tools: omitted, or a
// list with no mcp: entry).
type Allow struct {
	narrow bool
	// servers maps a server to its listed tools; a nil slice is "*".
	servers map[string][]string
}

// IsAllowEntry reports that an allowlist entry is an MCP one.
func IsAllowEntry(entry string) bool { return strings.HasPrefix(entry, AllowPrefix) }

// ParseAllow reads the mcp: entries of list against the configured
// servers. An entry naming a server that is not configured, or not of the
// form mcp:server/tool or mcp:server/*, is a problem (fail closed).
func ParseAllow(list []string, servers map[string]ServerConfig) (Allow, []string) {
	var a Allow
	var problems []string
	for _, e := range list {
		if !IsAllowEntry(e) {
			continue
		}
		a.narrow = true
		if a.servers == nil {
			a.servers = map[string][]string{}
		}
		server, tool, err := CheckEntry(e, servers, false)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		switch cur, seen := a.servers[server]; {
		case tool == "*":
			a.servers[server] = nil
		case seen && cur == nil:
		default:
			if !slices.Contains(cur, tool) {
				a.servers[server] = append(cur, tool)
			}
		}
	}
	return a, problems
}

// CheckEntry splits an entry naming MCP tools, mcp:SERVER/TOOL or
// mcp:SERVER/*, into its server and tool, and checks that servers
// configures the server. With patterns, the server may be a path.Match
// pattern (approvals: mcp:*/delete_*), and then at least one configured
// server must match it. Which tools a server has is known only once it
// runs: the tool is not checked here.
func CheckEntry(entry string, servers map[string]ServerConfig, patterns bool) (server, tool string, err error) {
	rest, _ := strings.CutPrefix(entry, AllowPrefix)
	server, tool, ok := strings.Cut(rest, "/")
	if !ok || server == "" || tool == "" || strings.Contains(tool, "/") {
		return "", "", fmt.Errorf("%q: write mcp:SERVER/TOOL or mcp:SERVER/*", entry)
	}
	if patterns && strings.ContainsAny(server, "*?[") {
		for name := range servers {
			if ok, _ := path.Match(server, name); ok {
				return server, tool, nil
			}
		}
		return "", "", fmt.Errorf("%q: the pattern %q matches no MCP server mcp: configures%s", entry, server, configured(servers))
	}
	if _, ok := servers[server]; !ok {
		return "", "", fmt.Errorf("%q names the MCP server %q, which mcp: does not configure%s", entry, server, configured(servers))
	}
	return server, tool, nil
}

func configured(servers map[string]ServerConfig) string {
	if len(servers) == 0 {
		return " (it configures none)"
	}
	return " (it configures " + strings.Join(slices.Sorted(maps.Keys(servers)), ", ") + ")"
}

// Permits reports that server's tool may be offered.
func (a Allow) Permits(server, tool string) bool {
	if !a.narrow {
		return true
	}
	listed, ok := a.servers[server]
	return ok && (listed == nil || slices.Contains(listed, tool))
}

// Serves reports that at least one of server's tools may be offered: a
// server the list leaves out entirely is not started.
func (a Allow) Serves(server string) bool {
	if !a.narrow {
		return true
	}
	_, ok := a.servers[server]
	return ok
}

// Missing returns the tools the list names for server that are not among
// offered (the server's tools), sorted.
func (a Allow) Missing(server string, offered []string) []string {
	var out []string
	for _, t := range a.servers[server] {
		if !slices.Contains(offered, t) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}
