package plugins

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/julyfs/julyfs/plugins/pluginpb"
	"github.com/julyfs/julyfs/vfs"
)

// Restart policy: a plugin that crashed is restarted by the next call,
// after a backoff that doubles with each recent crash; after maxCrashes
// crashes within crashWindow calls fail with "keeps crashing" until the
// window has passed.
const (
	maxCrashes   = 5
	crashWindow  = time.Minute
	firstBackoff = 50 * time.Millisecond
	maxBackoff   = 2 * time.Second
	startTimeout = 30 * time.Second
)

// Sentinels of plugin failures, for errors.Is. Errors that wrap them also
// match vfs.ErrUnavailable.
var (
	// ErrCrashed: the plugin process died during the call.
	ErrCrashed = errors.New("crashed")
	// ErrKeepsCrashing: the plugin crashed too often to be restarted now.
	ErrKeepsCrashing = errors.New("keeps crashing")
)

// Error is a failure of the plugin itself (it could not start, crashed,
// broke the connection, or the call timed out), as opposed to an error of
// its tree, which arrives as the *vfs.PathError the tree returned.
type Error struct {
	// Plugin is the plugin's name (its file name).
	Plugin string
	// Err says what went wrong.
	Err error
}

// Error renders "plugin NAME: what went wrong" on one line.
func (e *Error) Error() string { return "plugin " + e.Plugin + ": " + oneLine(e.Err.Error()) }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes a crash or broken connection match vfs.ErrUnavailable.
func (e *Error) Is(target error) bool {
	return target == vfs.ErrUnavailable && (errors.Is(e.Err, ErrCrashed) || errors.Is(e.Err, ErrKeepsCrashing) || errors.Is(e.Err, errBroken) || errors.As(e.Err, new(notStarted)))
}

// notStarted marks the cause of a plugin that could not start (Config.Deferred):
// its message is the cause's.
type notStarted struct{ err error }

func (e notStarted) Error() string { return e.err.Error() }
func (e notStarted) Unwrap() error { return e.err }

var errBroken = errors.New("connection broken")

// ErrNoSeed is the error of a seeded open (Config.Seeded) on a plugin
// whose ServeOptions have no Seed.
var ErrNoSeed = errors.New("cannot build a tree from given files (the plugin has no ServeOptions.Seed)")

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

// Config says which plugin to run and how.
type Config struct {
	// Path is the plugin binary: a path with a slash (relative to the
	// working directory), or a bare name looked up beside the running
	// executable and then on $PATH.
	Path string
	// Args are the tree's parameters, handed to the plugin's Open.
	Args map[string]string
	// Dir is the plugin process's working directory, against which it
	// resolves relative parameters (repo=.), and the base of a relative
	// Path; "" is the host's working directory.
	Dir string
	// SHA256, when set, pins the binary: it must hash to this hex digest
	// or the plugin is not started.
	SHA256 string
	// Seed, when Seeded, asks the plugin for a fresh tree holding exactly
	// these files instead of opening one from Args (conformance checks).
	Seed   map[string][]byte
	Seeded bool
	// NoSharedMemory sends every file's contents through gRPC in chunks,
	// even where the plugin could hand over a memory file (Linux, files
	// of 256 KiB and more): for tests and measurements.
	NoSharedMemory bool
	// NoProcessMemory makes reads of 256 KiB and more go through memory
	// files instead of being copied straight out of the plugin's memory
	// (process_vm_readv, Linux): for tests and measurements.
	NoProcessMemory bool
	// NoHostFile makes reads of 256 KiB and more from a tree with
	// [OSFile] readers take the other ways instead of the host reading
	// the plugin's open file itself: for tests and measurements.
	NoHostFile bool
	// NoHostDir makes Reads and ReadAts of a vfs/local tree's files go to
	// the plugin instead of the host opening them itself beneath the
	// tree's root directory (Linux): for tests and measurements.
	// NoHostFile implies it.
	NoHostDir bool
	// Deferred makes a plugin that cannot start (its binary missing or
	// not executable, not a plugin, a checksum or protocol version
	// mismatch, a parameter its Open refuses) no failure of OpenConfig:
	// it returns the tree anyway, whose every call answers that start
	// error on one line and tries to start the plugin again, at most
	// once per backoff (doubling from 50ms to 2s between failed
	// starts); calls in between answer the error at once.
	// [Client.StartErr] reports it. A tree bound before its plugin ran
	// cannot know the plugin's optional capabilities, so it offers what
	// it can honour for every path whatever they turn out to be (the rule
	// of vfs's "Capabilities of wrappers"): vfs.RangeReader and
	// vfs.ConditionalWriter, whose vfs helpers answer for a tree without
	// them (ReadAt goes to the plugin's ReadAt when its tree has one,
	// else it is vfs.ReadAt's answer from a whole Read; WriteIf goes to
	// the plugin, which runs vfs.WriteIf on its tree), and not
	// vfs.Notifier, which has no answer per path: a tree that may turn
	// out deaf to changes must not promise to hear them. A malformed
	// SHA256 and the cancelled context of the open still fail OpenConfig.
	Deferred bool
	// Logger receives the plugin's log lines; nil logs to standard error
	// at the level of $JULYFS_PLUGIN_LOG (default warn).
	Logger hclog.Logger
	// CallTimeout, when positive, bounds every wait of the host for the
	// plugin: a call it does not answer in time (a stream: a batch it
	// does not send) fails with ErrNoAnswer, "no answer within 10s" (see
	// the package doc, Deadlines). 0 waits as long as the caller's
	// context allows.
	CallTimeout time.Duration
	// CallTimeoutHint, when set, is added to the message of a call that
	// timed out: how to raise the bound ("raise it with --plugin-timeout").
	CallTimeoutHint string
}

// FS is a tree served by a plugin process. It also implements
// vfs.RangeReader, vfs.ConditionalWriter and vfs.Notifier when the
// plugin's tree does.
type FS interface {
	vfs.FileSystem
	// Name is the plugin's name, as errors show it.
	Name() string
	// Close stops the plugin process.
	Close() error
}

// Open starts the plugin at path, opens a tree with args in it and returns
// the tree. Errors name the plugin on one line: a missing or
// non-executable binary, a binary that is not a julyfs plugin, a
// protocol version mismatch, a parameter the plugin refuses. ctx bounds
// the start; later calls are bounded by their own contexts.
func Open(ctx context.Context, path string, args map[string]string) (FS, error) {
	return OpenConfig(ctx, Config{Path: path, Args: args})
}

// OpenConfig is Open with the whole configuration.
func OpenConfig(ctx context.Context, cfg Config) (FS, error) {
	c, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	if c.cfg.Logger == nil {
		c.cfg.Logger = defaultLogger()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cfg.Deferred {
		if err := c.startOrDefer(ctx); err != nil && c.startErr == nil {
			return nil, err // the open was cancelled
		}
		if c.startErr != nil {
			return c.unknown(), nil
		}
		return c.negotiated(), nil
	}
	if err := c.resolveAndStart(ctx); err != nil {
		return nil, err
	}
	return c.negotiated(), nil
}

// newClient checks cfg and returns its client, not started.
func newClient(cfg Config) (*Client, error) {
	name := filepath.Base(cfg.Path)
	c := &Client{cfg: cfg, name: name}
	p := cfg.Path
	if strings.Contains(p, "/") && !filepath.IsAbs(p) && cfg.Dir != "" {
		p = filepath.Join(cfg.Dir, p)
	}
	c.given = p
	if cfg.SHA256 != "" {
		want, err := hex.DecodeString(cfg.SHA256)
		if err != nil || len(want) != sha256.Size {
			return nil, &Error{Plugin: name, Err: fmt.Errorf("sha256=%s is not a hex SHA-256 digest", cfg.SHA256)}
		}
		c.sum = want
	}
	return c, nil
}

// Check checks what can be checked of cfg without running the plugin
// (what july validate does): the binary is found and executable, and a
// pinned SHA256 is a digest the binary has. Its errors are the lines a
// start would fail with. A binary that is not a plugin, a protocol
// version mismatch and parameters the plugin refuses show only when it
// runs.
func Check(cfg Config) error {
	c, err := newClient(cfg)
	if err != nil {
		return err
	}
	if c.path, err = Resolve(c.given); err != nil {
		return c.fail(err)
	}
	if c.sum == nil {
		return nil
	}
	if got, err := fileSum(c.path); err != nil {
		return c.fail(err)
	} else if !bytes.Equal(got, c.sum) {
		return c.fail(c.checksumMismatch())
	}
	return nil
}

func fileSum(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// checksumMismatch says that the binary does not hash to the pinned sum.
func (c *Client) checksumMismatch() error {
	got := "unknown"
	if sum, err := fileSum(c.path); err == nil {
		got = hex.EncodeToString(sum)
	}
	return fmt.Errorf("checksum mismatch: %s has sha256 %s, want %s", c.path, got, hex.EncodeToString(c.sum))
}

// resolveAndStart finds the binary (once) and starts it; c.mu is held.
func (c *Client) resolveAndStart(ctx context.Context) error {
	if c.path == "" {
		resolved, err := Resolve(c.given)
		if err != nil {
			return c.fail(err)
		}
		c.path = resolved
	}
	return c.start(ctx)
}

// startOrDefer starts a deferred plugin and records how that went: a
// failure (not of ctx) becomes the error every call answers until the
// next try, which is due after the backoff. c.mu is held.
func (c *Client) startOrDefer(ctx context.Context) error {
	err := c.resolveAndStart(ctx)
	if err == nil {
		c.startErr, c.startFails = nil, 0
		return nil
	}
	if ctx.Err() != nil {
		return err // the caller gave up: no news about the plugin
	}
	var pe *Error
	if errors.As(err, &pe) {
		err = &Error{Plugin: pe.Plugin, Err: notStarted{pe.Err}}
	}
	c.startErr = err
	c.startFails++
	c.nextStart = time.Now().Add(min(firstBackoff<<min(c.startFails-1, 10), maxBackoff))
	return err
}

// StartErr returns why the plugin of a deferred tree (Config.Deferred)
// has not started yet, nil once it runs (or when it was not deferred).
func (c *Client) StartErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.startErr
}

func defaultLogger() hclog.Logger {
	level := hclog.LevelFromString(os.Getenv("JULYFS_PLUGIN_LOG"))
	if level == hclog.NoLevel {
		level = hclog.Warn
	}
	return hclog.New(&hclog.LoggerOptions{Name: "plugin", Output: os.Stderr, Level: level})
}

// Resolve finds the plugin binary: a path with a slash as given, a bare
// name beside the running executable, then on $PATH. It must be an
// executable regular file.
func Resolve(path string) (string, error) {
	if path == "" {
		return "", errors.New("no plugin path")
	}
	if !strings.Contains(path, "/") {
		var looked []string
		if exe, err := os.Executable(); err == nil {
			beside := filepath.Join(filepath.Dir(exe), path)
			if isExecutable(beside) == nil {
				return beside, nil
			}
			looked = append(looked, "beside "+exe)
		}
		if p, err := exec.LookPath(path); err == nil {
			return filepath.Abs(p)
		}
		looked = append(looked, "on $PATH")
		return "", fmt.Errorf("not found (looked %s)", strings.Join(looked, " and "))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return abs, isExecutable(abs)
}

func isExecutable(p string) error {
	info, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", p)
	case err != nil:
		return err
	case info.IsDir():
		return fmt.Errorf("%s is a directory, not a plugin binary", p)
	case info.Mode()&0o111 == 0:
		return fmt.Errorf("%s is not executable", p)
	}
	return nil
}

// Client is the host side of one plugin tree: the process, the
// connection, and the restart policy. Its methods are safe for concurrent
// use; a restart happens under its lock, so calls racing a crash wait for
// one restart.
type Client struct {
	cfg   Config
	name  string
	given string // the binary as configured (Dir applied)
	path  string // the binary found, "" until found
	sum   []byte

	mu      sync.Mutex
	pc      *plugin.Client
	stub    pluginpb.FileSystemClient
	tree    uint32
	pid     int
	caps    map[string]bool
	crashes []time.Time
	closed  bool

	// A deferred plugin that has not started: the last start's error,
	// how many starts failed in a row, when the next may be tried.
	startErr   error
	startFails int
	nextStart  time.Time

	watchers vfs.Watchers
	noShared atomic.Bool // set when a memory file could not be opened
	noDirect atomic.Bool // set when process_vm_readv failed on the plugin
	noFile   atomic.Bool // set when a file the plugin has open could not be read
	// noReadFile is set when the plugin's tree turned out not to hand out
	// host files: Reads stop trying ReadFile.
	noReadFile atomic.Bool
	held       hostFiles       // the host's descriptors of files ReadFile handed over
	ways       [5]atomic.Int64 // Reads by the way the contents came (way*)
	// root is the host's descriptor of the root directory of the running
	// plugin's tree, beneath which it reads the tree's files itself (a
	// vfs/local tree; beneath_linux.go), or nil.
	root *os.File
}

// The ways a Read's contents come, for Client.ways.
const (
	wayChunks = iota
	wayMemoryFile
	wayProcessMemory
	wayHostFile
	wayBeneath // read by the host beneath the tree's root directory
)

// Name returns the plugin's name.
func (c *Client) Name() string { return c.name }

// Close stops the plugin process.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.held.closeAll()
	c.setRoot(nil)
	if c.pc != nil {
		c.pc.Kill()
		c.pc = nil
	}
	return nil
}

// Pid returns the plugin process's id, 0 when none runs (for tests and
// diagnostics).
func (c *Client) Pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pc == nil || c.pc.Exited() {
		return 0
	}
	return c.pid
}

func (c *Client) fail(err error) error { return &Error{Plugin: c.name, Err: err} }

// start runs the plugin and opens the tree; c.mu is held.
func (c *Client) start(ctx context.Context) error {
	cmd := exec.Command(c.path)
	cmd.Dir = c.cfg.Dir
	dieWithParent(cmd)
	var secure *plugin.SecureConfig
	if c.sum != nil {
		secure = &plugin.SecureConfig{Checksum: c.sum, Hash: sha256.New()}
	}
	log := c.cfg.Logger.Named(c.name)
	pc := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  handshake,
		VersionedPlugins: map[int]plugin.PluginSet{ProtocolVersion: {pluginName: &grpcPlugin{}}},
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		SecureConfig:     secure,
		Logger:           c.cfg.Logger,
		StartTimeout:     startTimeout,
		SyncStdout:       log.StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Info}),
		SyncStderr:       log.StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Info}),
		GRPCDialOptions: []grpc.DialOption{
			grpc.WithInitialWindowSize(windowSize),
			grpc.WithInitialConnWindowSize(windowSize),
			grpc.WithWriteBufferSize(bufferSize),
			grpc.WithReadBufferSize(bufferSize),
		},
	})
	type started struct {
		rpc plugin.ClientProtocol
		err error
	}
	ch := make(chan started, 1)
	go onSpawnThread(func() {
		if err := ctx.Err(); err != nil {
			ch <- started{nil, err} // given up while queued: start nothing
			return
		}
		rpc, err := pc.Client()
		ch <- started{rpc, err}
	})
	var s started
	select {
	case s = <-ch:
	case <-ctx.Done():
		pc.Kill()
		return c.fail(fmt.Errorf("start: %w", ctx.Err()))
	}
	if s.err != nil {
		pc.Kill()
		return c.fail(c.startError(s.err))
	}
	raw, err := s.rpc.Dispense(pluginName)
	if err != nil {
		pc.Kill()
		return c.fail(err)
	}
	stub := raw.(pluginpb.FileSystemClient)
	octx, ct := c.timed(ctx)
	defer ct.done()
	reply, err := stub.Open(octx, &pluginpb.OpenRequest{Args: c.cfg.Args, Seeded: c.cfg.Seeded, Seed: c.cfg.Seed})
	if err == nil && reply.Error != nil {
		err = decodeError(reply.Error)
		if c.cfg.Seeded && err.Error() == ErrNoSeed.Error() {
			err = ErrNoSeed
		}
	}
	if err != nil {
		pc.Kill()
		if late := ct.expired(); late != nil {
			return c.fail(fmt.Errorf("open: %w", late))
		}
		if ctx.Err() != nil {
			return c.fail(fmt.Errorf("open: %w", ctx.Err()))
		}
		return c.fail(err)
	}
	caps := map[string]bool{}
	for _, k := range reply.Capabilities {
		caps[k] = true
	}
	if c.caps == nil {
		c.caps = caps
	}
	c.pc, c.stub, c.tree, c.pid = pc, stub, reply.Tree, cmd.Process.Pid
	c.setRoot(nil)
	if reply.RootDir != 0 && !c.cfg.NoHostFile && !c.cfg.NoHostDir {
		root, err := openRootDir(c.pid, reply.RootDir, reply.RootDev, reply.RootIno)
		if err != nil {
			log.Debug("reading the tree's files through the plugin", "reason", err)
		}
		c.setRoot(root)
	}
	return nil
}

// setRoot replaces the root directory beneath which the host reads the
// tree's files (nil: none); c.mu is held. A read still using the old one
// keeps it open until its open returns.
func (c *Client) setRoot(root *os.File) {
	if c.root != nil {
		c.root.Close()
	}
	c.root = root
}

// beneathRoot returns the root directory beneath which the host may read
// the tree's files itself, or nil: the call goes to the plugin. A plugin
// that has exited gets nil, so the call restarts it as every call does (a
// file of a dead plugin's tree is not read behind its back).
func (c *Client) beneathRoot(ctx context.Context) *os.File {
	if ctx.Err() != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.root == nil || c.closed || c.pc == nil || c.pc.Exited() {
		return nil
	}
	return c.root
}

var (
	spawnOnce sync.Once
	spawnCh   = make(chan func())
)

// onSpawnThread runs f on one goroutine locked to its OS thread for the
// life of the process, so every plugin is forked from a thread that never
// exits: Pdeathsig fires when the forking *thread* exits, and the Go
// runtime ends a thread when a goroutine locked to it exits, which would
// kill a healthy plugin.
func onSpawnThread(f func()) {
	spawnOnce.Do(func() {
		go func() {
			runtime.LockOSThread()
			for fn := range spawnCh {
				fn()
			}
		}()
	})
	done := make(chan struct{})
	spawnCh <- func() { defer close(done); f() }
	<-done
}

var versionRE = regexp.MustCompile(`Plugin version: (\d+), Client versions: \[?([\d ]+)\]?`)

// startError turns go-plugin's start failures into one line that says
// what to do.
func (c *Client) startError(err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, plugin.ErrChecksumsDoNotMatch):
		return c.checksumMismatch()
	case versionRE.MatchString(msg):
		m := versionRE.FindStringSubmatch(msg)
		return fmt.Errorf("protocol version mismatch: the plugin speaks version %s, this julyfs speaks version %s (rebuild the plugin against the same julyfs/plugins)", m[1], strings.TrimSpace(m[2]))
	case strings.Contains(msg, "Failed to read any lines"):
		return fmt.Errorf("%s is not a julyfs plugin, or it failed at start (it exited before the handshake; its standard error is logged above)", c.path)
	case strings.Contains(msg, "Unrecognized remote plugin message"):
		line := strings.TrimSpace(strings.TrimPrefix(oneLine(msg), "Unrecognized remote plugin message:"))
		if line == "" {
			return fmt.Errorf("%s is not a julyfs plugin (it printed no handshake)", c.path)
		}
		return fmt.Errorf("%s is not a julyfs plugin (it printed %q instead of the handshake)", c.path, line)
	case strings.Contains(msg, "exited before we could connect"):
		return fmt.Errorf("%s is not a julyfs plugin, or it failed at start (it exited before the handshake; its standard error is logged above)", c.path)
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return fmt.Errorf("%s did not complete the handshake within %v (not a julyfs plugin?)", c.path, startTimeout)
	}
	return errors.New(oneLine(msg))
}

// conn returns the live connection, restarting a crashed plugin.
func (c *Client) conn(ctx context.Context) (pluginpb.FileSystemClient, uint32, error) {
	stub, tree, _, err := c.connPid(ctx)
	return stub, tree, err
}

// connPid is conn, with the id of the process at the other end.
func (c *Client) connPid(ctx context.Context) (pluginpb.FileSystemClient, uint32, int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	stub, tree, err := c.connLocked(ctx)
	return stub, tree, c.pid, err
}

func (c *Client) connLocked(ctx context.Context) (pluginpb.FileSystemClient, uint32, error) {
	if c.closed {
		return nil, 0, c.fail(errors.New("closed"))
	}
	if c.pc != nil && !c.pc.Exited() {
		return c.stub, c.tree, nil
	}
	if c.pc == nil && c.startErr != nil {
		// Deferred and never started: try again once the backoff has
		// passed, else answer the last start's error at once.
		if time.Now().Before(c.nextStart) {
			return nil, 0, c.startErr
		}
		if err := c.startOrDefer(ctx); err != nil {
			return nil, 0, err
		}
		return c.stub, c.tree, nil
	}
	if c.pc != nil {
		c.pc.Kill()
		c.pc = nil
		c.crashes = append(c.crashes, time.Now())
	}
	recent := c.recentCrashes()
	if recent >= maxCrashes {
		return nil, 0, c.fail(fmt.Errorf("%w: %d crashes in the last %v; not restarting it now", ErrKeepsCrashing, recent, crashWindow))
	}
	if recent > 0 {
		backoff := min(firstBackoff<<(recent-1), maxBackoff)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil, 0, c.fail(fmt.Errorf("restart: %w", ctx.Err()))
		}
	}
	if err := c.start(ctx); err != nil {
		c.crashes = append(c.crashes, time.Now())
		return nil, 0, err
	}
	return c.stub, c.tree, nil
}

func (c *Client) recentCrashes() int {
	cut := time.Now().Add(-crashWindow)
	i := 0
	for i < len(c.crashes) && c.crashes[i].Before(cut) {
		i++
	}
	c.crashes = c.crashes[i:]
	return len(c.crashes)
}

// callError classifies the failure of a call (not an error of the tree,
// which arrives in the reply): the caller's context, a crash, or a broken
// connection. op names the call, as "Read /a".
func (c *Client) callError(ctx context.Context, op string, err error) error {
	if late := timerOf(ctx).expired(); late != nil {
		return c.fail(fmt.Errorf("%s: %w", op, late))
	}
	if ctx.Err() != nil {
		return c.fail(fmt.Errorf("%s: %w", op, ctx.Err()))
	}
	if st, ok := status.FromError(err); ok {
		switch st.Code() {
		case codes.Unavailable, codes.Canceled, codes.Internal, codes.Unknown:
			if c.waitExit() {
				return c.fail(fmt.Errorf("%w during %s; the next call restarts it", ErrCrashed, op))
			}
		}
		c.breakConn()
		return c.fail(fmt.Errorf("%s: %w: %s", op, errBroken, st.Message()))
	}
	c.breakConn()
	return c.fail(fmt.Errorf("%s: %w: %v", op, errBroken, err))
}

// timedOut is err, an error of conn (a restart), or the timeout of ctx's
// call when that is what ended it.
func (c *Client) timedOut(ctx context.Context, op string, err error) error {
	if late := timerOf(ctx).expired(); late != nil {
		return c.fail(fmt.Errorf("%s: %w", op, late))
	}
	return err
}

// waitExit reports whether the plugin process has exited, waiting a
// little for go-plugin to notice (the connection breaks before the exit
// is reaped).
func (c *Client) waitExit() bool {
	c.mu.Lock()
	pc := c.pc
	c.mu.Unlock()
	if pc == nil {
		return true
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if pc.Exited() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// breakConn kills a plugin whose connection broke while it still runs, so
// the next call starts afresh.
func (c *Client) breakConn() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pc != nil {
		c.pc.Kill()
	}
}

func (c *Client) List(ctx context.Context, prefix string) iter.Seq2[vfs.DirEntry, error] {
	return c.entries(ctx, "List "+prefix, func() func(vfs.DirEntry) error { return newListCheck(prefix).check }, func(ctx context.Context, stub pluginpb.FileSystemClient, tree uint32) (recvEntries, error) {
		return stub.List(ctx, &pluginpb.ListRequest{Tree: tree, Prefix: []byte(prefix)})
	})
}

func (c *Client) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	return c.entries(ctx, "Glob "+pattern, func() func(vfs.DirEntry) error { return newGlobCheck(dir).check }, func(ctx context.Context, stub pluginpb.FileSystemClient, tree uint32) (recvEntries, error) {
		return stub.Glob(ctx, &pluginpb.GlobRequest{Tree: tree, Pattern: []byte(pattern), Dir: []byte(dir)})
	})
}

type recvEntries interface {
	Recv() (*pluginpb.Entries, error)
}

// stream runs one server-streaming call: open starts it, each batch is
// converted by items, each element checked against the contract by a
// checker newCheck makes for the stream
// (a violation ends the stream with its error, the element withheld), and
// the loop stops (cancelling the call, which stops the plugin's work)
// when the consumer breaks out.
func stream[M any, E any](c *Client, ctx context.Context, op string, newCheck func() func(E) error, open func(ctx context.Context, stub pluginpb.FileSystemClient, tree uint32) (interface{ Recv() (M, error) }, error), items func(M, []E) ([]E, *pluginpb.Error)) iter.Seq2[E, error] {
	return func(yield func(E, error) bool) {
		var zero E
		ctx, ct := c.timed(ctx)
		defer ct.done()
		stub, tree, err := c.conn(ctx)
		if err != nil {
			yield(zero, c.timedOut(ctx, op, err))
			return
		}
		s, err := open(ctx, stub, tree)
		if err != nil {
			yield(zero, c.callError(ctx, op, err))
			return
		}
		var buf []E
		check := newCheck()
		for {
			ct.resume()
			m, err := s.Recv()
			ct.pause()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(zero, c.callError(ctx, op, err))
				return
			}
			es, werr := items(m, buf[:0])
			buf = es // consumed before the next batch: reused for it
			for _, e := range es {
				if err := check(e); err != nil {
					yield(zero, c.fail(fmt.Errorf("%s: %w", op, err)))
					return
				}
				if !yield(e, nil) {
					return
				}
			}
			if werr != nil {
				yield(zero, decodeError(werr))
				return
			}
		}
	}
}

func (c *Client) entries(ctx context.Context, op string, check func() func(vfs.DirEntry) error, open func(context.Context, pluginpb.FileSystemClient, uint32) (recvEntries, error)) iter.Seq2[vfs.DirEntry, error] {
	return stream(c, ctx, op, check, func(ctx context.Context, stub pluginpb.FileSystemClient, tree uint32) (interface {
		Recv() (*pluginpb.Entries, error)
	}, error) {
		return open(ctx, stub, tree)
	}, unpackEntries)
}

// unpackEntries is the inverse of packEntries: one string holds every
// path of the batch and each entry's path is a substring of it.
func unpackEntries(m *pluginpb.Entries, out []vfs.DirEntry) ([]vfs.DirEntry, *pluginpb.Error) {
	if len(m.Kinds) != len(m.Lengths) {
		return nil, encodeError(fmt.Errorf("malformed entries: %d kinds for %d paths", len(m.Kinds), len(m.Lengths)))
	}
	all := string(m.Paths)
	out = slices.Grow(out, len(m.Lengths))
	off := 0
	for i, n := range m.Lengths {
		if off+int(n) > len(all) {
			return nil, encodeError(errors.New("malformed entries: paths shorter than their lengths"))
		}
		k := m.Kinds[i]
		out = append(out, vfs.DirEntry{Path: all[off : off+int(n)], Kind: vfs.EntryKind(k &^ kindLink), Link: k&kindLink != 0})
		off += int(n)
	}
	return out, m.Error
}

func (c *Client) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	return stream(c, ctx, "Grep "+q.Pattern, func() func(vfs.GrepResult) error { return newGrepCheck(q).check }, func(ctx context.Context, stub pluginpb.FileSystemClient, tree uint32) (interface {
		Recv() (*pluginpb.GrepHits, error)
	}, error) {
		return stub.Grep(ctx, &pluginpb.GrepRequest{Tree: tree, Pattern: []byte(q.Pattern), Path: []byte(q.Path), Glob: []byte(q.Glob), CaseInsensitive: q.CaseInsensitive, MaxResults: int64(q.MaxResults)})
	}, func(m *pluginpb.GrepHits, out []vfs.GrepResult) ([]vfs.GrepResult, *pluginpb.Error) {
		out = slices.Grow(out, len(m.Hits))[:len(m.Hits)]
		for i, h := range m.Hits {
			out[i] = vfs.GrepResult{Path: string(h.Path), LineNumber: int(h.LineNumber), Line: string(h.Line)}
		}
		return out, m.Error
	})
}

func (c *Client) Search(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return stream(c, ctx, "Search "+q.Query, func() func(vfs.SearchResult) error { return newSearchCheck(q).check }, func(ctx context.Context, stub pluginpb.FileSystemClient, tree uint32) (interface {
		Recv() (*pluginpb.SearchHits, error)
	}, error) {
		return stub.Search(ctx, &pluginpb.SearchRequest{Tree: tree, Query: []byte(q.Query), Path: []byte(q.Path), MaxResults: int64(q.MaxResults)})
	}, func(m *pluginpb.SearchHits, out []vfs.SearchResult) ([]vfs.SearchResult, *pluginpb.Error) {
		out = slices.Grow(out, len(m.Hits))[:len(m.Hits)]
		for i, h := range m.Hits {
			out[i] = vfs.SearchResult{Path: string(h.Path), Score: h.Score, LineNumber: int(h.LineNumber), Snippet: string(h.Snippet)}
		}
		return out, m.Error
	})
}

func (c *Client) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	ctx, ct := c.timed(ctx)
	defer ct.done()
	stub, tree, err := c.conn(ctx)
	if err != nil {
		return vfs.FileInfo{}, c.timedOut(ctx, "Stat "+path, err)
	}
	r, err := stub.Stat(ctx, &pluginpb.PathRequest{Tree: tree, Path: []byte(path)})
	if err != nil {
		return vfs.FileInfo{}, c.callError(ctx, "Stat "+path, err)
	}
	if r.Error != nil {
		return vfs.FileInfo{}, decodeError(r.Error)
	}
	if r.Kind > 0xff {
		return vfs.FileInfo{}, c.fail(fmt.Errorf("Stat %s: %w", path, violatef("answered a Stat of %s with kind %d, which is no kind of entry", quote(vfs.Clean(path)), r.Kind)))
	}
	info := vfs.FileInfo{Path: string(r.Path), Kind: vfs.EntryKind(r.Kind), Size: r.Size, ETag: string(r.Etag)}
	if r.HasModTime {
		info.ModTime = time.Unix(0, r.ModTimeUnixNano)
	}
	if err := checkStat(vfs.Clean(path), info); err != nil {
		return vfs.FileInfo{}, c.fail(fmt.Errorf("Stat %s: %w", path, err))
	}
	return info, nil
}

func (c *Client) Read(ctx context.Context, path string) ([]byte, error) {
	ctx, ct := c.timed(ctx)
	defer ct.done()
	if root := c.beneathRoot(ctx); root != nil {
		if data, ok := readBeneath(root, path); ok {
			c.ways[wayBeneath].Add(1)
			return data, nil
		}
	}
	shared := sharedMemory && !c.cfg.NoSharedMemory && !c.noShared.Load()
	direct := shared && processMemory && !c.cfg.NoProcessMemory && !c.noDirect.Load()
	file := shared && hostFile && !c.cfg.NoHostFile && !c.noFile.Load()
	if file && !c.noReadFile.Load() && c.hasCap(capHostFile) {
		data, done, err := c.readFile(ctx, path)
		if done {
			return data, err
		}
		if errors.Is(err, errFile) {
			// This host may not open the files its plugin has open.
			c.noFile.Store(true)
			file = false
		}
	}
	data, err := c.read(ctx, path, readWays{shared, direct, file})
	if file && errors.Is(err, errFile) {
		// This host may not open the files its plugin has open: the
		// plugin reads them from now on.
		c.noFile.Store(true)
		data, err = c.read(ctx, path, readWays{shared, direct, false})
	}
	if direct && errors.Is(err, errDirect) {
		// This host may not read the plugin's memory (a seccomp filter,
		// say): memory files from now on.
		c.noDirect.Store(true)
		data, err = c.read(ctx, path, readWays{shared, false, false})
	}
	if shared && errors.Is(err, errShared) {
		// This host cannot open the plugin's memory files (a /proc
		// without them, say): chunks from now on.
		c.noShared.Store(true)
		return c.read(ctx, path, readWays{})
	}
	return data, err
}

// hasCap reports whether the plugin's tree announced capability k.
func (c *Client) hasCap(k string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.caps[k]
}

// readWays are the ways a Read of a large file may take besides chunks:
// a memory file (shared), the plugin's memory (direct), the plugin's open
// host file (file).
type readWays struct{ shared, direct, file bool }

var (
	errShared = errors.New("cannot open the plugin's memory file")
	errDirect = errors.New("cannot read the plugin's memory")
	errFile   = errors.New("cannot read the file the plugin has open")
	errGone   = errors.New("the plugin process is gone")
)

func (c *Client) read(ctx context.Context, path string, ways readWays) ([]byte, error) {
	stub, tree, err := c.conn(ctx)
	if err != nil {
		return nil, c.timedOut(ctx, "Read "+path, err)
	}
	ct := timerOf(ctx)
	c.mu.Lock()
	pid := c.pid
	c.mu.Unlock()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := stub.Read(sctx, &pluginpb.ReadRequest{Tree: tree, Path: []byte(path), SharedMemory: ways.shared, ProcessMemory: ways.direct, HostFile: ways.file})
	if err != nil {
		return nil, c.callError(ctx, "Read "+path, err)
	}
	var (
		data []byte
		size int64
	)
	for first := true; ; first = false {
		ct.resume()
		m, err := s.Recv()
		ct.pause()
		if err == io.EOF {
			if int64(len(data)) != size {
				return nil, c.fail(fmt.Errorf("Read %s: %w", path, violatef("announced %d bytes for %s and sent %d", size, quote(vfs.Clean(path)), len(data))))
			}
			c.ways[wayChunks].Add(1)
			return data, nil
		}
		if err != nil {
			return nil, c.callError(ctx, "Read "+path, err)
		}
		if m.Error != nil {
			return nil, decodeError(m.Error)
		}
		if first || m.Restart {
			if err := checkSize(vfs.Clean(path), m.Size); err != nil {
				return nil, c.fail(fmt.Errorf("Read %s: %w", path, err))
			}
		}
		if first && m.File != 0 {
			data, err := readHostFile(pid, m.File, m.Size)
			if errors.Is(err, errGone) { // it died: a crash, not a limit of this host
				return nil, c.callError(ctx, "Read "+path, status.Error(codes.Unavailable, err.Error()))
			}
			if err != nil {
				return nil, fmt.Errorf("%w: %v", errFile, err)
			}
			c.ways[wayHostFile].Add(1)
			return data, nil
		}
		if first && m.Addr != 0 {
			data, err := readProcess(pid, m.Addr, m.Size)
			if errors.Is(err, errGone) { // it died: a crash, not a limit of this host
				return nil, c.callError(ctx, "Read "+path, status.Error(codes.Unavailable, err.Error()))
			}
			if err != nil {
				return nil, fmt.Errorf("%w: %v", errDirect, err)
			}
			if sctx.Err() != nil { // the plugin may have reused its buffer meanwhile
				return nil, c.callError(ctx, "Read "+path, sctx.Err())
			}
			c.ways[wayProcessMemory].Add(1)
			return data, nil
		}
		if first && m.Memfd != 0 {
			data, err := readShared(pid, m.Memfd, m.Size)
			if err == nil {
				c.ways[wayMemoryFile].Add(1)
			}
			return data, err
		}
		if first || m.Restart {
			// The announced size is the plugin's word: reserve no more
			// than readReserve on it, let a larger file grow.
			data, size = make([]byte, 0, min(m.Size, readReserve)), m.Size
		}
		if int64(len(data)+len(m.Data)) > size {
			return nil, c.fail(fmt.Errorf("Read %s: %w", path, violatef("announced %d bytes for %s and sent more", size, quote(vfs.Clean(path)))))
		}
		data = append(data, m.Data...)
	}
}

// readReserve is the most a chunked Read reserves up front on the size
// the plugin announced.
const readReserve = 256 << 20

// readShared reads size bytes from the plugin's memory file fd.
func readShared(pid int, fd, size int64) ([]byte, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errShared, err)
	}
	defer f.Close()
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("%w: %v", errShared, err)
	}
	return data, nil
}

func (c *Client) Write(ctx context.Context, path string, data []byte) error {
	_, err := c.write(ctx, path, data, nil)
	return err
}

func (c *Client) write(ctx context.Context, path string, data []byte, cond *vfs.Precondition) (string, error) {
	ctx, ct := c.timed(ctx)
	defer ct.done()
	if len(data) >= sharedMin && sharedMemory && !c.cfg.NoSharedMemory && !c.noShared.Load() {
		etag, err := c.writeOnce(ctx, path, data, cond, true)
		if !errors.Is(err, errShared) {
			return etag, err
		}
		c.noShared.Store(true) // the plugin cannot open our memory files
	}
	return c.writeOnce(ctx, path, data, cond, false)
}

// writeOnce sends data in chunks, or, when shared, in a memory file the
// plugin opens through /proc (the mirror of a shared Read).
func (c *Client) writeOnce(ctx context.Context, path string, data []byte, cond *vfs.Precondition, shared bool) (string, error) {
	op := "Write " + path
	stub, tree, err := c.conn(ctx)
	if err != nil {
		return "", c.timedOut(ctx, op, err)
	}
	ct := timerOf(ctx)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := stub.Write(sctx)
	if err != nil {
		return "", c.callError(ctx, op, err)
	}
	first := &pluginpb.WriteChunk{Tree: tree, Path: []byte(path), Size: int64(len(data))}
	if cond != nil {
		first.Conditional, first.IfMatch, first.IfNoneMatch = true, []byte(cond.IfMatch), cond.IfNoneMatch
	}
	if shared {
		f, err := newSharedFile()
		if err != nil {
			return "", errShared
		}
		defer f.Close() // after the reply: the plugin has read it by then
		if _, err := f.Write(data); err != nil {
			return "", errShared
		}
		first.Memfd, first.HostPid = int64(f.Fd()), int64(os.Getpid())
		data = nil
	}
	for chunk := first; ; chunk = new(pluginpb.WriteChunk) {
		n := min(len(data), chunkSize)
		chunk.Data, data = data[:n], data[n:]
		ct.resume()
		err := s.Send(chunk)
		ct.pause()
		if err != nil {
			break // the reply says why
		}
		if len(data) == 0 {
			break
		}
	}
	ct.resume()
	r, err := s.CloseAndRecv()
	if err != nil {
		return "", c.callError(ctx, op, err)
	}
	if r.SharedUnavailable {
		return "", errShared
	}
	if r.Error != nil {
		return "", decodeError(r.Error)
	}
	c.watchers.Notify(vfs.Change{Path: vfs.Clean(path), Op: vfs.ChangeWrite})
	return string(r.Etag), nil
}

func (c *Client) Delete(ctx context.Context, path string) error {
	ctx, ct := c.timed(ctx)
	defer ct.done()
	stub, tree, err := c.conn(ctx)
	if err != nil {
		return c.timedOut(ctx, "Delete "+path, err)
	}
	r, err := stub.Delete(ctx, &pluginpb.PathRequest{Tree: tree, Path: []byte(path)})
	if err != nil {
		return c.callError(ctx, "Delete "+path, err)
	}
	if r.Error != nil {
		return decodeError(r.Error)
	}
	c.watchers.Notify(vfs.Change{Path: vfs.Clean(path), Op: vfs.ChangeDelete})
	return nil
}

// MakeDir makes a directory in the plugin's tree (vfs.DirMaker): the
// plugin runs vfs.MakeDir on it, so a tree without directories of its own
// answers errors.ErrUnsupported, as does an older plugin without the call.
// A plugin whose capabilities are known and lack it is not asked.
func (c *Client) MakeDir(ctx context.Context, path string) error {
	return c.dirCall(ctx, "MakeDir", capMakeDir, path, func(ctx context.Context, stub pluginpb.FileSystemClient, req *pluginpb.PathRequest) (*pluginpb.ErrorReply, error) {
		return stub.MakeDir(ctx, req)
	})
}

// RemoveDir removes an empty directory of the plugin's tree
// (vfs.DirRemover), as MakeDir makes one.
func (c *Client) RemoveDir(ctx context.Context, path string) error {
	return c.dirCall(ctx, "RemoveDir", capRemoveDir, path, func(ctx context.Context, stub pluginpb.FileSystemClient, req *pluginpb.PathRequest) (*pluginpb.ErrorReply, error) {
		return stub.RemoveDir(ctx, req)
	})
}

func (c *Client) dirCall(ctx context.Context, op, capName, path string, call func(context.Context, pluginpb.FileSystemClient, *pluginpb.PathRequest) (*pluginpb.ErrorReply, error)) error {
	ctx, ct := c.timed(ctx)
	defer ct.done()
	stub, tree, err := c.conn(ctx)
	if err != nil {
		return c.timedOut(ctx, op+" "+path, err)
	}
	c.mu.Lock()
	known, has := c.caps != nil, c.caps[capName]
	c.mu.Unlock()
	if known && !has {
		return errors.ErrUnsupported
	}
	r, err := call(ctx, stub, &pluginpb.PathRequest{Tree: tree, Path: []byte(path)})
	if status.Code(err) == codes.Unimplemented && ctx.Err() == nil {
		return errors.ErrUnsupported // a plugin older than the call
	}
	if err != nil {
		return c.callError(ctx, op+" "+path, err)
	}
	return decodeError(r.Error)
}

// readAt is ReadAt through the plugin, in pieces of at most chunkSize.
func (c *Client) readAt(ctx context.Context, path string, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, vfs.NewError(vfs.KindOther, vfs.Clean(path), errors.New("negative offset"))
	}
	if root := c.beneathRoot(ctx); root != nil {
		if n, eof, ok := readAtBeneath(root, path, p, off); ok {
			c.ways[wayBeneath].Add(1)
			if eof {
				return n, io.EOF
			}
			return n, nil
		}
	}
	n := 0
	ctx, ct := c.timed(ctx)
	defer ct.done()
	for {
		ct.resume()
		stub, tree, err := c.conn(ctx)
		if err != nil {
			return n, c.timedOut(ctx, "ReadAt "+path, err)
		}
		want := min(len(p)-n, chunkSize)
		r, err := stub.ReadAt(ctx, &pluginpb.ReadAtRequest{Tree: tree, Path: []byte(path), Offset: off + int64(n), Length: int64(want)})
		ct.pause()
		if err != nil {
			return n, c.callError(ctx, "ReadAt "+path, err)
		}
		if len(r.Data) > want {
			return n, c.fail(fmt.Errorf("ReadAt %s: %w", path, violatef("sent %d bytes for a ReadAt of %d of %s", len(r.Data), want, quote(vfs.Clean(path)))))
		}
		n += copy(p[n:], r.Data)
		switch {
		case r.Error != nil:
			return n, decodeError(r.Error)
		case r.Eof:
			return n, io.EOF
		case n == len(p):
			return n, nil
		case len(r.Data) < want:
			return n, io.ErrUnexpectedEOF
		}
	}
}

type rangeReader struct{ c *Client }

// ReadAt reads through the plugin's ReadAt when its tree has one, else
// (a tree bound before its plugin ran, see unknown) it is vfs.ReadAt's
// answer for a tree without it: a whole Read, cut.
func (r rangeReader) ReadAt(ctx context.Context, path string, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, vfs.NewError(vfs.KindOther, vfs.Clean(path), errors.New("negative offset"))
	}
	if !r.c.hasCap(capReadAt) {
		return vfs.ReadAt(ctx, r.c, path, p, off) // r.c itself has no ReadAt: the helper's fallback
	}
	return r.c.readAt(ctx, path, p, off)
}

type condWriter struct{ c *Client }

// WriteIf sends a conditional write; the plugin runs vfs.WriteIf on its
// tree (its own WriteIf, or the helper's answer for a tree without one).
func (w condWriter) WriteIf(ctx context.Context, path string, data []byte, cond vfs.Precondition) (string, error) {
	return w.c.write(ctx, path, data, &cond)
}

type notifier struct{ c *Client }

// Watch reports the changes made through this host's tree (writes and
// deletes that went through the plugin from here), before the verb
// returns. Changes the plugin's tree sees from elsewhere are not reported.
func (n notifier) Watch(fn func(vfs.Change)) (cancel func()) { return n.c.watchers.Watch(fn) }

// unknown returns c as the FS of a plugin not started yet (Config.Deferred),
// whose capabilities are unknown: the two whose helpers answer per path,
// routed by what the plugin announces once it runs, and no Notifier.
func (c *Client) unknown() FS {
	return struct {
		*Client
		vfs.RangeReader
		vfs.ConditionalWriter
	}{c, rangeReader{c}, condWriter{c}}
}

// negotiated returns c as an FS with exactly the optional capabilities its
// plugin's tree announced.
func (c *Client) negotiated() FS {
	ra, wi, w := c.caps[capReadAt], c.caps[capWriteIf], c.caps[capWatch]
	r, cw, n := rangeReader{c}, condWriter{c}, notifier{c}
	switch {
	case ra && wi && w:
		return struct {
			*Client
			vfs.RangeReader
			vfs.ConditionalWriter
			vfs.Notifier
		}{c, r, cw, n}
	case ra && wi:
		return struct {
			*Client
			vfs.RangeReader
			vfs.ConditionalWriter
		}{c, r, cw}
	case ra && w:
		return struct {
			*Client
			vfs.RangeReader
			vfs.Notifier
		}{c, r, n}
	case wi && w:
		return struct {
			*Client
			vfs.ConditionalWriter
			vfs.Notifier
		}{c, cw, n}
	case ra:
		return struct {
			*Client
			vfs.RangeReader
		}{c, r}
	case wi:
		return struct {
			*Client
			vfs.ConditionalWriter
		}{c, cw}
	case w:
		return struct {
			*Client
			vfs.Notifier
		}{c, n}
	}
	return c
}

// Unwrap returns the *Client behind a tree Open returned (for Pid and
// tests), or nil.
func Unwrap(fsys vfs.FileSystem) *Client {
	switch f := fsys.(type) {
	case *Client:
		return f
	case interface{ client() *Client }:
		return f.client()
	}
	return nil
}

func (c *Client) client() *Client { return c }
