package plugins_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

// bins holds the helper binaries TestMain builds.
var bins struct {
	dir     string
	plugin  string // plugins/internal/testplugin
	version string // the same, speaking protocol version 99
}

func TestMain(m *testing.M) {
	if os.Getenv("PLUGINS_TEST_HOST") != "" {
		hostMain()
		return
	}
	dir, err := os.MkdirTemp("", "plugins-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins.dir = dir
	bins.plugin = filepath.Join(dir, "testplugin")
	bins.version = filepath.Join(dir, "testplugin-v99")
	build := func(out string, flags ...string) {
		args := append([]string{"build", "-o", out}, flags...)
		args = append(args, "./internal/testplugin")
		cmd := exec.Command("go", args...)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building the test plugin:", err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	build(bins.plugin)
	build(bins.version, "-ldflags", "-X github.com/julyfs/julyfs/plugins.protocolVersionOverride=99")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// hostMain is the host process of TestHostKilledLeavesNoPlugin: it opens
// the plugin, prints the plugin's pid and waits to be killed.
func hostMain() {
	fsys, err := plugins.Open(context.Background(), os.Getenv("PLUGINS_TEST_HOST"), map[string]string{"mode": "faults"})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	info, err := fsys.Stat(context.Background(), "/pid")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(info.ETag)
	time.Sleep(time.Minute)
	os.Exit(0)
}

// quiet is a logger for tests that do not look at logs.
var quiet = hclog.NewNullLogger()

func open(t *testing.T, cfg plugins.Config) plugins.FS {
	t.Helper()
	if cfg.Path == "" {
		cfg.Path = bins.plugin
	}
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	fsys, err := plugins.OpenConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	return fsys
}

func openErr(t *testing.T, cfg plugins.Config) error {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	fsys, err := plugins.OpenConfig(ctx, cfg)
	if err == nil {
		fsys.Close()
	}
	require.Error(t, err)
	return err
}

// TestConformance runs the whole suite through the plugin boundary, on a
// writable temp tree inside the plugin process.
func TestConformance(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		return open(t, plugins.Config{Seeded: true, Seed: files})
	}, vfstest.Options{})
}

func TestCapabilitiesNegotiated(t *testing.T) {
	fsys := open(t, plugins.Config{})
	_, ra := fsys.(vfs.RangeReader)
	_, wi := fsys.(vfs.ConditionalWriter)
	_, w := fsys.(vfs.Notifier)
	assert.True(t, ra && wi && w, "temp has ReadAt, WriteIf and Watch: ra=%v wi=%v w=%v", ra, wi, w)

	faults := open(t, plugins.Config{Args: map[string]string{"mode": "faults"}})
	_, ra = faults.(vfs.RangeReader)
	_, wi = faults.(vfs.ConditionalWriter)
	_, w = faults.(vfs.Notifier)
	assert.False(t, ra || wi || w, "the faults tree hides temp's capabilities: ra=%v wi=%v w=%v", ra, wi, w)
}

// readModes are the three ways a large file's contents travel to the
// host: copied out of the plugin's memory, through a memory file, and in
// gRPC chunks.
var readModes = map[string]plugins.Config{
	"ProcessMemory": {},
	"MemoryFile":    {NoProcessMemory: true},
	"Chunks":        {NoSharedMemory: true},
}

// TestLargeFileRoundTrip moves 64 MiB both ways, each way a read can go.
func TestLargeFileRoundTrip(t *testing.T) {
	for name, cfg := range readModes {
		t.Run(name, func(t *testing.T) { largeFileRoundTrip(t, cfg) })
	}
}

func largeFileRoundTrip(t *testing.T, cfg plugins.Config) {
	fsys := open(t, cfg)
	data := make([]byte, 64<<20+123)
	_, err := rand.Read(data)
	require.NoError(t, err)
	require.NoError(t, fsys.Write(t.Context(), "/big.bin", data))
	got, err := fsys.Read(t.Context(), "/big.bin")
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, got), "64 MiB read back differs")
	noDirect, noShared := plugins.Fallbacks(fsys)
	assert.False(t, noDirect, "the read fell back from the plugin's memory to a memory file")
	assert.False(t, noShared, "the read fell back from memory files to chunks")

	info, err := fsys.Stat(t.Context(), "/big.bin")
	require.NoError(t, err)
	assert.Equal(t, int64(len(data)), info.Size)

	// A ranged read larger than one chunk, across the end of the file.
	p := make([]byte, 3<<20)
	off := int64(len(data) - 2<<20)
	n, err := vfs.ReadAt(t.Context(), fsys, "/big.bin", p, off)
	assert.Equal(t, io.EOF, err)
	assert.Equal(t, 2<<20, n)
	assert.True(t, bytes.Equal(data[off:], p[:n]))
}

func TestErrorsEndToEnd(t *testing.T) {
	fsys := open(t, plugins.Config{Seeded: true, Seed: map[string][]byte{"/d/f.txt": []byte("x\n")}})
	ctx := t.Context()
	cases := []struct {
		err      error
		sentinel error
		msg      string
	}{
		{ignore(fsys.Read(ctx, "/missing")), vfs.ErrNotFound, "not found: /missing"},
		{ignore(fsys.Read(ctx, "/d")), vfs.ErrIsDir, "is a directory: /d"},
		{fsys.Delete(ctx, "/nope"), vfs.ErrNotFound, "not found: /nope"},
		{last(fsys.Grep(ctx, vfs.GrepQuery{Pattern: "("})), vfs.ErrInvalidGrepPattern, "invalid grep pattern: ("},
		{last(fsys.Glob(ctx, "[", "/")), vfs.ErrInvalidGlobPattern, "invalid glob pattern: ["},
	}
	for _, c := range cases {
		require.Error(t, c.err, c.msg)
		assert.Equal(t, c.msg, c.err.Error())
		assert.ErrorIs(t, c.err, c.sentinel)
		var pe *vfs.PathError
		assert.ErrorAs(t, c.err, &pe)
	}
	_, err := vfs.WriteIf(ctx, fsys, "/d/f.txt", []byte("y"), vfs.Precondition{IfMatch: "stale"})
	assert.ErrorIs(t, err, vfs.ErrConflict)
	assert.Equal(t, "conflict: /d/f.txt", err.Error())
}

func ignore[T any](_ T, err error) error { return err }

func last[E any](seq func(func(E, error) bool)) error {
	var final error
	for _, err := range seq {
		final = err
	}
	return final
}

func faults(t *testing.T, logger hclog.Logger) plugins.FS {
	return open(t, plugins.Config{Args: map[string]string{"mode": "faults"}, Logger: logger})
}

func stats(t *testing.T, fsys vfs.FileSystem) vfs.FileInfo {
	info, err := fsys.Stat(t.Context(), "/stats")
	require.NoError(t, err)
	return info
}

// TestBreakStopsPluginStream checks that breaking out of a stream on the
// host stops the producing loop inside the plugin.
func TestBreakStopsPluginStream(t *testing.T) {
	fsys := faults(t, nil)
	n := 0
	for _, err := range fsys.List(t.Context(), "/inf") {
		require.NoError(t, err)
		if n++; n == 10 {
			break
		}
	}
	require.Eventually(t, func() bool { return stats(t, fsys).ETag == "stopped" }, 10*time.Second, 10*time.Millisecond,
		"the plugin still produces after the host broke out")
	a := stats(t, fsys).Size
	time.Sleep(50 * time.Millisecond)
	assert.Equal(t, a, stats(t, fsys).Size, "the plugin kept yielding")

	// Cancelling the context midway stops it too.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	n = 0
	var final error
	for _, err := range fsys.List(ctx, "/inf") {
		if err != nil {
			final = err
			break
		}
		if n++; n == 10 {
			cancel()
		}
	}
	assert.ErrorIs(t, final, context.Canceled)
	require.Eventually(t, func() bool { return stats(t, fsys).ETag == "stopped" }, 10*time.Second, 10*time.Millisecond)
}

func pidOf(t *testing.T, fsys vfs.FileSystem) int {
	info, err := fsys.Stat(t.Context(), "/pid")
	require.NoError(t, err)
	pid, err := strconv.Atoi(info.ETag)
	require.NoError(t, err)
	return pid
}

// TestKill9MidStream kills the plugin during a stream: the stream ends
// with an error naming the plugin, and the next call restarts it.
func TestKill9MidStream(t *testing.T) {
	fsys := faults(t, nil)
	pid := pidOf(t, fsys)
	require.NotNil(t, plugins.Unwrap(fsys))
	assert.Equal(t, pid, plugins.Unwrap(fsys).Pid(), "Pid is the plugin's own pid")
	n := 0
	var final error
	for _, err := range fsys.List(t.Context(), "/inf") {
		if err != nil {
			final = err
			break
		}
		if n++; n == 5000 {
			require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
		}
	}
	require.Error(t, final)
	assert.Contains(t, final.Error(), "plugin testplugin: ")
	assert.ErrorIs(t, final, vfs.ErrUnavailable)
	assert.NotContains(t, final.Error(), "\n")

	data, err := fsys.Read(t.Context(), "/a.txt")
	require.NoError(t, err, "the next call restarts the plugin")
	assert.Equal(t, "a\n", string(data))
	assert.NotEqual(t, pid, pidOf(t, fsys))
	assert.Equal(t, pidOf(t, fsys), plugins.Unwrap(fsys).Pid())
}

func TestCrashRestartsThenKeepsCrashing(t *testing.T) {
	fsys := faults(t, nil)
	_, err := fsys.Read(t.Context(), "/crash")
	require.Error(t, err)
	assert.ErrorIs(t, err, plugins.ErrCrashed)
	assert.Equal(t, "plugin testplugin: crashed during Read /crash; the next call restarts it", err.Error())

	// Restarted: ordinary calls work.
	_, err = fsys.Read(t.Context(), "/a.txt")
	require.NoError(t, err)

	var last error
	for range 10 {
		if _, last = fsys.Read(t.Context(), "/crash"); errors.Is(last, plugins.ErrKeepsCrashing) {
			break
		}
	}
	require.ErrorIs(t, last, plugins.ErrKeepsCrashing)
	assert.Contains(t, last.Error(), "plugin testplugin: keeps crashing: 5 crashes in the last 1m0s")
	_, err = fsys.Read(t.Context(), "/a.txt")
	assert.ErrorIs(t, err, plugins.ErrKeepsCrashing, "no restart until the window passes")
}

func TestHangBoundedByContext(t *testing.T) {
	fsys := faults(t, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err := fsys.Stat(ctx, "/hang")
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, "plugin testplugin: Stat /hang: context deadline exceeded", err.Error())
	_, err = fsys.Read(t.Context(), "/a.txt")
	assert.NoError(t, err, "other calls still work")
}

func TestVersionMismatch(t *testing.T) {
	err := openErr(t, plugins.Config{Path: bins.version})
	assert.Equal(t, "plugin testplugin-v99: protocol version mismatch: the plugin speaks version 99, this julyfs speaks version 1 (rebuild the plugin against the same julyfs/plugins)", err.Error())
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), mode))
		return p
	}
	sum := func(p string) string {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		s := sha256.Sum256(data)
		return hex.EncodeToString(s[:])
	}
	wrong := strings.Repeat("ab", 32)
	cases := []struct {
		name string
		cfg  plugins.Config
		want string
	}{
		{"missing", plugins.Config{Path: filepath.Join(dir, "nope")}, "plugin nope: " + dir + "/nope does not exist"},
		{"not on PATH", plugins.Config{Path: "julyfs-no-such-plugin"}, "plugin julyfs-no-such-plugin: not found (looked beside "},
		{"not executable", plugins.Config{Path: script("noexec", "true", 0o644)}, "plugin noexec: " + dir + "/noexec is not executable"},
		{"directory", plugins.Config{Path: dir}, "is a directory, not a plugin binary"},
		{"prints", plugins.Config{Path: script("echo", "echo hello; sleep 5", 0o755)}, `plugin echo: ` + dir + `/echo is not a julyfs plugin (it printed "hello" instead of the handshake)`},
		{"exits", plugins.Config{Path: script("exits", "exit 0", 0o755)}, "plugin exits: " + dir + "/exits is not a julyfs plugin, or it failed at start"},
		{"checksum", plugins.Config{Path: bins.plugin, SHA256: wrong}, "plugin testplugin: checksum mismatch: " + bins.plugin + " has sha256 " + sum(bins.plugin) + ", want " + wrong},
		{"bad checksum", plugins.Config{Path: bins.plugin, SHA256: "xyz"}, "plugin testplugin: sha256=xyz is not a hex SHA-256 digest"},
		{"tree error", plugins.Config{Path: bins.plugin, Args: map[string]string{"mode": "fail", "why": "x"}}, "plugin testplugin: bad parameter: fail=x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := openErr(t, c.cfg)
			assert.Contains(t, err.Error(), c.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
	// The right checksum starts it.
	fsys := open(t, plugins.Config{SHA256: sum(bins.plugin)})
	_, err := fsys.Stat(t.Context(), "/")
	assert.NoError(t, err)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestPluginLogsNamed(t *testing.T) {
	var buf syncBuffer
	logger := hclog.New(&hclog.LoggerOptions{Name: "plugin", Output: &buf, Level: hclog.Info})
	fsys := faults(t, logger)
	_, err := fsys.Stat(t.Context(), "/a.txt")
	require.NoError(t, err)
	assert.Contains(t, buf.String(), "[WARN]  plugin.testplugin: opening a tree: mode=faults")
	assert.NotContains(t, buf.String(), "prints to stdout", "stdout noise before Serve goes to stderr at debug level")
}

// TestHostKilledLeavesNoPlugin kills a host process with -9 and checks
// that its plugin dies too.
func TestHostKilledLeavesNoPlugin(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	host := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), "PLUGINS_TEST_HOST="+bins.plugin)
	out, err := host.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, host.Start())
	t.Cleanup(func() { host.Process.Kill(); host.Wait() })
	line := make([]byte, 64)
	n, err := out.Read(line)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(line[:n])))
	require.NoError(t, err, "host said %q", line[:n])
	require.True(t, alive(pid))

	require.NoError(t, host.Process.Signal(syscall.SIGKILL))
	host.Wait()
	require.Eventually(t, func() bool { return !alive(pid) }, 10*time.Second, 20*time.Millisecond,
		"plugin %d outlived its host", pid)
}

// alive reports whether pid runs (a zombie waiting to be reaped is dead).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// TestReadRestartsWhenFileChanges: a file sent by range whose etag changes
// meanwhile is sent again whole, and the host keeps only that.
func TestReadRestartsWhenFileChanges(t *testing.T) {
	for name, cfg := range readModes {
		cfg.Args = map[string]string{"mode": "shifty"}
		fsys := open(t, cfg)
		data, err := fsys.Read(t.Context(), "/shifty.bin")
		require.NoError(t, err)
		require.Len(t, data, 3<<20+7)
		for i, b := range data {
			if b != byte(i%251) {
				require.Failf(t, "wrong byte", "%s: byte %d = %d, want %d", name, i, b, i%251)
			}
		}
	}
}

// TestReadFileChangesSize: a file that grows or shrinks between the
// plugin's Stat and its read still arrives as one whole version, whatever
// way it travels (the plugin's buffer was sized by the first Stat).
func TestReadFileChangesSize(t *testing.T) {
	sizes := []int{4 << 20, 4<<20 + 300<<10, 4<<20 - 300<<10}
	for name, cfg := range readModes {
		cfg.Args = map[string]string{"mode": "resizing"}
		fsys := open(t, cfg)
		for range 6 {
			data, err := fsys.Read(t.Context(), "/resizing.bin")
			require.NoError(t, err, name)
			assert.Contains(t, sizes, len(data), name)
			for i, b := range data {
				if b != byte(i%251) {
					require.Failf(t, "wrong byte", "%s: byte %d = %d, want %d", name, i, b, i%251)
				}
			}
		}
	}
}

// TestServeFixedTree: plugins.Serve serves one tree and refuses parameters.
func TestServeFixedTree(t *testing.T) {
	t.Setenv("TESTPLUGIN_SERVE", "1") // the plugin inherits the host's environment
	fsys := open(t, plugins.Config{})
	data, err := fsys.Read(t.Context(), "/fixed.txt")
	require.NoError(t, err)
	assert.Equal(t, "fixed\n", string(data))

	err = openErr(t, plugins.Config{Path: bins.plugin, Args: map[string]string{"b": "2", "a": "1"}})
	assert.Equal(t, "plugin testplugin: takes no parameters, got [a b]", err.Error())
}

// TestDeferredStart: with Config.Deferred a plugin that cannot start is
// bound anyway; each call answers the start error on one line (matching
// vfs.ErrUnavailable), and a later call starts the plugin once it can
// start: here its binary appears after the first failed call.
func TestDeferredStart(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "late")
	fsys, err := plugins.OpenConfig(ctx, plugins.Config{Path: path, Deferred: true})
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	c := plugins.Unwrap(fsys)
	require.NotNil(t, c)
	want := "plugin late: " + path + " does not exist"
	if assert.Error(t, c.StartErr()) {
		assert.Equal(t, want, c.StartErr().Error())
	}
	_, err = fsys.Stat(ctx, "/a.txt")
	if assert.Error(t, err) {
		assert.Equal(t, want, err.Error())
		assert.ErrorIs(t, err, vfs.ErrUnavailable)
	}
	for _, err := range fsys.List(ctx, "/") {
		if assert.Error(t, err) {
			assert.Equal(t, want, err.Error())
		}
	}
	assert.Zero(t, c.Pid(), "nothing runs")

	// The binary appears: a later call (after the backoff) starts it.
	data, err := os.ReadFile(bins.plugin)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path+".tmp", data, 0o755))
	require.NoError(t, os.Rename(path+".tmp", path))
	deadline := time.Now().Add(30 * time.Second)
	for {
		err = fsys.Write(ctx, "/late.txt", []byte("started late"))
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, err, "the plugin never started")
	got, err := fsys.Read(ctx, "/late.txt")
	require.NoError(t, err)
	assert.Equal(t, "started late", string(got))
	assert.NoError(t, c.StartErr())
	assert.NotZero(t, c.Pid())
}

// TestDeferredStartFaults: each way a plugin fails to start, deferred,
// gives one line naming the plugin and the cause, from the bind and from
// every call.
func TestDeferredStartFaults(t *testing.T) {
	ctx := t.Context()
	notPlugin := filepath.Join(t.TempDir(), "notplugin")
	require.NoError(t, os.WriteFile(notPlugin, []byte("#!/bin/sh\necho hello\n"), 0o755))
	for _, c := range []struct {
		cfg  plugins.Config
		want string
	}{
		{plugins.Config{Path: bins.version}, "plugin testplugin-v99: protocol version mismatch: the plugin speaks version 99"},
		{plugins.Config{Path: notPlugin}, "plugin notplugin: " + notPlugin + " is not a julyfs plugin"},
		{plugins.Config{Path: bins.plugin, SHA256: strings.Repeat("0", 64)}, "plugin testplugin: checksum mismatch: " + bins.plugin + " has sha256 "},
		{plugins.Config{Path: bins.plugin, Args: map[string]string{"mode": "fail", "why": "x"}}, "plugin testplugin: bad parameter: fail=x"},
	} {
		c.cfg.Deferred = true
		fsys, err := plugins.OpenConfig(ctx, c.cfg)
		require.NoError(t, err)
		startErr := plugins.Unwrap(fsys).StartErr()
		if assert.Error(t, startErr, c.want) {
			assert.True(t, strings.HasPrefix(startErr.Error(), c.want), "%q does not start with %q", startErr, c.want)
			assert.NotContains(t, startErr.Error(), "\n")
		}
		_, err = fsys.Read(ctx, "/a.txt")
		if assert.Error(t, err, c.want) {
			assert.True(t, strings.HasPrefix(err.Error(), c.want), "%q does not start with %q", err, c.want)
		}
		require.NoError(t, fsys.Close())
	}
	// A malformed digest is the configuration's fault: it still fails.
	_, err := plugins.OpenConfig(ctx, plugins.Config{Path: bins.plugin, SHA256: "xyz", Deferred: true})
	assert.EqualError(t, err, "plugin testplugin: sha256=xyz is not a hex SHA-256 digest")
}

// TestDeferredCapabilities: a tree bound before its plugin could start
// offers ReadAt and WriteIf (their helpers answer for every path) and not
// Watch (no answer per path), before and after the plugin starts late;
// each answers what the same tree answers in process: for a plugin tree
// with both capabilities (temp) and for one with neither (faults), whose
// ReadAt is vfs.ReadAt's fallback and whose WriteIf the plugin answers
// with vfs.WriteIf's.
func TestDeferredCapabilities(t *testing.T) {
	for _, mode := range []string{"temp", "faults"} {
		t.Run(mode, func(t *testing.T) {
			ctx := t.Context()
			path := filepath.Join(t.TempDir(), "late")
			fsys, err := plugins.OpenConfig(ctx, plugins.Config{Path: path, Args: map[string]string{"mode": mode}, Deferred: true, Logger: quiet})
			require.NoError(t, err)
			t.Cleanup(func() { fsys.Close() })
			rr, ok := fsys.(vfs.RangeReader)
			require.True(t, ok, "a deferred tree offers ReadAt")
			cw, ok := fsys.(vfs.ConditionalWriter)
			require.True(t, ok, "a deferred tree offers WriteIf")
			_, ok = fsys.(vfs.Notifier)
			assert.False(t, ok, "a deferred tree does not offer Watch")

			// Not started: both answer the start error.
			want := "plugin late: " + path + " does not exist"
			_, err = rr.ReadAt(ctx, "/a.txt", make([]byte, 1), 0)
			assert.EqualError(t, err, want)
			_, err = cw.WriteIf(ctx, "/a.txt", []byte("x"), vfs.Precondition{IfNoneMatch: true})
			assert.EqualError(t, err, want)

			// The binary appears.
			data, err := os.ReadFile(bins.plugin)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path+".tmp", data, 0o755))
			require.NoError(t, os.Rename(path+".tmp", path))
			deadline := time.Now().Add(30 * time.Second)
			for {
				_, err = fsys.Stat(ctx, "/")
				if err == nil || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			require.NoError(t, err, "the plugin never started")

			// The same calls on the same tree in process.
			var in vfs.FileSystem
			in, err = temp.New(nil)
			require.NoError(t, err)
			if mode == "faults" {
				in, err = temp.New(map[string][]byte{"/a.txt": []byte("a\n")})
				require.NoError(t, err)
				in = struct{ vfs.FileSystem }{in} // neither capability, as the plugin's faults tree
			}
			type answer struct {
				N    int
				Data string
				Err  string
			}
			errStr := func(err error) string {
				if err == nil {
					return ""
				}
				return err.Error()
			}
			etags := map[vfs.FileSystem]string{}
			for i, step := range []func(f vfs.FileSystem) answer{
				func(f vfs.FileSystem) answer {
					etag, err := vfs.WriteIf(ctx, f, "/b.txt", []byte("hello, world"), vfs.Precondition{IfNoneMatch: true})
					etags[f] = etag
					return answer{Err: errStr(err)}
				},
				func(f vfs.FileSystem) answer {
					_, err := vfs.WriteIf(ctx, f, "/b.txt", []byte("again"), vfs.Precondition{IfNoneMatch: true})
					return answer{Err: errStr(err)}
				},
				func(f vfs.FileSystem) answer {
					_, err := vfs.WriteIf(ctx, f, "/b.txt", []byte("stale"), vfs.Precondition{IfMatch: "not-the-etag"})
					return answer{Err: errStr(err)}
				},
				func(f vfs.FileSystem) answer {
					etag, err := vfs.WriteIf(ctx, f, "/b.txt", []byte("hello, julyfs"), vfs.Precondition{IfMatch: etags[f]})
					return answer{N: len(etag), Err: errStr(err)}
				},
				func(f vfs.FileSystem) answer {
					p := make([]byte, 5)
					n, err := vfs.ReadAt(ctx, f, "/b.txt", p, 7)
					return answer{n, string(p[:n]), errStr(err)}
				},
				func(f vfs.FileSystem) answer {
					p := make([]byte, 10)
					n, err := vfs.ReadAt(ctx, f, "/b.txt", p, 9)
					return answer{n, string(p[:n]), errStr(err)}
				},
				func(f vfs.FileSystem) answer {
					n, err := vfs.ReadAt(ctx, f, "/b.txt", make([]byte, 3), 100)
					return answer{N: n, Err: errStr(err)}
				},
				func(f vfs.FileSystem) answer {
					n, err := vfs.ReadAt(ctx, f, "/missing.txt", make([]byte, 3), 0)
					return answer{N: n, Err: errStr(err)}
				},
			} {
				want, got := step(in), step(fsys)
				assert.Equal(t, want, got, "step %d", i)
			}
		})
	}
}
