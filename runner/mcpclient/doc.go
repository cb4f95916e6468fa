// Package mcpclient connects an agent to the MCP servers its agent.yaml
// lists under mcp: and offers each server's tools to the model as
// mcp__<server>__<tool>.
package mcpclient
