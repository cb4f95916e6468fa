package plugins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/julyfs/julyfs/plugins/pluginpb"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

// Sizes of the wire: file contents travel in chunks of chunkSize (far below
// gRPC's 4 MiB message limit), stream elements in batches of at most
// batchCount elements or batchBytes bytes, flushed at least every
// batchDelay so a slow stream still delivers its first elements early.
const (
	chunkSize  = 1 << 20
	batchCount = 4096
	batchBytes = 256 << 10
	batchDelay = 20 * time.Millisecond

	// HTTP/2 flow control starts each stream at a 64 KiB window, which
	// makes a 1 MiB chunk wait for many window updates; both sides start
	// at windowSize instead (gRPC then keeps it fixed).
	windowSize = 16 << 20
	bufferSize = 256 << 10
)

// ServeOptions configures [ServeWith].
type ServeOptions struct {
	// Open builds the tree for the host's parameters (the query of a
	// plugin: mount spec, or args: in agent.yaml). Its error reaches the
	// host as the mount's error, so say what is wrong with which
	// parameter. Required.
	Open func(ctx context.Context, args map[string]string) (vfs.FileSystem, error)
	// Seed, when set, builds a fresh tree holding exactly files: what
	// `julyfs conformance` uses to check a read-only plugin. Without it
	// conformance can check the plugin only if it is writable.
	Seed func(ctx context.Context, files map[string][]byte) (vfs.FileSystem, error)
}

// Serve serves fsys to the julyfs host that started this process and never
// returns: it is all a plugin's main needs. The plugin then accepts no
// parameters. A binary run by hand says it is a plugin and exits 1.
func Serve(fsys vfs.FileSystem) {
	ServeWith(ServeOptions{Open: func(_ context.Context, args map[string]string) (vfs.FileSystem, error) {
		if len(args) > 0 {
			return nil, fmt.Errorf("takes no parameters, got %s", slices.Sorted(maps.Keys(args)))
		}
		return fsys, nil
	}})
}

// ServeWith serves the trees opts builds, one per mount of the host, and
// never returns.
func ServeWith(opts ServeOptions) {
	if opts.Open == nil {
		fmt.Fprintln(os.Stderr, "plugins.ServeWith: Open is nil")
		os.Exit(1)
	}
	watchParent()
	if handshakeOut != nil {
		os.Stdout = handshakeOut
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: handshake,
		VersionedPlugins: map[int]plugin.PluginSet{
			protocolVersion(): {pluginName: &grpcPlugin{server: &server{opts: opts, trees: map[uint32]vfs.FileSystem{}}}},
		},
		GRPCServer: func(o []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(o,
				grpc.MaxRecvMsgSize(4*chunkSize),
				grpc.InitialWindowSize(windowSize),
				grpc.InitialConnWindowSize(windowSize),
				grpc.WriteBufferSize(bufferSize),
				grpc.ReadBufferSize(bufferSize),
			)...)
		},
		Logger: Logger(),
	})
	os.Exit(0)
}

var (
	loggerOnce sync.Once
	logger     hclog.Logger
	realStderr = os.Stderr
)

// Logger is the plugin's logger: JSON lines on its standard error, which
// the host logs under the plugin's name at the level of each line (set
// JULYFS_PLUGIN_LOG=debug on the host to see debug lines).
func Logger() hclog.Logger {
	loggerOnce.Do(func() {
		logger = hclog.New(&hclog.LoggerOptions{
			Level:      hclog.Trace,
			Output:     realStderr,
			JSONFormat: true,
		})
	})
	return logger
}

// watchParent ends the plugin when its host goes away, whatever the
// platform: the host's Pdeathsig covers Linux, this covers the rest (the
// parent changes when the host dies).
func watchParent() {
	ppid := os.Getppid()
	go func() {
		for range time.Tick(250 * time.Millisecond) {
			if os.Getppid() != ppid {
				os.Exit(2)
			}
		}
	}()
}

// grpcPlugin is the go-plugin glue of both sides.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	server *server
}

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pluginpb.RegisterFileSystemServer(s, p.server)
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return pluginpb.NewFileSystemClient(cc), nil
}

// server answers the host's calls on the trees it opened.
type server struct {
	pluginpb.UnimplementedFileSystemServer
	opts  ServeOptions
	mu    sync.Mutex
	next  uint32
	trees map[uint32]vfs.FileSystem
	// noOSFile holds the ids of trees whose vfs.FileOpener readers are
	// not OSFiles (or that have none): Reads stop trying to open them.
	noOSFile sync.Map
	// handed holds the descriptors ReadFile handed to the host.
	handed handedFiles
}

func (s *server) tree(id uint32) (vfs.FileSystem, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fsys, ok := s.trees[id]; ok {
		return fsys, nil
	}
	return nil, fmt.Errorf("no tree %d in this plugin", id)
}

func (s *server) Open(ctx context.Context, req *pluginpb.OpenRequest) (*pluginpb.OpenReply, error) {
	var (
		fsys vfs.FileSystem
		err  error
	)
	switch {
	case req.Seeded && s.opts.Seed == nil:
		err = ErrNoSeed
	case req.Seeded:
		fsys, err = s.opts.Seed(ctx, req.Seed)
	default:
		fsys, err = s.opts.Open(ctx, req.Args)
	}
	if err != nil {
		return &pluginpb.OpenReply{Error: encodeError(err)}, nil
	}
	s.mu.Lock()
	s.next++
	id := s.next
	s.trees[id] = fsys
	s.mu.Unlock()
	var caps []string
	if _, ok := fsys.(vfs.RangeReader); ok {
		caps = append(caps, capReadAt)
	}
	if _, ok := fsys.(vfs.ConditionalWriter); ok {
		caps = append(caps, capWriteIf)
	}
	if _, ok := fsys.(vfs.Notifier); ok {
		caps = append(caps, capWatch)
	}
	if _, ok := fsys.(vfs.DirMaker); ok {
		caps = append(caps, capMakeDir)
	}
	if _, ok := fsys.(vfs.DirRemover); ok {
		caps = append(caps, capRemoveDir)
	}
	if _, ok := fsys.(vfs.FileOpener); ok && hostFile {
		caps = append(caps, capHostFile)
	}
	reply := &pluginpb.OpenReply{Tree: id, Capabilities: caps}
	reply.RootDir, reply.RootDev, reply.RootIno = beneathDir(fsys)
	return reply, nil
}

// beneathDir returns the descriptor of fsys's root directory and its
// identity when the host may read fsys's files itself by opening them
// beneath it (a vfs/local tree on Linux; local.FS.BeneathDir), or zeros.
// Only a *local.FS itself qualifies, not a type embedding one: such a type
// may answer Read otherwise (hide or rewrite files), which the host,
// reading beneath the directory, would not know.
func beneathDir(fsys vfs.FileSystem) (fd int64, dev, ino uint64) {
	l, ok := fsys.(*local.FS)
	if !ok || !hostFile {
		return 0, 0, 0
	}
	d := l.BeneathDir()
	if d == nil {
		return 0, 0, 0
	}
	dev, ino, dir, err := dirID(d)
	if err != nil || !dir {
		return 0, 0, 0
	}
	return int64(d.Fd()), dev, ino
}

// The optional capabilities a tree can announce.
const (
	capReadAt  = "read_at"
	capWriteIf = "write_if"
	capWatch   = "watch"
	// capMakeDir, capRemoveDir: the tree has directories of its own. The
	// host's tree is a vfs.DirMaker and vfs.DirRemover either way (the
	// helpers answer errors.ErrUnsupported for a tree without them, so a
	// wrapper offers them whatever its trees are); these spare it a call
	// to learn that.
	capMakeDir   = "make_dir"
	capRemoveDir = "remove_dir"
	// capHostFile: the plugin answers ReadFile for the tree (not a
	// capability of the host's tree, a way its Reads may take).
	capHostFile = "host_file"
)

// pump sends seq in batches through send, the error (if any) in the last
// batch. A failed send (the host broke out of its loop or went away) ends
// the range over seq, which stops the tree's work.
func pump[E any](seq iter.Seq2[E, error], size func(E) int, send func([]E, *pluginpb.Error) error) error {
	var (
		batch []E
		bytes int
		due   atomic.Bool // set by timer batchDelay after a batch's first element
	)
	// A timer instead of a clock read per element (which cost 2% of a
	// List in the plugin): a late tick only flushes a batch early.
	timer := time.AfterFunc(time.Hour, func() { due.Store(true) })
	defer timer.Stop()
	flush := func(e *pluginpb.Error) error {
		timer.Stop()
		due.Store(false)
		err := send(batch, e)
		batch, bytes = batch[:0], 0
		return err
	}
	for e, err := range seq {
		if err != nil {
			return flush(encodeError(err))
		}
		if len(batch) == 0 {
			timer.Reset(batchDelay)
		}
		batch = append(batch, e)
		bytes += size(e)
		if len(batch) >= batchCount || bytes >= batchBytes || due.Load() {
			if err := flush(nil); err != nil {
				return err
			}
		}
	}
	if len(batch) > 0 {
		return flush(nil)
	}
	return nil
}

// packEntries packs es into one Entries message.
func packEntries(es []vfs.DirEntry, e *pluginpb.Error) *pluginpb.Entries {
	n := 0
	for _, d := range es {
		n += len(d.Path)
	}
	m := &pluginpb.Entries{Paths: make([]byte, 0, n), Lengths: make([]uint32, len(es)), Kinds: make([]byte, len(es)), Error: e}
	for i, d := range es {
		m.Paths = append(m.Paths, d.Path...)
		m.Lengths[i] = uint32(len(d.Path))
		m.Kinds[i] = byte(d.Kind)
		if d.Link {
			m.Kinds[i] |= kindLink
		}
	}
	return m
}

// kindLink marks an entry that is a link (vfs.DirEntry.Link) in its kind
// byte; the low bits are the vfs.EntryKind of what it leads to.
const kindLink = 0x80

func entrySize(e vfs.DirEntry) int { return len(e.Path) + 8 }

func (s *server) entries(id uint32, stream grpc.ServerStream, seq func(vfs.FileSystem) iter.Seq2[vfs.DirEntry, error]) error {
	fsys, err := s.tree(id)
	if err != nil {
		return stream.SendMsg(&pluginpb.Entries{Error: encodeError(err)})
	}
	return pump(seq(fsys), entrySize, func(es []vfs.DirEntry, e *pluginpb.Error) error {
		return stream.SendMsg(packEntries(es, e))
	})
}

func (s *server) List(req *pluginpb.ListRequest, stream pluginpb.FileSystem_ListServer) error {
	return s.entries(req.Tree, stream, func(fsys vfs.FileSystem) iter.Seq2[vfs.DirEntry, error] {
		return fsys.List(stream.Context(), string(req.Prefix))
	})
}

func (s *server) Glob(req *pluginpb.GlobRequest, stream pluginpb.FileSystem_GlobServer) error {
	return s.entries(req.Tree, stream, func(fsys vfs.FileSystem) iter.Seq2[vfs.DirEntry, error] {
		return fsys.Glob(stream.Context(), string(req.Pattern), string(req.Dir))
	})
}

func (s *server) Grep(req *pluginpb.GrepRequest, stream pluginpb.FileSystem_GrepServer) error {
	fsys, err := s.tree(req.Tree)
	if err != nil {
		return stream.Send(&pluginpb.GrepHits{Error: encodeError(err)})
	}
	q := vfs.GrepQuery{
		Pattern:         string(req.Pattern),
		Path:            string(req.Path),
		Glob:            string(req.Glob),
		CaseInsensitive: req.CaseInsensitive,
		MaxResults:      int(req.MaxResults),
	}
	size := func(h vfs.GrepResult) int { return len(h.Path) + len(h.Line) + 16 }
	return pump(fsys.Grep(stream.Context(), q), size, func(hs []vfs.GrepResult, e *pluginpb.Error) error {
		msg := &pluginpb.GrepHits{Hits: make([]*pluginpb.GrepHit, len(hs)), Error: e}
		for i, h := range hs {
			msg.Hits[i] = &pluginpb.GrepHit{Path: []byte(h.Path), LineNumber: int64(h.LineNumber), Line: []byte(h.Line)}
		}
		return stream.Send(msg)
	})
}

func (s *server) Search(req *pluginpb.SearchRequest, stream pluginpb.FileSystem_SearchServer) error {
	fsys, err := s.tree(req.Tree)
	if err != nil {
		return stream.Send(&pluginpb.SearchHits{Error: encodeError(err)})
	}
	q := vfs.SearchQuery{Query: string(req.Query), Path: string(req.Path), MaxResults: int(req.MaxResults)}
	size := func(h vfs.SearchResult) int { return len(h.Path) + len(h.Snippet) + 24 }
	return pump(fsys.Search(stream.Context(), q), size, func(hs []vfs.SearchResult, e *pluginpb.Error) error {
		msg := &pluginpb.SearchHits{Hits: make([]*pluginpb.SearchHit, len(hs)), Error: e}
		for i, h := range hs {
			msg.Hits[i] = &pluginpb.SearchHit{Path: []byte(h.Path), Score: h.Score, LineNumber: int64(h.LineNumber), Snippet: []byte(h.Snippet)}
		}
		return stream.Send(msg)
	})
}

func (s *server) Stat(ctx context.Context, req *pluginpb.PathRequest) (*pluginpb.StatReply, error) {
	fsys, err := s.tree(req.Tree)
	if err != nil {
		return &pluginpb.StatReply{Error: encodeError(err)}, nil
	}
	info, err := fsys.Stat(ctx, string(req.Path))
	if err != nil {
		return &pluginpb.StatReply{Error: encodeError(err)}, nil
	}
	r := &pluginpb.StatReply{Path: []byte(info.Path), Kind: uint32(info.Kind), Size: info.Size, Etag: []byte(info.ETag)}
	if !info.ModTime.IsZero() {
		r.HasModTime, r.ModTimeUnixNano = true, info.ModTime.UnixNano()
	}
	return r, nil
}

func (s *server) Read(req *pluginpb.ReadRequest, stream pluginpb.FileSystem_ReadServer) error {
	fsys, err := s.tree(req.Tree)
	if err != nil {
		return stream.Send(&pluginpb.Chunk{Error: encodeError(err)})
	}
	ctx, p := stream.Context(), string(req.Path)
	if l, ok := fsys.(ReadLimiter); ok {
		// The ways below read by range: a file the tree refuses to read
		// whole must get the tree's own answer.
		if info, err := fsys.Stat(ctx, p); err == nil && info.Size > l.MaxRead() {
			_, err := fsys.Read(ctx, p)
			if err == nil {
				err = fmt.Errorf("Read: %s is over the tree's read limit", p)
			}
			return stream.Send(&pluginpb.Chunk{Error: encodeError(err)})
		}
	}
	if _, no := s.noOSFile.Load(req.Tree); req.HostFile && hostFile && !no {
		done, osFile, err := sendFile(ctx, fsys, p, stream)
		if done {
			return err
		}
		if !osFile { // its readers are not host files: stop opening them for this
			s.noOSFile.Store(req.Tree, true)
		}
	}
	if req.ProcessMemory && processMemory {
		if done, err := sendMemory(ctx, fsys, p, stream); done {
			return err
		}
	}
	if req.SharedMemory {
		if done, err := sendShared(ctx, fsys, p, stream); done {
			return err
		}
	}
	restart := false
	if rr, ok := fsys.(vfs.RangeReader); ok {
		done, err := sendRanges(ctx, fsys, rr, p, stream)
		if done || err != nil {
			return err
		}
		restart = true
	}
	data, err := fsys.Read(ctx, p)
	if err != nil {
		return stream.Send(&pluginpb.Chunk{Error: encodeError(err), Restart: restart})
	}
	first := true
	for first || len(data) > 0 {
		n := min(len(data), chunkSize)
		c := &pluginpb.Chunk{Data: data[:n]}
		if first {
			c.Size, c.Restart, first = int64(len(data)), restart, false
		}
		if err := stream.Send(c); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// ReadLimiter is implemented by a tree whose Read refuses files larger
// than MaxRead bytes (a tree of compressed entries, which reads in ranges
// cheaply but would hold a whole large file in memory): a Read the host
// sends for a larger file gets the tree's own Read answer, never the
// server's ranged ways of reading it whole.
type ReadLimiter interface {
	MaxRead() int64
}

// sharedMin is the size from which a file goes through a memory file when
// the host can take one: below it, chunks cost less than the extra calls.
const sharedMin = 256 << 10

// OSFile is implemented by a vfs.FileReader that reads a file of the
// host's disk through an open descriptor. When a plugin's tree is a
// vfs.FileOpener whose readers implement it, a Read of 256 KiB or more
// (on Linux) hands the host the descriptor instead of the contents: the
// host opens it through /proc/PID/fd/N and reads the file itself, one
// copy as in process, and the plugin reads nothing. The reader must see
// one version of the file (as vfs.FileOpener says: a tree that replaces
// files by renaming a new one into place, as vfs/local does, gets this
// from the descriptor).
type OSFile interface {
	// File returns the open file. It stays the reader's: the plugin
	// closes the reader, not the file, when the host is done.
	File() *os.File
}

// sendFile opens the file at p through the tree's vfs.FileOpener and,
// when the reader is an [OSFile] on a regular file of at least sharedMin
// bytes, sends its descriptor and keeps it open until the host ends the
// call. done is false, with nothing sent, otherwise (the other ways then
// read the file, or report why it cannot be read); osFile is false when
// the tree has no FileOpener or its reader is not an OSFile.
func sendFile(ctx context.Context, fsys vfs.FileSystem, p string, stream pluginpb.FileSystem_ReadServer) (done, osFile bool, err error) {
	fo, ok := fsys.(vfs.FileOpener)
	if !ok {
		return false, false, nil
	}
	r, err := fo.OpenFile(ctx, p)
	if err != nil {
		return false, true, nil // a missing file, say: the next may be one
	}
	defer r.Close()
	of, ok := r.(OSFile)
	if !ok {
		return false, false, nil
	}
	if r.Size() < sharedMin {
		return false, true, nil
	}
	f := of.File()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false, true, nil
	}
	if err := stream.Send(&pluginpb.Chunk{Size: r.Size(), File: int64(f.Fd())}); err != nil {
		return true, true, err
	}
	t := time.NewTimer(10 * time.Minute)
	defer t.Stop()
	select {
	case <-ctx.Done(): // the host has read it and ended the call
	case <-t.C:
	}
	runtime.KeepAlive(f)
	return true, true, nil
}

// sendMemory reads the file into a buffer of the plugin and sends its
// address, for the host to copy with one process_vm_readv into the slice
// it returns: one copy in each process, no memory file, and with ReadAt
// the buffer comes from a pool, so a read allocates nothing here. The
// buffer stays as it is until the host ends the call. done is false, with
// nothing sent, as for sendShared.
func sendMemory(ctx context.Context, fsys vfs.FileSystem, p string, stream pluginpb.FileSystem_ReadServer) (done bool, err error) {
	info, err := fsys.Stat(ctx, p)
	if err != nil || info.Kind != vfs.KindFile || info.Size < sharedMin {
		return false, nil
	}
	data, pooled := fillMemory(ctx, fsys, p, info)
	if len(data) < sharedMin { // gone, shrank, or unreadable: chunks say so
		putBuffer(pooled)
		return false, nil
	}
	if err := stream.Send(&pluginpb.Chunk{Size: int64(len(data)), Addr: uint64(uintptr(unsafe.Pointer(&data[0])))}); err != nil {
		putBuffer(pooled)
		return true, err
	}
	t := time.NewTimer(10 * time.Minute)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	runtime.KeepAlive(data)
	// Only a call the host ended itself (after its copy) gives the buffer
	// back; after a deadline or a timeout the host may still be copying.
	if errors.Is(ctx.Err(), context.Canceled) {
		putBuffer(pooled)
	}
	return true, nil
}

// fillMemory reads the file at p: with ReadAt into a pooled buffer of
// exactly info.Size when the etag and size hold still meanwhile (pooled
// is then that buffer, to give back), else whole with Read. nil when the
// file cannot be read (the chunked path reports why).
func fillMemory(ctx context.Context, fsys vfs.FileSystem, p string, info vfs.FileInfo) (data []byte, pooled *[]byte) {
	if rr, ok := fsys.(vfs.RangeReader); ok && info.ETag != "" {
		pooled = getBuffer(info.Size)
		buf := (*pooled)[:info.Size]
		off := 0
		for off < len(buf) {
			n, err := rr.ReadAt(ctx, p, buf[off:], int64(off))
			off += n
			if err != nil || n == 0 {
				break
			}
		}
		if after, err := fsys.Stat(ctx, p); err == nil && off == len(buf) && after.ETag == info.ETag && after.Size == info.Size {
			return buf, pooled
		}
		putBuffer(pooled)
	}
	data, err := fsys.Read(ctx, p)
	if err != nil {
		return nil, nil
	}
	return data, nil
}

// buffers pools sendMemory's buffers by power-of-two capacity, from
// sharedMin to 1 GiB (larger files get a buffer of their own). A pool
// drops what it holds within two garbage collections.
var buffers [31]sync.Pool

func bufferClass(size int64) int { return bits.Len64(uint64(size - 1)) }

func getBuffer(size int64) *[]byte {
	c := bufferClass(size)
	if c >= len(buffers) {
		b := make([]byte, size)
		return &b
	}
	if b, ok := buffers[c].Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 1<<c)
	return &b
}

func putBuffer(b *[]byte) {
	if b == nil {
		return
	}
	if c := bufferClass(int64(cap(*b))); c < len(buffers) && cap(*b) == 1<<c {
		buffers[c].Put(b)
	}
}

// sendShared leaves the file in an anonymous memory file and sends its
// descriptor, which the host opens through /proc; the memory file stays
// open until the host ends the call. This skips gRPC, TLS and protobuf for
// the contents: two copies through memory instead of about four ms of CPU
// per MiB. done is false, with nothing sent, when the file is small, not
// a plain file, unreadable (the chunked path then reports the error), or
// memory files are not available.
func sendShared(ctx context.Context, fsys vfs.FileSystem, p string, stream pluginpb.FileSystem_ReadServer) (done bool, err error) {
	info, err := fsys.Stat(ctx, p)
	if err != nil || info.Kind != vfs.KindFile || info.Size < sharedMin {
		return false, nil
	}
	f, err := newSharedFile()
	if err != nil {
		return false, nil
	}
	defer f.Close()
	size, ok := fillShared(ctx, fsys, p, info, f)
	if !ok {
		return false, nil
	}
	if err := stream.Send(&pluginpb.Chunk{Size: size, Memfd: int64(f.Fd())}); err != nil {
		return true, err
	}
	select {
	case <-ctx.Done(): // the host has read it and ended the call
	case <-time.After(10 * time.Minute):
	}
	return true, nil
}

// fillShared writes the file at p into f: range by range when the tree
// has ReadAt and the etag holds still meanwhile, else read whole.
func fillShared(ctx context.Context, fsys vfs.FileSystem, p string, info vfs.FileInfo, f *os.File) (int64, bool) {
	if rr, ok := fsys.(vfs.RangeReader); ok && info.ETag != "" {
		buf := make([]byte, chunkSize)
		off := int64(0)
		for off < info.Size {
			n, err := rr.ReadAt(ctx, p, buf[:min(int64(chunkSize), info.Size-off)], off)
			if err != nil && err != io.EOF || n == 0 {
				break
			}
			if _, err := f.Write(buf[:n]); err != nil {
				return 0, false
			}
			off += int64(n)
		}
		if after, err := fsys.Stat(ctx, p); err == nil && off == info.Size && after.ETag == info.ETag && after.Size == info.Size {
			return off, true
		}
		if f.Truncate(0) != nil {
			return 0, false
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return 0, false
		}
	}
	data, err := fsys.Read(ctx, p)
	if err != nil {
		return 0, false
	}
	if _, err := f.Write(data); err != nil {
		return 0, false
	}
	return int64(len(data)), true
}

// sendRanges sends a file larger than one chunk range by range, so the
// plugin holds one chunk at a time and reading overlaps sending. done is
// false (and nothing but whole chunks sent) when the file is small, is
// not a plain file, or its etag changed while it was sent: the caller
// then sends it whole, with Restart set when chunks went out.
func sendRanges(ctx context.Context, fsys vfs.FileSystem, rr vfs.RangeReader, p string, stream pluginpb.FileSystem_ReadServer) (done bool, err error) {
	info, err := fsys.Stat(ctx, p)
	if err != nil || info.Kind != vfs.KindFile || info.Size <= chunkSize || info.ETag == "" {
		return false, nil
	}
	buf := make([]byte, chunkSize)
	for off := int64(0); off < info.Size; {
		n, err := rr.ReadAt(ctx, p, buf[:min(int64(chunkSize), info.Size-off)], off)
		if err != nil && err != io.EOF {
			return false, nil // the whole read reports it, or succeeds
		}
		if n == 0 {
			return false, nil // shrank
		}
		c := &pluginpb.Chunk{Data: buf[:n]}
		if off == 0 {
			c.Size = info.Size
		}
		if err := stream.Send(c); err != nil {
			return true, err
		}
		off += int64(n)
	}
	after, err := fsys.Stat(ctx, p)
	if err != nil || after.ETag != info.ETag || after.Size != info.Size {
		return false, nil
	}
	return true, nil
}

func (s *server) ReadAt(ctx context.Context, req *pluginpb.ReadAtRequest) (*pluginpb.ReadAtReply, error) {
	fsys, err := s.tree(req.Tree)
	if err != nil {
		return &pluginpb.ReadAtReply{Error: encodeError(err)}, nil
	}
	if req.Length < 0 || req.Length > 4*chunkSize {
		return &pluginpb.ReadAtReply{Error: encodeError(fmt.Errorf("ReadAt: length %d out of range", req.Length))}, nil
	}
	buf := make([]byte, req.Length)
	n, err := vfs.ReadAt(ctx, fsys, string(req.Path), buf, req.Offset)
	switch {
	case err == io.EOF:
		return &pluginpb.ReadAtReply{Data: buf[:n], Eof: true}, nil
	case err != nil:
		return &pluginpb.ReadAtReply{Data: buf[:n], Error: encodeError(err)}, nil
	}
	return &pluginpb.ReadAtReply{Data: buf[:n]}, nil
}

func (s *server) Write(stream pluginpb.FileSystem_WriteServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	fsys, err := s.tree(first.Tree)
	if err != nil {
		return stream.SendAndClose(&pluginpb.WriteReply{Error: encodeError(err)})
	}
	if first.Size < 0 || first.Size > 1<<40 {
		return stream.SendAndClose(&pluginpb.WriteReply{Error: encodeError(fmt.Errorf("Write: size %d out of range", first.Size))})
	}
	var data []byte
	if first.Memfd != 0 {
		if data, err = readShared(int(first.HostPid), first.Memfd, first.Size); err != nil {
			return stream.SendAndClose(&pluginpb.WriteReply{SharedUnavailable: true})
		}
	} else {
		data = make([]byte, 0, first.Size)
		data = append(data, first.Data...)
	}
	for {
		c, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		data = append(data, c.Data...)
	}
	ctx, p := stream.Context(), string(first.Path)
	if !first.Conditional {
		return stream.SendAndClose(&pluginpb.WriteReply{Error: encodeError(fsys.Write(ctx, p, data))})
	}
	etag, err := vfs.WriteIf(ctx, fsys, p, data, vfs.Precondition{IfMatch: string(first.IfMatch), IfNoneMatch: first.IfNoneMatch})
	return stream.SendAndClose(&pluginpb.WriteReply{Etag: []byte(etag), Error: encodeError(err)})
}

func (s *server) Delete(ctx context.Context, req *pluginpb.PathRequest) (*pluginpb.ErrorReply, error) {
	fsys, err := s.tree(req.Tree)
	if err != nil {
		return &pluginpb.ErrorReply{Error: encodeError(err)}, nil
	}
	return &pluginpb.ErrorReply{Error: encodeError(fsys.Delete(ctx, string(req.Path)))}, nil
}

func (s *server) MakeDir(ctx context.Context, req *pluginpb.PathRequest) (*pluginpb.ErrorReply, error) {
	fsys, err := s.tree(req.Tree)
	if err != nil {
		return &pluginpb.ErrorReply{Error: encodeError(err)}, nil
	}
	return &pluginpb.ErrorReply{Error: encodeError(vfs.MakeDir(ctx, fsys, string(req.Path)))}, nil
}

func (s *server) RemoveDir(ctx context.Context, req *pluginpb.PathRequest) (*pluginpb.ErrorReply, error) {
	fsys, err := s.tree(req.Tree)
	if err != nil {
		return &pluginpb.ErrorReply{Error: encodeError(err)}, nil
	}
	return &pluginpb.ErrorReply{Error: encodeError(vfs.RemoveDir(ctx, fsys, string(req.Path)))}, nil
}
