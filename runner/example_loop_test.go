package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/model/script"
	"github.com/julyfs/julyfs/runner/sessions"
)

// ExampleLoop runs one turn of an agent on an in-memory tree with a
// scripted model: the model reads /a.txt, then replies.
func ExampleLoop() {
	dir, _ := os.MkdirTemp("", "agent")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte("name: notes\nroot:\n  /:\n    temp:\n      /a.txt: \"hi\\n\"\n"), 0o644)

	a, err := runner.Load(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := a.Open(context.Background(), runner.SessionOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	log, err := sessions.New(filepath.Join(dir, ".july")).Create(sessions.Meta{Agent: a.Config.Name})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer log.Close()
	m, _ := script.Parse([]byte(`
turns:
  - replies:
      - calls: [{tool: Read, args: {path: /a.txt}}]
      - expect: [{contains: hi}]
        text: /a.txt says hi.
`), "example.yaml")
	loop, err := runner.NewLoop(s, log, runner.LoopOptions{
		Model: m,
		OnEvent: func(ev sessions.Event) {
			if ev.Type == sessions.TypeActionsRequested {
				fmt.Println("tool calls:", string(ev.Data))
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := loop.Run(context.Background(), "What does /a.txt say?")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("reply:", res.Text)
	fmt.Println("steps:", res.Steps)
	// Output:
	// tool calls: {"calls":[{"callId":"call_1_1_1","toolName":"Read","args":{"path":"/a.txt"}}]}
	// reply: /a.txt says hi.
	// steps: 2
}
