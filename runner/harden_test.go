package runner

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoadNullToolsRefused: a tools: key whose entries are all commented
// out is null, and must not grant the whole host catalog (Shell included).
func TestLoadNullToolsRefused(t *testing.T) {
	for _, y := range []string{
		"tools:\n",
		"tools:\n  # - read\n  # - shell\n",
		"tools: ~\n",
		"tools: null\n",
	} {
		_, err := Load(agentDir(t, "-- agent.yaml --\nname: x\n"+y))
		require.Error(t, err, "%q", y)
		assert.Contains(t, problemsOf(t, err), "tools: is empty (null): list the tools the agent may use, write tools: [] for none, or remove tools: for the default set", "%q", y)
	}
	// An explicit empty list is no tools at all: nothing served, no Shell.
	a, err := Load(agentDir(t, "-- agent.yaml --\nname: x\ntools: []\n"))
	require.NoError(t, err)
	assert.Empty(t, a.Plan.Served())
	assert.False(t, a.Plan.Shell)
	assert.Empty(t, a.Plan.Harness)
}
