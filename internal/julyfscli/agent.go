package julyfscli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/julyfs/julyfs/rootspec"
)

// This file is --agent DIR: the tree an agent's model sees, from the
// root: of DIR/agent.yaml (its other keys are the runner's and are not
// read here, so julyfs does not link the runner). Relative directories
// resolve against DIR, as july does. The agent's per-turn /tmp scratch is
// not part of its root and is not mounted.

// agentFile is an agent's definition inside its directory.
const agentFile = "agent.yaml"

// AgentTable returns the mount table of the agent in dir.
func AgentTable(dir string) (rootspec.Table, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(abs, agentFile)
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--agent %s: %w", dir, unwrapPathErr(err))
	}
	var cfg struct {
		Root yaml.Node `yaml:"root"`
	}
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %v", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if cfg.Root.Kind == 0 || (cfg.Root.Kind == yaml.ScalarNode && cfg.Root.Tag == "!!null") {
		return nil, fmt.Errorf("agent %s has no root: (it runs on the host disk); give that directory with --mount /=local:DIR", dir)
	}
	if bytes.Contains(data, []byte("{sessionId}")) || bytes.Contains(data, []byte("{agentName}")) {
		if hasToken(&cfg.Root) {
			return nil, fmt.Errorf("agent %s has a live root ({sessionId} or {agentName}): its tree is built per session; watch a session's tree with july run --mount DIR", dir)
		}
	}
	t, err := rootspec.DecodeMountsFile(&cfg.Root, file, abs)
	if err != nil {
		return nil, err
	}
	if len(t) == 0 {
		return nil, fmt.Errorf("%s: the root's mount table is empty", file)
	}
	return t, nil
}

func hasToken(n *yaml.Node) bool {
	if n.Kind == yaml.ScalarNode {
		return strings.Contains(n.Value, "{sessionId}") || strings.Contains(n.Value, "{agentName}")
	}
	for _, c := range n.Content {
		if hasToken(c) {
			return true
		}
	}
	return false
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}
