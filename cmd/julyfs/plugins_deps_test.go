package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoPluginMachinery checks that julyfs links neither gRPC nor
// go-plugin (their init functions cost every run ~10 ms): plugin mounts
// are julyfsd's.
func TestNoPluginMachinery(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "list", "-deps", "github.com/julyfs/julyfs/cmd/julyfs").Output()
	require.NoError(t, err, "go list -deps")
	for _, p := range strings.Fields(string(out)) {
		for _, heavy := range []string{"google.golang.org/grpc", "github.com/hashicorp/go-plugin", "github.com/julyfs/julyfs/plugins"} {
			assert.False(t, strings.HasPrefix(p, heavy), "cmd/julyfs links %s; only julyfsd may", p)
		}
	}
}
