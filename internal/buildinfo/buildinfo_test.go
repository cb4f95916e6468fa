package buildinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Path:      "github.com/julyfs/julyfs/cmd/julyfs",
		Main:      debug.Module{Path: "github.com/julyfs/julyfs", Version: "v0.1.0"},
		Settings: []debug.BuildSetting{
			{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
			{Key: "vcs.revision", Value: "a61c9b6f2e1d4c0b9d6a3c1e5f7a9b0c2d4e6f80"},
			{Key: "vcs.time", Value: "2026-12-01T12:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	in := fromBuildInfo(bi, "", "")
	assert.Equal(t, Info{
		Path: "github.com/julyfs/julyfs/cmd/julyfs", Version: "v0.1.0",
		Revision: "a61c9b6f2e1d4c0b9d6a3c1e5f7a9b0c2d4e6f80", Time: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
		Modified: true, GoVersion: "go1.26.8", Platform: "linux/arm64",
	}, in)
	assert.Equal(t, "v0.1.0 a61c9b6f2e1d-dirty", in.Short())
	assert.Equal(t, `julyfs v0.1.0
commit   a61c9b6f2e1d4c0b9d6a3c1e5f7a9b0c2d4e6f80 (modified)
date     2026-12-01T12:00:00Z (the commit's)
go       go1.26.8 linux/arm64
module   github.com/julyfs/julyfs/cmd/julyfs
`, in.String("julyfs"))

	// A link-time version wins; a work-tree build without VCS says so.
	bi.Main.Version, bi.Settings = "(devel)", nil
	in = fromBuildInfo(bi, "v0.2.0-rc1", "2026-12-02T09:30:00Z")
	assert.Equal(t, "v0.2.0-rc1", in.Short())
	assert.Contains(t, in.String("july"), "commit   unknown (built without version control information)\n")
	assert.Contains(t, in.String("july"), "built    2026-12-02T09:30:00Z\n")
}

// TestBinaryVersion builds julyfs with the version and date set at link
// time and version control stamping on, and checks what its version
// command prints against the checkout.
func TestBinaryVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): no revision to compare", err)
	}
	bin := filepath.Join(t.TempDir(), "julyfs")
	pkg := "github.com/julyfs/julyfs/internal/buildinfo"
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin,
		"-ldflags", "-X "+pkg+".version=v9.8.7 -X "+pkg+".date=2026-12-02T09:30:00Z", "./cmd/julyfs")
	build.Dir = root
	build.Env = append(os.Environ(), "GOFLAGS=")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	got, err := exec.Command(bin, "version").Output()
	require.NoError(t, err)
	lines := strings.Split(string(got), "\n")
	assert.Equal(t, "julyfs v9.8.7", lines[0])
	assert.Contains(t, string(got), "built    2026-12-02T09:30:00Z\n")
	assert.Contains(t, string(got), "go       go1.")
	if fi, err := os.Stat(filepath.Join(root, ".git")); err == nil && !fi.IsDir() {
		// go build does not stamp a build in a git worktree (.git is a
		// file there); a clone, as CI has, is stamped.
		t.Skip("a git worktree: go records no revision")
	}
	assert.Contains(t, lines[1], strings.TrimSpace(string(head)), "the commit line names HEAD")

	short, err := exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(short), "julyfs v9.8.7 "+strings.TrimSpace(string(head))[:12]), "--version: %q", short)
}
