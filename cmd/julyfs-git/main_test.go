package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/internal/julyfscli"
	"github.com/julyfs/julyfs/plugins"
	_ "github.com/julyfs/julyfs/plugins/pluginkind" // the in-process CLI runs plugins
	"github.com/julyfs/julyfs/rootspec"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

var pluginBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "julyfs-git-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginBin = filepath.Join(dir, "julyfs-git")
	cmd := exec.Command("go", "build", "-o", pluginBin, ".")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building julyfs-git:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func openPlugin(t *testing.T, cfg plugins.Config) plugins.FS {
	t.Helper()
	cfg.Path = pluginBin
	cfg.Logger = hclog.NewNullLogger()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	fsys, err := plugins.OpenConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	return fsys
}

// TestConformanceInProcess runs the read-only suite on the tree itself.
func TestConformanceInProcess(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		g, err := seedRepo(files)
		require.NoError(t, err)
		return g
	}, vfstest.Options{ReadOnly: true})
}

// TestConformanceThroughPlugin runs it through the plugin boundary.
func TestConformanceThroughPlugin(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		return openPlugin(t, plugins.Config{Seeded: true, Seed: files})
	}, vfstest.Options{ReadOnly: true})
}

// fixtureRepo makes a repository on disk with two commits: v1 (tagged)
// and a later one on the default branch.
func fixtureRepo(t *testing.T) (dir string, v1, head string) {
	dir = t.TempDir()
	repo, err := git.PlainInit(dir, false)
	require.NoError(t, err)
	w, err := repo.Worktree()
	require.NoError(t, err)
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		_, err := w.Add(name)
		require.NoError(t, err)
	}
	sig := &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)}
	write("README.md", "# fixture\nTODO: v1 readme\n")
	write("src/main.go", "package main\n// TODO main\n")
	write("src/b-c/x.txt", "x\n")
	write("bin/blob.dat", "TODO\x00binary\n")
	h1, err := w.Commit("v1", &git.CommitOptions{Author: sig, Committer: sig})
	require.NoError(t, err)
	_, err = repo.CreateTag("v1.0.0", h1, nil)
	require.NoError(t, err)
	write("README.md", "# fixture\nlater\n")
	write("NEW.md", "new TODO\n")
	h2, err := w.Commit("v2", &git.CommitOptions{Author: sig, Committer: sig})
	require.NoError(t, err)
	return dir, h1.String(), h2.String()
}

func TestRepoAtRef(t *testing.T) {
	dir, v1, head := fixtureRepo(t)
	ctx := t.Context()

	at := openPlugin(t, plugins.Config{Args: map[string]string{"repo": dir, "ref": "v1.0.0"}})
	var paths []string
	for e, err := range at.Glob(ctx, "**", "/") {
		require.NoError(t, err)
		paths = append(paths, e.Path)
	}
	assert.Equal(t, []string{"/README.md", "/bin", "/bin/blob.dat", "/src", "/src/b-c", "/src/b-c/x.txt", "/src/main.go"}, paths)
	data, err := at.Read(ctx, "/README.md")
	require.NoError(t, err)
	assert.Equal(t, "# fixture\nTODO: v1 readme\n", string(data))

	var hits []string
	for h, err := range at.Grep(ctx, vfs.GrepQuery{Pattern: "TODO"}) {
		require.NoError(t, err)
		hits = append(hits, fmt.Sprintf("%s:%d", h.Path, h.LineNumber))
	}
	assert.Equal(t, []string{"/README.md:2", "/src/main.go:2"}, hits, "the binary blob is skipped")

	// Etags are blob hashes.
	repo, err := git.PlainOpen(dir)
	require.NoError(t, err)
	c, err := repo.CommitObject(mustHash(t, repo, v1))
	require.NoError(t, err)
	f, err := c.File("src/main.go")
	require.NoError(t, err)
	info, err := at.Stat(ctx, "/src/main.go")
	require.NoError(t, err)
	assert.Equal(t, f.Hash.String(), info.ETag)
	assert.Equal(t, int64(len("package main\n// TODO main\n")), info.Size)

	err = at.Write(ctx, "/x", []byte("y"))
	assert.ErrorIs(t, err, vfs.ErrReadOnly)
	assert.Equal(t, "read-only mount: /x", err.Error())

	// The same repository at HEAD and at a commit hash prefix of v1.
	tip := openPlugin(t, plugins.Config{Args: map[string]string{"repo": dir}})
	data, err = tip.Read(ctx, "/README.md")
	require.NoError(t, err)
	assert.Equal(t, "# fixture\nlater\n", string(data))
	info, err = tip.Stat(ctx, "/NEW.md")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindFile, info.Kind)
	info, err = at.Stat(ctx, "/NEW.md")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindMissing, info.Kind)
	_ = head

	// Removing the working tree's files changes nothing: no checkout.
	require.NoError(t, os.Remove(filepath.Join(dir, "src", "main.go")))
	data, err = at.Read(ctx, "/src/main.go")
	require.NoError(t, err)
	assert.Equal(t, "package main\n// TODO main\n", string(data))
}

func mustHash(t *testing.T, repo *git.Repository, rev string) (h [20]byte) {
	t.Helper()
	hash, err := repo.ResolveRevision("refs/tags/v1.0.0")
	require.NoError(t, err)
	require.Equal(t, rev, hash.String())
	return *hash
}

func TestBadInput(t *testing.T) {
	dir, _, _ := fixtureRepo(t)
	for _, c := range []struct {
		args map[string]string
		want string
	}{
		{map[string]string{"repo": dir, "ref": "v9"}, "plugin julyfs-git: ref=v9: not found in " + dir},
		{map[string]string{"repo": t.TempDir()}, "plugin julyfs-git: repo=/tmp/"},
		{map[string]string{"repo": dir, "color": "red"}, `plugin julyfs-git: unknown parameter "color" (known: repo, ref, max-file-size, max-read)`},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		_, err := plugins.OpenConfig(ctx, plugins.Config{Path: pluginBin, Args: c.args, Logger: hclog.NewNullLogger()})
		cancel()
		if assert.Error(t, err) {
			assert.Contains(t, err.Error(), c.want)
			assert.NotContains(t, err.Error(), "\n")
		}
	}
}

// TestCLI mounts the plugin through julyfs's own flags, beside another
// mount, and runs julyfs conformance on it.
func TestCLI(t *testing.T) {
	dir, _, _ := fixtureRepo(t)
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		code := julyfscli.Run(ctx, append([]string{"julyfs"}, args...), strings.NewReader(""), &stdout, &stderr, julyfscli.Heavy{})
		return code, stdout.String(), stderr.String()
	}
	spec := "/repo=plugin:" + pluginBin + "?repo=" + dir + "&ref=v1.0.0"
	code, out, errOut := run("grep", "--mount", spec, "--mount", "/notes=temp:", "TODO", "/")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "/repo/README.md:2:TODO: v1 readme\n/repo/src/main.go:2:// TODO main\n", out)

	// A bad mount is bound with a warning, the other mount serves, and its
	// own calls fail with one line naming the plugin.
	var warnings []string
	wctx := rootspec.WithWarn(t.Context(), func(msg string) { warnings = append(warnings, msg) })
	bad := []string{"--mount", "/repo=plugin:" + pluginBin + "?repo=" + dir + "&ref=nope", "--mount", "/notes=temp:"}
	var stdout, stderr bytes.Buffer
	code = julyfscli.Run(wctx, append(append([]string{"julyfs", "ls"}, bad...), "/"), strings.NewReader(""), &stdout, &stderr, julyfscli.Heavy{})
	assert.Equal(t, 0, code, stderr.String())
	assert.Equal(t, "/notes\n/repo\n", stdout.String())
	if assert.Len(t, warnings, 1) {
		assert.Contains(t, warnings[0], ": mount /repo: plugin julyfs-git: ref=nope: not found in ")
	}
	code, _, errOut = run(append(append([]string{"ls"}, bad...), "/repo")...)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "/repo: plugin julyfs-git: ref=nope: not found in ")

	code, out, errOut = run("conformance", "--mount", "/=plugin:"+pluginBin, "--read-only")
	assert.Equal(t, 0, code, errOut)
	assert.Regexp(t, `(?m)^[1-9][0-9]* passed, 0 failed$`, out)
}
