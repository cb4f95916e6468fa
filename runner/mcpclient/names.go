package mcpclient

import "strings"

// namePrefix starts every model-facing name of an MCP server's tool.
const namePrefix = "mcp__"

// nameSep separates the server from the tool in a model-facing name.
const nameSep = "__"

// MCPToolName returns the model-facing name of server's tool:
// mcp__<server>__<tool>. Server names may not contain "__" (agent.yaml
// validation refuses them), so the name parses back with ParseMCPToolName
// even when the tool's own name contains "__".
func MCPToolName(server, tool string) string {
	return namePrefix + server + nameSep + tool
}

// ParseMCPToolName splits a model-facing name made by MCPToolName into its
// server and tool. ok is false for a name that is not an MCP tool's (no
// mcp__ prefix, or an empty server or tool).
func ParseMCPToolName(name string) (server, tool string, ok bool) {
	rest, found := strings.CutPrefix(name, namePrefix)
	if !found {
		return "", "", false
	}
	server, tool, found = strings.Cut(rest, nameSep)
	if !found || server == "" || tool == "" {
		return "", "", false
	}
	return server, tool, true
}
