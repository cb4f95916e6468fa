package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/tools"
)

const authoredAgent = `-- agent.yaml --
name: x
tools: [read]
root:
  /:
    temp:
      /a.txt: "hi\n"
-- tools/whoami.yaml --
description: Says which session and tree it runs in.
inputSchema: {type: object, properties: {tag: {type: string}}, additionalProperties: false}
command: [sh, tools/whoami.sh]
effect: read
-- tools/whoami.sh --
printf '%s %s ' "$JULY_SESSION_ID" "${JULY_TREE:--}"; cat
`

// TestAuthoredToolsAlwaysServed checks that an authored tool is served
// next to the allowlisted tools (tools: narrows the built-in tools only),
// that the dispatcher validates its arguments, and that it gets the
// session's id through the loop.
func TestAuthoredToolsAlwaysServed(t *testing.T) {
	f := newLoopFixture(t, authoredAgent, SessionOptions{})
	turn, err := f.sess.Turn()
	require.NoError(t, err)
	var names []string
	for _, tl := range turn.Tools() {
		names = append(names, tl.Name)
	}
	assert.Equal(t, []string{"Read", "whoami"}, names)
	assert.Equal(t, tools.EffectRead, turn.Tool("whoami").Effect)

	r := turn.Call(context.Background(), "whoami", []byte(`{"tag": 1}`))
	assert.True(t, r.IsError)
	assert.Contains(t, r.String(), "invalid arguments for whoami")

	f.sess.SetTreeMount("/mnt/x")
	l := f.loop(t, `
turns:
  - replies:
      - calls:
          - {tool: whoami, args: {tag: t1}}
      - expect:
          - {tool: whoami, error: false, matches: '^ses_[0-9A-Z]+ /mnt/x \{"tag":"t1"\}$'}
        text: done
`, LoopOptions{})
	res, err := l.Run(context.Background(), "who?")
	require.NoError(t, err)
	assert.Equal(t, "done", res.Text)
}

func TestAuthoredToolProblems(t *testing.T) {
	_, err := Load(agentDir(t, `-- agent.yaml --
name: x
-- tools/Task.yaml --
description: clash
command: [true]
-- tools/bad.yaml --
description: bad
command: [true]
effect: sometimes
`))
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	var got []string
	for _, p := range ve.Problems {
		got = append(got, p.String())
	}
	assert.Equal(t, []string{
		"tools/Task.yaml: an authored tool named like the built-in Task fails closed: the runner serves Task itself; rename or remove tools/Task.yaml",
		`tools/bad.yaml:3: effect "sometimes": want read or write`,
	}, got)

	a, err := Load(agentDir(t, "-- agent.yaml --\nname: x\n-- tools/gone.yaml --\ndescription: gone\ncommand: [julyfs-no-such-tool-xyz]\n"))
	require.NoError(t, err, "a missing command loads: it is july validate's problem and the call's error")
	ps := a.AuthoredProblems()
	require.Len(t, ps, 1)
	assert.Equal(t, `tools/gone.yaml:2: command "julyfs-no-such-tool-xyz" is not on PATH`, ps[0].String())
	assert.True(t, strings.HasPrefix(ps[0].Field, "tools/gone.yaml"))
}
