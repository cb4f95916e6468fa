package plugins

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/julyfs/julyfs/plugins/pluginpb"
	"github.com/julyfs/julyfs/vfs"
)

// ReadFile is a Read in one unary round trip, for a tree whose readers
// are files of the host's disk ([OSFile]; the tree announces "host_file").
// A small file comes inline. A large one comes as the plugin's descriptor,
// which the host opens through /proc/PID/fd/N and keeps (hostFiles): the
// next Read of the same path names the file it holds (st_dev, st_ino) and
// the plugin, having opened the path again, answers "same" when it still
// is that file, so the host reads its own descriptor with no /proc open
// and the plugin hands nothing over. A file replaced since (a new inode:
// vfs/local writes by renaming a new file into place) is handed over anew;
// a file rewritten or truncated in place is the same inode, which the
// host's descriptor reads as it is now, as opening it would.
//
// Descriptors handed over stay open in the plugin until the host, having
// opened its own, lists their handles in a later request (or for
// handedTTL, after which the host's identity check refuses whatever the
// number then names).

// The plugin's side.

const (
	handedTTL = time.Minute
	handedMax = 4096
)

// handedFiles holds the readers whose descriptors ReadFile answered, until
// the host releases them.
type handedFiles struct {
	mu    sync.Mutex
	next  uint64
	files map[uint64]handed
	timer *time.Timer
}

type handed struct {
	r  vfs.FileReader
	at time.Time
}

// add keeps r open and returns its handle.
func (h *handedFiles) add(r vfs.FileReader) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.files == nil {
		h.files = map[uint64]handed{}
	}
	h.sweepLocked(time.Now())
	for len(h.files) >= handedMax { // a host that never releases: drop the oldest
		var oldest uint64
		for k := range h.files {
			if oldest == 0 || k < oldest {
				oldest = k
			}
		}
		h.files[oldest].r.Close()
		delete(h.files, oldest)
	}
	h.next++
	h.files[h.next] = handed{r, time.Now()}
	if h.timer == nil {
		h.timer = time.AfterFunc(handedTTL, h.sweep)
	}
	return h.next
}

// release closes the readers of handles.
func (h *handedFiles) release(handles []uint64) {
	if len(handles) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range handles {
		if f, ok := h.files[k]; ok {
			f.r.Close()
			delete(h.files, k)
		}
	}
}

func (h *handedFiles) sweep() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweepLocked(time.Now())
	h.timer = nil
	if len(h.files) > 0 {
		h.timer = time.AfterFunc(handedTTL, h.sweep)
	}
}

func (h *handedFiles) sweepLocked(now time.Time) {
	for k, f := range h.files {
		if now.Sub(f.at) > handedTTL {
			f.r.Close()
			delete(h.files, k)
		}
	}
}

func (s *server) ReadFile(ctx context.Context, req *pluginpb.ReadFileRequest) (*pluginpb.ReadFileReply, error) {
	s.handed.release(req.Release)
	fsys, err := s.tree(req.Tree)
	if err != nil {
		return &pluginpb.ReadFileReply{Error: encodeError(err)}, nil
	}
	p := string(req.Path)
	noHost := false
	if fo, ok := fsys.(vfs.FileOpener); ok && hostFile {
		if r, err := fo.OpenFile(ctx, p); err == nil {
			reply, kept := s.handFile(req, r)
			if !kept {
				r.Close()
			}
			if reply != nil {
				return reply, nil
			}
		}
	} else {
		noHost = true
	}
	if _, no := s.noOSFile.Load(req.Tree); no {
		noHost = true
	}
	// A small file, or one the tree could not open (Read says why).
	data, err := fsys.Read(ctx, p)
	switch {
	case err != nil:
		return &pluginpb.ReadFileReply{Error: encodeError(err), NoHostFile: noHost}, nil
	case len(data) > chunkSize: // it grew: the stream sends it
		return &pluginpb.ReadFileReply{NoHostFile: noHost}, nil
	}
	return &pluginpb.ReadFileReply{Inline: true, Data: data, NoHostFile: noHost}, nil
}

// handFile answers a ReadFile with r, the file the path names now: "same"
// when it is the file the host holds, its descriptor (kept open: kept is
// true) when it is another, or nil when r is small or not a regular host
// file (the caller reads it; a reader that is not an OSFile also marks
// the tree, and the reply says so).
func (s *server) handFile(req *pluginpb.ReadFileRequest, r vfs.FileReader) (reply *pluginpb.ReadFileReply, kept bool) {
	of, ok := r.(OSFile)
	if !ok {
		s.noOSFile.Store(req.Tree, true)
		if r.Size() >= sharedMin {
			return &pluginpb.ReadFileReply{NoHostFile: true}, false // the stream sends it
		}
		return nil, false
	}
	size := r.Size()
	if size < sharedMin {
		return nil, false
	}
	f := of.File()
	dev, ino, regular, err := fileID(f)
	if err != nil || !regular {
		return nil, false
	}
	if dev == req.HaveDev && ino == req.HaveIno {
		return &pluginpb.ReadFileReply{Same: true, Size: size, Dev: dev, Ino: ino}, false
	}
	h := s.handed.add(r)
	return &pluginpb.ReadFileReply{File: int64(f.Fd()), Handle: h, Dev: dev, Ino: ino, Size: size}, true
}

// The host's side.

const (
	heldMax  = 64              // descriptors the host keeps per plugin tree
	heldIdle = 5 * time.Second // and how long one unused stays open
	// speculateMax is the largest held file read while the plugin checks
	// it is still the one (readFile).
	speculateMax = 16 << 20
)

// hostFiles are the host's descriptors of files a plugin handed over,
// by path, and the handles it has still to release.
type hostFiles struct {
	mu       sync.Mutex
	byPath   map[string]*heldFile
	release  []uint64 // handles of process pid to release
	pid      int
	timer    *time.Timer
	disabled bool // closed: keep nothing
}

// heldFile is one descriptor of the host, shared by the Reads using it.
type heldFile struct {
	f        *os.File
	dev, ino uint64
	size     int64 // its size when handed over
	refs     int   // Reads using it
	gone     bool  // out of the cache: closed when refs reach 0
	used     time.Time
}

// get returns the file held for path (with a reference), or nil.
func (h *hostFiles) get(path string) *heldFile {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.byPath[path]
	if f != nil {
		f.refs++
		f.used = time.Now()
	}
	return f
}

// put drops a reference get or hold gave.
func (h *hostFiles) put(f *heldFile) {
	if f == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	f.refs--
	if f.gone && f.refs == 0 {
		f.f.Close()
	}
}

// drop takes f out of the cache (it no longer is the file at its path).
func (h *hostFiles) drop(path string, f *heldFile) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byPath[path] == f {
		h.dropLocked(path)
	}
}

func (h *hostFiles) dropLocked(path string) {
	f := h.byPath[path]
	delete(h.byPath, path)
	f.gone = true
	if f.refs == 0 {
		f.f.Close()
	}
}

// hold caches f for path, replacing what was held, and returns it with a
// reference.
func (h *hostFiles) hold(path string, f *os.File, dev, ino uint64, size int64) *heldFile {
	hf := &heldFile{f: f, dev: dev, ino: ino, size: size, refs: 1, used: time.Now()}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.disabled {
		hf.gone = true
		return hf
	}
	if h.byPath == nil {
		h.byPath = map[string]*heldFile{}
	}
	if h.byPath[path] != nil {
		h.dropLocked(path)
	}
	for len(h.byPath) >= heldMax {
		var oldest string
		for p, o := range h.byPath {
			if oldest == "" || o.used.Before(h.byPath[oldest].used) {
				oldest = p
			}
		}
		h.dropLocked(oldest)
	}
	h.byPath[path] = hf
	if h.timer == nil {
		h.timer = time.AfterFunc(heldIdle, h.sweep)
	}
	return hf
}

// sweep closes the descriptors unused for heldIdle.
func (h *hostFiles) sweep() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.timer = nil
	now := time.Now()
	for p, f := range h.byPath {
		if f.refs == 0 && now.Sub(f.used) > heldIdle {
			h.dropLocked(p)
		}
	}
	if len(h.byPath) > 0 {
		h.timer = time.AfterFunc(heldIdle, h.sweep)
	}
}

// closeAll closes every descriptor (as its Reads end) and keeps none from
// now on.
func (h *hostFiles) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.disabled = true
	for p := range h.byPath {
		h.dropLocked(p)
	}
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
}

// toRelease returns the handles to release in a request to process pid
// (those of an earlier process are void).
func (h *hostFiles) toRelease(pid int) []uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pid != pid {
		h.release, h.pid = nil, pid
	}
	r := h.release
	h.release = nil
	return r
}

// released queues handle of process pid for release; back puts back
// handles a request could not deliver.
func (h *hostFiles) released(pid int, handles ...uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pid != pid {
		h.release, h.pid = nil, pid
	}
	h.release = append(h.release, handles...)
}

// readFile reads path with one ReadFile call. done is false when the
// Read stream must be used instead (the plugin said so, or this host
// cannot open the plugin's descriptor: then errFile).
func (c *Client) readFile(ctx context.Context, path string) (data []byte, done bool, err error) {
	stub, tree, pid, err := c.connPid(ctx)
	if err != nil {
		return nil, true, err
	}
	key := vfs.Clean(path)
	held := c.held.get(key)
	defer func() { c.held.put(held) }()
	req := &pluginpb.ReadFileRequest{Tree: tree, Path: []byte(path), Release: c.held.toRelease(pid)}
	if held != nil {
		req.HaveDev, req.HaveIno = held.dev, held.ino
	}
	var (
		r     *pluginpb.ReadFileReply
		early []byte // the held file, read while the plugin checks it is still the one
		eerr  error
		asked = make(chan struct{})
	)
	if held != nil && held.size <= speculateMax {
		// The reply is most likely "same": read the held file meanwhile,
		// so the call costs the longer of the two, not their sum. (Not
		// for large files, where the call is a small part of the read and
		// a wasted read would double the memory the call holds.)
		go func() {
			defer close(asked)
			r, err = stub.ReadFile(ctx, req)
		}()
		early, eerr = readOpenFile(held.f, math.MaxInt64)
		<-asked
	} else {
		r, err = stub.ReadFile(ctx, req)
	}
	if err != nil {
		c.held.released(pid, req.Release...) // not delivered
		if status.Code(err) == codes.Unimplemented && ctx.Err() == nil {
			c.noReadFile.Store(true) // restarted as an older plugin
			return nil, false, nil
		}
		return nil, true, c.callError(ctx, "Read "+path, err)
	}
	if r.NoHostFile {
		c.noReadFile.Store(true)
	}
	switch {
	case r.Error != nil:
		if held != nil {
			c.held.drop(key, held)
		}
		return nil, true, decodeError(r.Error)
	case r.Inline:
		if held != nil {
			c.held.drop(key, held)
		}
		c.ways[wayChunks].Add(1)
		return r.Data, true, nil
	case r.Same && held != nil && r.Dev == held.dev && r.Ino == held.ino:
		// The file the path names is the one held: what was read of it
		// meanwhile is its contents, cut to the size the plugin saw. A
		// file rewritten in place meanwhile to more than was read is
		// read again, as it is now.
		data, err := early, eerr
		if err == nil && int64(len(data)) < r.Size {
			data, err = readOpenFile(held.f, r.Size)
		}
		if err == nil && int64(len(data)) > r.Size {
			data = data[:r.Size:r.Size]
		}
		if err != nil { // the stream reads it, or says why it cannot
			c.held.drop(key, held)
			return nil, false, nil
		}
		c.ways[wayHostFile].Add(1)
		return data, true, nil
	case r.File != 0:
		if held != nil {
			c.held.drop(key, held)
		}
		f, err := openHostFile(pid, r.File)
		c.held.released(pid, r.Handle)
		if errors.Is(err, errGone) { // it died: a crash, not a limit of this host
			return nil, true, c.callError(ctx, "Read "+path, status.Error(codes.Unavailable, err.Error()))
		}
		if err != nil {
			return nil, false, fmt.Errorf("%w: %v", errFile, err)
		}
		if dev, ino, _, err := fileID(f); err != nil || dev != r.Dev || ino != r.Ino {
			// The descriptor number names another file by now (the
			// plugin gave up waiting for a release): read the stream.
			f.Close()
			return nil, false, nil
		}
		nh := c.held.hold(key, f, r.Dev, r.Ino, r.Size)
		defer c.held.put(nh)
		data, err := readOpenFile(f, r.Size)
		if err != nil {
			c.held.drop(key, nh)
			return nil, false, nil
		}
		c.ways[wayHostFile].Add(1)
		return data, true, nil
	}
	if held != nil {
		c.held.drop(key, held)
	}
	return nil, false, nil
}
