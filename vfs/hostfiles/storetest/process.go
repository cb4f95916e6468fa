package storetest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/hostfiles"
)

// The environment of a helper process: what it does, the store spec (a
// directory or URL passed to the package's open function), the scope and
// a count.
const (
	envHelper = "HOSTFILES_STORETEST_HELPER"
	envSpec   = "HOSTFILES_STORETEST_SPEC"
	envScope  = "HOSTFILES_STORETEST_SCOPE"
	envN      = "HOSTFILES_STORETEST_N"
)

// HelperMain runs the helper process when the test binary was started as
// one by [CounterProcesses] or [KillWriter], and exits; otherwise it
// returns. Call it first in TestMain with the package's store opener.
func HelperMain(open func(spec string) (hostfiles.Store, error)) {
	mode := os.Getenv(envHelper)
	if mode == "" {
		return
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(2)
	}
	s, err := open(os.Getenv(envSpec))
	if err != nil {
		fail(err)
	}
	sc := hostfiles.Scope(os.Getenv(envScope))
	n, _ := strconv.Atoi(os.Getenv(envN))
	fsys, err := hostfiles.New(s, sc)
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	switch mode {
	case "counter":
		conflicts, err := Increment(ctx, fsys, n)
		if err != nil {
			fail(err)
		}
		fmt.Println(conflicts)
	case "writeloop":
		// Rewrite /big with n bytes of one letter after another, forever;
		// say "ready" after the first write.
		for i := 0; ; i++ {
			data := bytes.Repeat([]byte{byte('b' + i%20)}, n)
			if err := fsys.Write(ctx, "/big", data); err != nil {
				fail(err)
			}
			if i == 0 {
				fmt.Println("ready")
			}
		}
	case "write":
		// Write /d unconditionally, as another host would.
		if err := fsys.Write(ctx, "/d", []byte(remoteWrite)); err != nil {
			fail(err)
		}
	case "readdelete":
		// Read /d, say "read", wait for a line on stdin, then delete /d and
		// print the outcome: "deleted" or the error.
		if _, err := fsys.Read(ctx, "/d"); err != nil {
			fail(err)
		}
		fmt.Println("read")
		bufio.NewReader(os.Stdin).ReadString('\n')
		if err := fsys.Delete(ctx, "/d"); err != nil {
			fmt.Println(err)
		} else {
			fmt.Println("deleted")
		}
	default:
		fail(fmt.Errorf("unknown helper %q", mode))
	}
	s.Close()
	os.Exit(0)
}

func helper(t *testing.T, mode, spec string, sc hostfiles.Scope, n int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"="+mode, envSpec+"="+spec, envScope+"="+string(sc), envN+"="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	return cmd
}

// CounterProcesses runs procs helper processes (separate "hosts"), each
// incrementing the counter in scope sc of the store at spec increments
// times with read, increment, CAS write and retry; the counter must end at
// procs*increments exactly.
func CounterProcesses(t *testing.T, s hostfiles.Store, spec string, sc hostfiles.Scope, procs, increments int) {
	ctx := t.Context()
	_, err := s.Put(ctx, sc, "/counter", []byte("0"), vfs.Precondition{})
	require.NoError(t, err)
	var wg sync.WaitGroup
	outs := make([]bytes.Buffer, procs)
	errs := make([]error, procs)
	for i := range procs {
		cmd := helper(t, "counter", spec, sc, increments)
		cmd.Stdout = &outs[i]
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill() })
		wg.Go(func() {
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case errs[i] = <-done:
			case <-time.After(3 * time.Minute):
				cmd.Process.Kill()
				errs[i] = fmt.Errorf("helper %d did not finish within 3 minutes", i)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "helper %d", i)
	}
	data, _, err := s.Get(ctx, sc, "/counter")
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(procs*increments), string(data), "%d processes x %d increments", procs, increments)
	conflicts := 0
	for i := range outs {
		n, _ := strconv.Atoi(string(bytes.TrimSpace(outs[i].Bytes())))
		conflicts += n
	}
	t.Logf("%d processes x %d increments: %d conflicts retried", procs, increments, conflicts)
}

// KillWriter starts a helper rewriting a size-byte file as fast as it can,
// kills it with SIGKILL at a random moment, and checks the file holds one
// whole version (size bytes of one letter), never a mix; rounds times.
func KillWriter(t *testing.T, s hostfiles.Store, spec string, sc hostfiles.Scope, size, rounds int) {
	ctx := t.Context()
	_, err := s.Put(ctx, sc, "/big", bytes.Repeat([]byte{'a'}, size), vfs.Precondition{})
	require.NoError(t, err)
	for round := range rounds {
		cmd := helper(t, "writeloop", spec, sc, size)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill() })
		ready := make(chan bool, 1)
		go func() {
			line, _ := bufio.NewReader(out).ReadString('\n')
			ready <- line == "ready\n"
		}()
		select {
		case ok := <-ready:
			require.True(t, ok, "round %d: helper did not start writing", round)
		case <-time.After(time.Minute):
			t.Fatalf("round %d: helper not ready within a minute", round)
		}
		time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		cmd.Wait()
		data, _, err := s.Get(ctx, sc, "/big")
		require.NoError(t, err)
		require.Len(t, data, size, "round %d: a killed writer left a file of the wrong size", round)
		assert.Equal(t, bytes.Repeat(data[:1], size), data, "round %d: a killed writer left a mix of versions", round)
	}
}

// remoteWrite is what the "write" helper writes to /d.
const remoteWrite = "written by another process"

// runHelper runs a helper process to its end (within a minute) and
// returns its standard output.
func runHelper(t *testing.T, mode, spec string, sc hostfiles.Scope) string {
	cmd := helper(t, mode, spec, sc, 0)
	var out bytes.Buffer
	cmd.Stdout = &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "helper %s", mode)
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("helper %s did not finish within a minute", mode)
	}
	return out.String()
}

// DeleteProcesses checks that a Delete is a CAS across processes, both
// ways: this process's tree reads /d, another process writes it, and this
// tree's Delete is a conflict that keeps the other write; then another
// process reads /d, this one writes it, and the other process's Delete is
// a conflict.
func DeleteProcesses(t *testing.T, s hostfiles.Store, spec string, sc hostfiles.Scope) {
	ctx := t.Context()
	fsys, err := hostfiles.New(s, sc)
	require.NoError(t, err)
	require.NoError(t, fsys.Write(ctx, "/d", []byte("mine")))
	runHelper(t, "write", spec, sc)
	err = fsys.Delete(ctx, "/d")
	assert.EqualError(t, err, "conflict: /d", "a delete after another process's write")
	data, _, err := s.Get(ctx, sc, "/d")
	require.NoError(t, err, "the refused delete removed the file")
	assert.Equal(t, remoteWrite, string(data))

	// The other way round: the other process read, this one writes.
	cmd := helper(t, "readdelete", spec, sc, 0)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	outPipe, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := make(chan string, 2)
	go func() {
		r := bufio.NewReader(outPipe)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- strings.TrimSuffix(line, "\n")
		}
	}()
	next := func() string {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the helper ended early")
			return l
		case <-time.After(time.Minute):
			t.Fatal("no answer from the helper within a minute")
			return ""
		}
	}
	require.Equal(t, "read", next())
	_, err = fsys.Read(ctx, "/d")
	require.NoError(t, err)
	require.NoError(t, fsys.Write(ctx, "/d", []byte("changed after the other read")))
	_, err = io.WriteString(in, "go\n")
	require.NoError(t, err)
	assert.Equal(t, "conflict: /d", next(), "the other process's delete after this write")
	data, _, err = s.Get(ctx, sc, "/d")
	require.NoError(t, err)
	assert.Equal(t, "changed after the other read", string(data))

	// After a fresh read the delete goes through.
	_, err = fsys.Read(ctx, "/d")
	require.NoError(t, err)
	require.NoError(t, fsys.Delete(ctx, "/d"))
}
