package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

// ExampleRootFactory gives each session its own tree, built once per
// session from its RootContext.
func ExampleRootFactory() {
	dir, _ := os.MkdirTemp("", "agent")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte("name: notes\nroot:\n  /:\n    temp: {}\n"), 0o644)
	a, err := runner.Load(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	factory := func(ctx context.Context, rc runner.RootContext) (vfs.FileSystem, error) {
		return temp.New(map[string][]byte{"/whoami": []byte(rc.AgentName + " in " + rc.SessionID)})
	}
	for _, id := range []string{"ses_a", "ses_b"} {
		s, err := a.Open(context.Background(), runner.SessionOptions{SessionID: id, RootFactory: factory})
		if err != nil {
			fmt.Println(err)
			return
		}
		data, _ := s.FS().Read(context.Background(), "/whoami")
		fmt.Println(string(data))
		s.Close()
	}
	// Output:
	// notes in ses_a
	// notes in ses_b
}
