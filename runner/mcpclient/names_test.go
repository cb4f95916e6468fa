package mcpclient

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMCPToolNameRoundTrip(t *testing.T) {
	cases := []struct{ server, tool string }{
		{"github", "create_issue"},
		{"docs", "search"},
		{"x", "a__b"},
		{"my-server", "get-tiny-image"},
	}
	for _, c := range cases {
		name := MCPToolName(c.server, c.tool)
		s, tl, ok := ParseMCPToolName(name)
		assert.True(t, ok, name)
		assert.Equal(t, c.server, s, name)
		assert.Equal(t, c.tool, tl, name)
	}
	assert.Equal(t, "mcp__github__create_issue", MCPToolName("github", "create_issue"))
}

func TestParseMCPToolNameRefuses(t *testing.T) {
	for _, name := range []string{"Read", "mcp__", "mcp__github", "mcp__github__", "mcp____tool", "mcp_github__x"} {
		_, _, ok := ParseMCPToolName(name)
		assert.False(t, ok, name)
	}
}
