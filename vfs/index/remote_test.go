package index_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
	"github.com/julyfs/julyfs/vfs/local"
)

// followerEnv makes the test binary a following process (runFollower):
// ROOT|DIR|TREE.
const followerEnv = "JULYFS_TEST_INDEX_FOLLOWER"

// runFollower opens the index DIR of the local tree ROOT with Follow,
// says "ready" on stdout and serves until stdin closes.
func runFollower() {
	args := strings.Split(os.Getenv(followerEnv), "|")
	tree, err := local.New(args[0])
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	f, err := index.Open(context.Background(), tree, args[1], index.Options{Follow: true, Tree: args[2]})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	if err := f.Close(); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	os.Exit(0)
}

// follower is a following process started by startFollower.
type followerProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan struct{} // closed once it exited; then err is its exit
	err    error
}

// startFollower starts a process that follows the index dir of root (as
// julyfs mount --index does) and returns once it serves.
func startFollower(t *testing.T, root, dir, tree string) *followerProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), followerEnv+"="+root+"|"+dir+"|"+tree)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	p := &followerProc{cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
		io.Copy(io.Discard, stdout)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-p.exited
		}
	})
	select {
	case line := <-ready:
		require.Equal(t, "ready\n", line, "the follower did not start")
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		require.Fail(t, "the follower did not start within 60s")
	}
	return p
}

// stop ends the follower cleanly.
func (p *followerProc) stop(t *testing.T) {
	t.Helper()
	p.stdin.Close()
	select {
	case <-p.exited:
		require.NoError(t, p.err)
	case <-time.After(30 * time.Second):
		require.Fail(t, "the follower did not stop within 30s")
	}
}

// TestAskFollower: while another process follows the index (julyfs mount
// --index, july run), an Open without Follow asks it instead of opening
// the index (which that process holds): its searches see every change made
// before them, behind julyfs's back or through the asking FS, at once; an
// index of another tree is refused naming both; Direct still gets
// ErrInUse; once the follower is gone (cleanly, or killed, leaving its
// socket) the index is opened as usual.
func TestAskFollower(t *testing.T) {
	root := hostTree(t, syncFixture)
	dir := filepath.Join(t.TempDir(), "idx")
	p := startFollower(t, root, dir, "/=local:"+root)

	tree := localTree(t, root)
	f, err := index.Open(t.Context(), tree, dir, index.Options{Sync: index.SyncAuto, Tree: "/=local:" + root})
	require.NoError(t, err)
	assert.Equal(t, p.cmd.Process.Pid, f.FollowedBy())
	assert.Equal(t, []string{"/a/one.go"}, found(t, f, "alpha"))

	// Changes behind julyfs's back, searched at once: no waiting.
	host := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	for i := range 5 {
		word := fmt.Sprintf("Foxtrot%dx", i)
		require.NoError(t, os.WriteFile(host("a/one.go"), []byte("package a\n\nfunc "+word+"() {}\n"), 0o644))
		assert.Equal(t, []string{"/a/one.go"}, found(t, f, word), "an in-place edit, searched right after")
	}
	assert.Empty(t, found(t, f, "alpha"))
	require.NoError(t, os.Remove(host("b/c/deep.go")))
	assert.Empty(t, found(t, f, "charlie"))
	// Through the asking FS.
	require.NoError(t, f.Write(t.Context(), "/a/new.go", []byte("func Juliet() {}\n")))
	assert.Equal(t, []string{"/a/new.go"}, found(t, f, "juliet"))
	require.NoError(t, f.Delete(t.Context(), "/a/new.go"))
	assert.Empty(t, found(t, f, "juliet"))
	// Results carry lines and snippets, scoped and limited.
	res := search(t, f, vfs.SearchQuery{Query: "bravo", Path: "/a", MaxResults: 1})
	require.Len(t, res, 1)
	assert.Equal(t, 3, res[0].LineNumber)
	assert.Equal(t, "func Bravo() {}", res[0].Snippet)
	assert.Empty(t, search(t, f, vfs.SearchQuery{Query: "bravo", Path: "/b"}))
	require.NoError(t, f.Close())

	// Another tree is refused, naming both.
	_, err = index.Open(t.Context(), tree, dir, index.Options{Tree: "/=local:/elsewhere"})
	require.Error(t, err)
	assert.True(t, errors.Is(err, index.ErrOtherTree), "%v", err)
	assert.Contains(t, err.Error(), `"/=local:`+root+`"`)
	assert.Contains(t, err.Error(), `"/=local:/elsewhere"`)
	// Direct opens the index itself, which the follower holds.
	_, err = index.Open(t.Context(), tree, dir, index.Options{Direct: true})
	assert.True(t, errors.Is(err, index.ErrInUse), "%v", err)

	p.stop(t)
	_, err = os.Lstat(filepath.Join(dir, "julyfs-follow.sock"))
	assert.True(t, errors.Is(err, os.ErrNotExist), "the socket is removed: %v", err)
	reopen(t, tree, dir, index.Options{Sync: index.SyncAuto}, func(f *index.FS) {
		assert.Zero(t, f.FollowedBy())
		assert.Equal(t, []string{"/a/one.go"}, found(t, f, "foxtrot4x"))
	})

	// A follower killed leaves its socket, which nobody answers.
	p = startFollower(t, root, dir, "/=local:"+root)
	require.NoError(t, p.cmd.Process.Kill())
	<-p.exited
	_, err = os.Lstat(filepath.Join(dir, "julyfs-follow.sock"))
	require.NoError(t, err, "a killed follower's socket stays")
	reopen(t, tree, dir, index.Options{Sync: index.SyncAuto}, func(f *index.FS) {
		assert.Zero(t, f.FollowedBy())
		assert.Equal(t, []string{"/a/two.go"}, found(t, f, "bravo"))
	})

	// A follower not told its tree (july run) answers for the tree the
	// index records.
	p = startFollower(t, root, dir, "")
	_, err = index.Open(t.Context(), tree, dir, index.Options{Tree: "/=local:/elsewhere"})
	assert.True(t, errors.Is(err, index.ErrOtherTree), "%v", err)
	reopen(t, tree, dir, index.Options{Tree: "/=local:" + root}, func(f *index.FS) {
		assert.Equal(t, p.cmd.Process.Pid, f.FollowedBy())
		assert.Equal(t, []string{"/a/two.go"}, found(t, f, "bravo"))
	})
	p.stop(t)
}
