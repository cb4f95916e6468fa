package fusemount

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGitCloneSurvivesKill: the server (with passthrough and without) is
// killed by SIGKILL while git clone checks a repository's files out
// through the mount. On the host the clone's objects are whole (git fsck
// passes), and every file of the work tree is either absent or whole,
// but for the one git was writing when the server died (checkout.workers=1:
// one file at a time).
func TestGitCloneSurvivesKill(t *testing.T) {
	requireTool(t, "git")
	for name, env := range map[string]string{"default": "JULYFS_SERVE_PASSTHROUGH=", "no-passthrough": "JULYFS_SERVE_PASSTHROUGH=off"} {
		t.Run(name, func(t *testing.T) { testGitCloneSurvivesKill(t, env) })
	}
}

func testGitCloneSurvivesKill(t *testing.T, env string) {
	const files = 3000
	src := t.TempDir()
	for i := range files {
		p := filepath.Join(src, "d"+string(rune('a'+i%20)), "f"+strings.Repeat("x", i%7)+strconv.Itoa(i)+".txt")
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, bytes.Repeat([]byte("line of file "+strconv.Itoa(i)+"\n"), 1+i%50), 0o644))
	}
	gitEnv := []string{"HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}
	sh(t, `cd "$S" && git init -q && git add -A && git -c gc.auto=0 commit -qm files`, append(gitEnv, "S="+src)...)

	root := t.TempDir()
	s := startServer(t, root, env)
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	t.Cleanup(cancel)
	clone := exec.CommandContext(ctx, "git", "-c", "checkout.workers=1", "clone", "-q", "--no-hardlinks", src, filepath.Join(s.dir, "clone"))
	clone.Env = append(os.Environ(), gitEnv...)
	clone.WaitDelay = 5 * time.Second
	require.NoError(t, clone.Start())
	cloned := make(chan error, 1)
	go func() { cloned <- clone.Wait() }()
	// Once the checkout has written some files, mid-way.
	deadline := time.Now().Add(toolTimeout)
	for countFiles(filepath.Join(root, "clone"), ".git") < files/10 {
		select {
		case err := <-cloned:
			require.Fail(t, "git clone ended before the server was killed", "%v", err)
		default:
		}
		require.True(t, time.Now().Before(deadline), "no checkout through the mount within %v", toolTimeout)
		time.Sleep(time.Millisecond)
	}
	killServer(t, s)
	<-cloned

	host := filepath.Join(root, "clone")
	out, errOut, err := shErr(t, `git -C "$C" fsck --no-dangling`, append(gitEnv, "C="+host)...)
	assert.NoError(t, err, "git fsck on the host after the kill:\n%s%s", out, errOut)
	refDir := filepath.Join(t.TempDir(), "ref")
	sh(t, `mkdir "$R" && git -C "$S" archive HEAD | tar -x -C "$R"`, append(gitEnv, "S="+src, "R="+refDir)...)
	var present, partial []string
	require.NoError(t, filepath.WalkDir(host, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(host, p)
		got, err := os.ReadFile(p)
		require.NoError(t, err)
		want, err := os.ReadFile(filepath.Join(refDir, rel))
		require.NoError(t, err, "a file git never had: %s", rel)
		present = append(present, rel)
		if !bytes.Equal(got, want) {
			partial = append(partial, rel)
		}
		return nil
	}))
	t.Logf("%d of %d files checked out before the kill", len(present), files)
	assert.Less(t, len(present), files, "the kill came after the checkout: the test proves nothing")
	assert.LessOrEqual(t, len(partial), 1, "files not whole after the kill (only the one being written may be): %v", partial)
}

// countFiles counts the regular files under dir, skipping directories
// named skip.
func countFiles(dir, skip string) int {
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && d.Name() == skip:
			return filepath.SkipDir
		case d.Type().IsRegular():
			n++
		}
		return nil
	})
	return n
}
