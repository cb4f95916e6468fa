package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/mcpclient"
	"github.com/julyfs/julyfs/runner/tools"
)

// mcpServerJSON is one MCP server in `july tools` output.
type mcpServerJSON struct {
	Server  string   `json:"server"`
	Tools   []string `json:"tools"`
	Refused []string `json:"refused,omitempty"`
	Missing []string `json:"missing,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// connectMCP starts the agent's MCP servers for july tools and july
// validate; close stops them.
func connectMCP(c *cli.Context, a *runner.Agent) ([]*tools.Tool, []mcpclient.Status, func()) {
	if len(a.Config.MCP) == 0 {
		return nil, nil, func() {}
	}
	return a.ConnectMCP(c.Context)
}

func mcpServersJSON(status []mcpclient.Status) []mcpServerJSON {
	out := []mcpServerJSON{}
	for _, st := range status {
		sj := mcpServerJSON{Server: st.Server, Tools: st.Tools, Refused: st.Refused, Missing: st.Missing}
		if sj.Tools == nil {
			sj.Tools = []string{}
		}
		if st.Err != nil {
			sj.Error = st.Err.Error()
		}
		out = append(out, sj)
	}
	return out
}

// validateMCP connects to the agent's MCP servers and prints each one's
// tools; a server it cannot reach, or an allowlisted tool or an approvals:
// key's tool a server does not list, is a problem (exit 1).
func validateMCP(c *cli.Context, a *runner.Agent) error {
	_, status, closeFn := connectMCP(c, a)
	defer closeFn()
	w := c.App.Writer
	for _, st := range status {
		if st.Err != nil {
			continue
		}
		fmt.Fprintf(w, "mcp server %s: %d tools: %s\n", st.Server, len(st.Tools), list(st.Tools))
		for _, r := range st.Refused {
			fmt.Fprintf(c.App.ErrWriter, "warning: mcp server %s: %s; it is not offered\n", st.Server, r)
		}
	}
	var ps []runner.Problem
	for _, err := range mcpclient.Problems(status) {
		ps = append(ps, runner.Problem{Field: "mcp", Message: err.Error()})
	}
	ps = append(ps, a.MCPApprovalProblems(status)...)
	if len(ps) == 0 {
		return nil
	}
	fmt.Fprintln(c.App.ErrWriter, (&runner.ValidationError{Dir: c.Args().First(), Problems: ps}).Error())
	return errReported
}
