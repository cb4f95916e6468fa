package index

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
)

// Asking a following process (git's fsmonitor model): an FS opened with
// Options.Follow holds the index (one process at a time may open it) and
// keeps it up to date as the tree changes. It listens on a unix socket in
// the index directory (followSocket); an Open without Follow (a one-shot
// `julyfs search`, `july call`) that finds a live follower there does not
// open the index at all: its Search asks the follower, which answers from
// the index it keeps, after making sure it has seen every change made
// before the question (see follower.barrier). Every other verb goes to the
// tree as usual; the follower sees the writes of the asking process as it
// sees anyone's.
//
// The protocol is one JSON object a line: the asker sends a request, the
// follower answers with results and a last line that says the stream is
// complete or carries its error. One request a connection.

// followSocket is the name of the follower's socket in the index directory.
const followSocket = "julyfs-follow.sock"

// followRequest is what an asker sends.
type followRequest struct {
	Op    string `json:"op"`             // "hello" or "search"
	Tree  string `json:"tree,omitempty"` // the asker's Options.Tree
	Query string `json:"query,omitempty"`
	Path  string `json:"path,omitempty"`
	Max   int    `json:"max,omitempty"`
}

// followReply is one line of the follower's answer: a result, or the last
// line (End, or Err).
type followReply struct {
	Path    string       `json:"path,omitempty"`
	Score   float64      `json:"score,omitempty"`
	Line    int          `json:"line,omitempty"`
	Snippet string       `json:"snippet,omitempty"`
	End     bool         `json:"end,omitempty"`
	Err     *remoteError `json:"err,omitempty"`
	Pid     int          `json:"pid,omitempty"` // hello
}

// remoteError carries an error across the socket: a vfs.PathError keeps
// its kind, others their message.
type remoteError struct {
	Kind    vfs.ErrorKind `json:"kind,omitempty"`
	Path    string        `json:"path,omitempty"`
	Pattern string        `json:"pattern,omitempty"`
	Detail  string        `json:"detail,omitempty"`
	Msg     string        `json:"msg"`
	Tree    string        `json:"tree,omitempty"` // ErrOtherTree: the follower's tree
}

func toRemote(err error) *remoteError {
	r := &remoteError{Msg: err.Error()}
	var pe *vfs.PathError
	if errors.As(err, &pe) {
		r.Kind, r.Path, r.Pattern, r.Detail = pe.Kind, pe.Path, pe.Pattern, pe.Detail
	}
	var ot *otherTreeError
	if errors.As(err, &ot) {
		r.Tree = ot.built
	}
	return r
}

func (r *remoteError) err(dir, tree string) error {
	switch {
	case r.Tree != "":
		return &otherTreeError{dir: dir, built: r.Tree, given: tree}
	case r.Kind != 0:
		return &vfs.PathError{Kind: r.Kind, Path: r.Path, Pattern: r.Pattern, Detail: r.Detail, Err: errors.New(r.Msg)}
	}
	return errors.New(r.Msg)
}

// socketAddr returns the address of the socket name in dir, and a function
// to call once it has been used. A unix socket's path is limited to 107
// bytes; a longer one is reached through /proc/self/fd and a descriptor of
// dir.
func socketAddr(dir, name string) (string, func(), error) {
	p := filepath.Join(dir, name)
	if len(p) < 100 {
		return p, func() {}, nil
	}
	d, err := os.OpenFile(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return "", nil, err
	}
	return "/proc/self/fd/" + strconv.Itoa(int(d.Fd())) + "/" + name, func() { d.Close() }, nil
}

// server is a follower's socket.
type server struct {
	f     *FS
	ln    net.Listener
	path  string
	tree  string // the tree the index is for ("" when unknown)
	ctx   context.Context
	stop  context.CancelFunc
	conns sync.WaitGroup
}

// serve starts answering askers on the socket in the index directory. A
// socket left there by a process that died is replaced: this process
// holds the index, so no other follower of it is alive.
func (f *FS) serve() error {
	path := filepath.Join(f.dir, followSocket)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("index: %w", err)
	}
	addr, done, err := socketAddr(f.dir, followSocket)
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	ln, err := net.Listen("unix", addr)
	done()
	if err != nil {
		return fmt.Errorf("index: listen for searches: %w", err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	// Only this user may ask (the index reveals the tree's contents).
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		os.Remove(path)
		return fmt.Errorf("index: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &server{f: f, ln: ln, path: path, ctx: ctx, stop: stop, tree: f.opts.Tree}
	if s.tree == "" {
		// A follower that was not told its tree (july run) answers for
		// the tree the index records, if any.
		if raw, err := os.ReadFile(filepath.Join(f.dir, metaFile)); err == nil {
			var meta indexMeta
			if json.Unmarshal(raw, &meta) == nil {
				s.tree = meta.Tree
			}
		}
	}
	s.conns.Add(1)
	go s.accept()
	f.server = s
	return nil
}

func (s *server) accept() {
	defer s.conns.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.conns.Add(1)
		go func() {
			defer s.conns.Done()
			s.handle(c)
		}()
	}
}

// close stops answering, waits for the answers in progress and removes
// the socket.
func (s *server) close() {
	s.stop()
	s.ln.Close()
	s.conns.Wait()
	os.Remove(s.path)
}

// handle answers one request.
func (s *server) handle(c net.Conn) {
	defer c.Close()
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReaderSize(c, 4096).ReadBytes('\n')
	if err != nil {
		return
	}
	c.SetReadDeadline(time.Time{})
	// The asker hanging up cancels the search.
	go func() {
		var b [1]byte
		c.Read(b[:])
		cancel()
	}()
	w := bufio.NewWriter(c)
	enc := json.NewEncoder(w)
	reply := func(r followReply) bool { return enc.Encode(r) == nil }
	fail := func(err error) {
		reply(followReply{Err: toRemote(err)})
		w.Flush()
	}
	var req followRequest
	if err := json.Unmarshal(line, &req); err != nil {
		fail(fmt.Errorf("index: bad request: %v", err))
		return
	}
	f := s.f
	if req.Tree != "" && s.tree != "" && req.Tree != s.tree {
		fail(&otherTreeError{dir: f.dir, built: s.tree, given: req.Tree})
		return
	}
	switch req.Op {
	case "hello":
		reply(followReply{End: true, Pid: os.Getpid()})
		w.Flush()
		return
	case "search":
	default:
		fail(fmt.Errorf("index: unknown request %q", req.Op))
		return
	}
	if fl := f.currentFollower(); fl != nil {
		if err := fl.barrier(ctx); err != nil {
			fail(err)
			return
		}
	}
	for r, err := range f.Search(ctx, vfs.SearchQuery{Query: req.Query, Path: req.Path, MaxResults: req.Max}) {
		if err != nil {
			fail(err)
			return
		}
		if !reply(followReply{Path: r.Path, Score: r.Score, Line: r.LineNumber, Snippet: r.Snippet}) {
			return
		}
	}
	reply(followReply{End: true})
	w.Flush()
}

// remote is the asking side: an FS whose searches a follower answers.
type remote struct {
	dir, tree string
	pid       int
}

// dialFollower asks the follower of the index in dir, if one is alive, to
// answer for tree. It returns nil when none answers (no socket, or one
// left by a process that is gone), and an error when one answers with a
// refusal (an index of another tree).
func dialFollower(ctx context.Context, dir, tree string) (*remote, error) {
	if _, err := os.Lstat(filepath.Join(dir, followSocket)); err != nil {
		return nil, nil
	}
	r := &remote{dir: dir, tree: tree}
	ok := false
	// A follower answers hello at once; one that does not within
	// helloTimeout is taken to be gone (opening the index then says
	// whether some process still holds it).
	hctx, cancel := context.WithTimeout(ctx, helloTimeout)
	defer cancel()
	for rep, err := range r.ask(hctx, followRequest{Op: "hello"}) {
		if err != nil {
			var re *remoteReplyError
			if errors.As(err, &re) {
				return nil, re.err
			}
			return nil, nil // not alive
		}
		if rep.End {
			r.pid, ok = rep.Pid, true
		}
	}
	if !ok {
		return nil, nil
	}
	return r, nil
}

// helloTimeout bounds the wait for a follower's first answer.
const helloTimeout = 5 * time.Second

// remoteReplyError is an error the follower answered (as opposed to one
// of reaching it).
type remoteReplyError struct{ err error }

func (e *remoteReplyError) Error() string { return e.err.Error() }
func (e *remoteReplyError) Unwrap() error { return e.err }

// ask sends req and yields the replies up to the last one (End). A stream
// cut short is an error.
func (r *remote) ask(ctx context.Context, req followRequest) iter.Seq2[followReply, error] {
	return func(yield func(followReply, error) bool) {
		addr, done, err := socketAddr(r.dir, followSocket)
		if err != nil {
			yield(followReply{}, err)
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, "unix", addr)
		done()
		if err != nil {
			yield(followReply{}, err)
			return
		}
		defer c.Close()
		stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
		defer stop()
		req.Tree = r.tree
		raw, _ := json.Marshal(req)
		if _, err := c.Write(append(raw, '\n')); err != nil {
			yield(followReply{}, err)
			return
		}
		dec := json.NewDecoder(bufio.NewReader(c))
		for {
			var rep followReply
			if err := dec.Decode(&rep); err != nil {
				if cerr := ctx.Err(); cerr != nil {
					err = cerr
				} else {
					err = fmt.Errorf("index %s: the process following it stopped answering: %v", r.dir, err)
				}
				yield(followReply{}, err)
				return
			}
			if rep.Err != nil {
				yield(followReply{}, &remoteReplyError{rep.Err.err(r.dir, r.tree)})
				return
			}
			if !yield(rep, nil) || rep.End {
				return
			}
		}
	}
}

// search asks the follower for q's results.
func (r *remote) search(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return func(yield func(vfs.SearchResult, error) bool) {
		for rep, err := range r.ask(ctx, followRequest{Op: "search", Query: q.Query, Path: q.Path, Max: q.MaxResults}) {
			if err != nil {
				var re *remoteReplyError
				if errors.As(err, &re) {
					err = re.err
				}
				yield(vfs.SearchResult{}, err)
				return
			}
			if rep.End {
				return
			}
			if !yield(vfs.SearchResult{Path: rep.Path, Score: rep.Score, LineNumber: rep.Line, Snippet: rep.Snippet}, nil) {
				return
			}
		}
	}
}

// FollowedBy returns the process id of the following process whose index
// answers this FS's searches (an FS opened without Follow while another
// process follows the index), or 0 when this FS searches the index itself.
func (f *FS) FollowedBy() int {
	if f.remote == nil {
		return 0
	}
	return f.remote.pid
}
