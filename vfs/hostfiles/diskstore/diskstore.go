// Package diskstore is the embedded default [hostfiles.Store]: files kept
// in a host directory, one sub-directory per scope, shared safely by every
// process that opens the same directory.
//
// # Layout
//
//	DIR/<scope>/<key>          the files, a key "/a/b" at DIR/<scope>/a/b
//	DIR/.julyfs/tmp/           contents being written
//	DIR/.julyfs/locks/<scope>  one lock file per scope (flock)
//
// Every access goes through an os.Root on DIR, so no key, scope or
// symbolic link reaches outside it.
//
// # Atomicity and CAS
//
// A put writes a temporary file, fsyncs it, renames it over the key and
// fsyncs the directory: a reader, or a crash (kill -9, power loss after
// the rename is durable), sees the old or the new contents, never a mix. A
// failed write (a full disk) removes the temporary file and keeps the old
// contents. Puts and deletes of one scope hold the scope's lock file with
// flock(2) around the check of the precondition and the rename, so a CAS
// holds across processes, not only goroutines. Reads take no lock.
//
// The etag is [vfs.ContentETag] of the contents. Stat computes it by
// hashing the file once as a stream (no buffer of its size) and caches it
// by (inode, size, mtime); every put makes a new inode, so the cache cannot
// serve a stale etag. Open (hostfiles.Opener, what grep reads through)
// hands out the open file itself, so a scan never holds a whole file.
//
// # Change feed
//
// Watch starts an inotify watcher (fsnotify) on the scope's directory tree
// while the scope has subscribers. For each event it compares the file's
// etag with the last one it knew and reports only real changes, which also
// drops the echo of this store's own writes (those are reported
// synchronously by Put and Delete). When the kernel's queue overflows it
// rescans the scope and reports every difference, so a burst loses no
// change. Where inotify is unavailable, refuses a directory, or cannot see
// the writers (Options.Poll, for NFS), the scope is rescanned every second
// instead.
package diskstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/hostfiles"
)

// Options configure a store.
type Options struct {
	// MaxFileSize refuses puts of more bytes with hostfiles.ErrTooLarge;
	// 0 means no limit.
	MaxFileSize int64
	// Poll watches for changes by rescanning the scope every second
	// instead of with inotify: for a directory on a network filesystem
	// (NFS), where inotify does not see other hosts' writes. Without it,
	// polling is used only where inotify is unavailable or refuses a
	// directory (the per-user watch limit).
	Poll bool
}

// Store is a directory of host files. It is safe for concurrent use by
// goroutines and by processes.
type Store struct {
	dir  string
	root *os.Root
	opts Options

	mu     sync.Mutex
	scopes map[hostfiles.Scope]*scope

	emu   sync.Mutex
	etags map[string]etagEntry // rel path -> etag of a known inode
}

type etagEntry struct {
	ino   uint64
	size  int64
	mtime int64
	etag  string
}

var (
	_ hostfiles.Store  = (*Store)(nil)
	_ hostfiles.Opener = (*Store)(nil)
)

// Open opens (creating when needed) the store in dir.
func Open(dir string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, &hostfiles.StoreError{Store: abs, Op: "open", Err: err}
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, &hostfiles.StoreError{Store: abs, Op: "open", Err: err}
	}
	s := &Store{dir: abs, root: root, opts: opts, scopes: map[hostfiles.Scope]*scope{}, etags: map[string]etagEntry{}}
	for _, d := range []string{".julyfs/tmp", ".julyfs/locks"} {
		if err := root.MkdirAll(d, 0o755); err != nil {
			root.Close()
			return nil, s.fail("open", err)
		}
	}
	s.sweepTemps()
	return s, nil
}

// sweepTemps removes temporary files a killed writer left behind, once
// they are an hour old (a live writer finishes long before).
func (s *Store) sweepTemps() {
	d, err := s.root.Open(".julyfs/tmp")
	if err != nil {
		return
	}
	defer d.Close()
	ents, _ := d.ReadDir(-1)
	for _, e := range ents {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
			s.root.Remove(".julyfs/tmp/" + e.Name())
		}
	}
}

// Name returns the store's directory.
func (s *Store) Name() string { return s.dir }

// Close stops every watcher and releases the directory.
func (s *Store) Close() error {
	s.mu.Lock()
	scopes := slices.Collect(mapValues(s.scopes))
	s.mu.Unlock()
	for _, sc := range scopes {
		sc.stopWatching()
	}
	return s.root.Close()
}

func mapValues[K comparable, V any](m map[K]V) iter.Seq[V] {
	return func(yield func(V) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

func (s *Store) fail(op string, err error) error {
	return &hostfiles.StoreError{Store: s.dir, Op: op, Err: err}
}

// rel returns the root-relative name of key in scope.
func rel(sc hostfiles.Scope, key string) string { return string(sc) + key }

func (s *Store) scope(sc hostfiles.Scope) (*scope, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.scopes[sc]
	if st == nil {
		st = &scope{store: s, name: sc}
		s.scopes[sc] = st
	}
	return st, nil
}

// lock takes the scope's in-process mutex and its lock file; the returned
// function releases both.
func (st *scope) lock() (func(), error) {
	st.mu.Lock()
	f, err := st.store.root.OpenFile(".julyfs/locks/"+string(st.name), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		st.mu.Unlock()
		return nil, st.store.fail("lock", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		st.mu.Unlock()
		return nil, st.store.fail("lock", err)
	}
	return func() {
		f.Close() // releases the flock
		st.mu.Unlock()
	}, nil
}

// fileState is what a key names on disk.
type fileState struct {
	exists bool // a regular file
	dir    bool // a directory with at least one file under it
	empty  bool // a directory without files (invisible to the tree)
	etag   string
	size   int64
	mtime  time.Time
}

// state reads what rel names. A missing path, or one below a file, is the
// zero state.
func (s *Store) state(r string) (fileState, error) {
	info, err := s.root.Lstat(r)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return fileState{}, nil
	case err != nil:
		return fileState{}, err
	case info.IsDir():
		has, err := s.hasFiles(r)
		if err != nil {
			return fileState{}, err
		}
		return fileState{dir: has, empty: !has}, nil
	case !info.Mode().IsRegular():
		return fileState{}, fmt.Errorf("%s is not a regular file", r)
	}
	etag, err := s.etagOf(r, info)
	if errors.Is(err, fs.ErrNotExist) {
		return fileState{}, nil
	}
	if err != nil {
		return fileState{}, err
	}
	return fileState{exists: true, etag: etag, size: info.Size(), mtime: info.ModTime()}, nil
}

// hasFiles reports whether the directory r holds a regular file at any
// depth.
func (s *Store) hasFiles(r string) (bool, error) {
	found := false
	err := fs.WalkDir(s.root.FS(), r, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return found, err
}

func inode(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// etagOf returns the etag of the regular file r described by info, from
// the cache when the inode is unchanged.
func (s *Store) etagOf(r string, info fs.FileInfo) (string, error) {
	if etag := s.cachedETag(r, info); etag != "" {
		return etag, nil
	}
	// Hash the file as a stream: a large file's etag costs no buffer of
	// its size.
	f, info, err := s.openFile(r)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	etag := hex.EncodeToString(h.Sum(nil)[:16]) // vfs.ContentETag, streamed
	s.rememberETag(r, info, etag)
	return etag, nil
}

func (s *Store) noteETag(r string, info fs.FileInfo, data []byte) string {
	etag := vfs.ContentETag(data)
	s.rememberETag(r, info, etag)
	return etag
}

func (s *Store) rememberETag(r string, info fs.FileInfo, etag string) {
	s.emu.Lock()
	if len(s.etags) > 1<<16 {
		clear(s.etags)
	}
	s.etags[r] = etagEntry{ino: inode(info), size: info.Size(), mtime: info.ModTime().UnixNano(), etag: etag}
	s.emu.Unlock()
}

// cachedETag returns the etag known for the inode info describes, or "".
func (s *Store) cachedETag(r string, info fs.FileInfo) string {
	s.emu.Lock()
	e, ok := s.etags[r]
	s.emu.Unlock()
	if ok && e.ino == inode(info) && e.size == info.Size() && e.mtime == info.ModTime().UnixNano() && e.ino != 0 {
		return e.etag
	}
	return ""
}

// openFile opens the regular file r (never through a symbolic link) and
// returns it with its stat, so contents and inode agree. Anything but a
// regular file is fs.ErrNotExist.
func (s *Store) openFile(r string) (*os.File, fs.FileInfo, error) {
	f, err := s.root.OpenFile(r, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, nil, fs.ErrNotExist
	}
	return f, info, nil
}

// readFile reads the regular file r whole, with the stat of the opened
// file (so contents and inode agree).
func (s *Store) readFile(r string) ([]byte, fs.FileInfo, error) {
	f, info, err := s.openFile(r)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	buf.Grow(int(info.Size()) + 1)
	if _, err := io.Copy(&buf, f); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), info, nil
}

func notFound(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EISDIR)
}

// Get returns the file at key.
func (s *Store) Get(ctx context.Context, sc hostfiles.Scope, key string) ([]byte, hostfiles.Meta, error) {
	if err := checkArgs(ctx, sc, key); err != nil {
		return nil, hostfiles.Meta{}, err
	}
	r := rel(sc, key)
	data, info, err := s.readFile(r)
	switch {
	case notFound(err):
		return nil, hostfiles.Meta{}, hostfiles.ErrNotFound
	case err != nil:
		return nil, hostfiles.Meta{}, s.fail("get "+hostfiles.Printable(key), err)
	}
	etag := s.noteETag(r, info, data)
	return data, hostfiles.Meta{Key: key, Size: int64(len(data)), ETag: etag, ModTime: info.ModTime()}, nil
}

// Open returns the file at key as a stream: the open file itself, whose
// contents a later put (a rename of a new inode over the name) does not
// change. Meta.ETag is set when the store has already computed it for
// this inode, else empty.
func (s *Store) Open(ctx context.Context, sc hostfiles.Scope, key string) (io.ReadCloser, hostfiles.Meta, error) {
	if err := checkArgs(ctx, sc, key); err != nil {
		return nil, hostfiles.Meta{}, err
	}
	r := rel(sc, key)
	f, info, err := s.openFile(r)
	switch {
	case notFound(err):
		return nil, hostfiles.Meta{}, hostfiles.ErrNotFound
	case err != nil:
		return nil, hostfiles.Meta{}, s.fail("open "+hostfiles.Printable(key), err)
	}
	return f, hostfiles.Meta{Key: key, Size: info.Size(), ETag: s.cachedETag(r, info), ModTime: info.ModTime()}, nil
}

func checkArgs(ctx context.Context, sc hostfiles.Scope, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := sc.Validate(); err != nil {
		return err
	}
	return hostfiles.ValidKey(key)
}

// Stat returns the metadata of the file at key.
func (s *Store) Stat(ctx context.Context, sc hostfiles.Scope, key string) (hostfiles.Meta, error) {
	if err := checkArgs(ctx, sc, key); err != nil {
		return hostfiles.Meta{}, err
	}
	r := rel(sc, key)
	info, err := s.root.Lstat(r)
	switch {
	case notFound(err):
		return hostfiles.Meta{}, hostfiles.ErrNotFound
	case err != nil:
		return hostfiles.Meta{}, s.fail("stat "+hostfiles.Printable(key), err)
	case !info.Mode().IsRegular():
		return hostfiles.Meta{}, hostfiles.ErrNotFound
	}
	etag, err := s.etagOf(r, info)
	switch {
	case notFound(err):
		return hostfiles.Meta{}, hostfiles.ErrNotFound
	case err != nil:
		return hostfiles.Meta{}, s.fail("stat "+hostfiles.Printable(key), err)
	}
	return hostfiles.Meta{Key: key, Size: info.Size(), ETag: etag, ModTime: info.ModTime()}, nil
}

// Put writes the file at key when cond holds.
func (s *Store) Put(ctx context.Context, sc hostfiles.Scope, key string, data []byte, cond vfs.Precondition) (hostfiles.Meta, error) {
	if err := checkArgs(ctx, sc, key); err != nil {
		return hostfiles.Meta{}, err
	}
	if s.opts.MaxFileSize > 0 && int64(len(data)) > s.opts.MaxFileSize {
		return hostfiles.Meta{}, fmt.Errorf("%w: %d bytes, over the limit of %d bytes of store %s", hostfiles.ErrTooLarge, len(data), s.opts.MaxFileSize, s.dir)
	}
	st, err := s.scope(sc)
	if err != nil {
		return hostfiles.Meta{}, err
	}
	m, err := st.put(key, data, cond)
	if err != nil {
		return hostfiles.Meta{}, err
	}
	st.publish(hostfiles.Event{Key: key, ETag: m.ETag})
	return m, nil
}

func (st *scope) put(key string, data []byte, cond vfs.Precondition) (hostfiles.Meta, error) {
	s := st.store
	unlock, err := st.lock()
	if err != nil {
		return hostfiles.Meta{}, err
	}
	defer unlock()
	r := rel(st.name, key)
	for _, a := range hostfiles.Ancestors(key) {
		if info, err := s.root.Lstat(rel(st.name, a)); err == nil && !info.IsDir() {
			return hostfiles.Meta{}, hostfiles.ErrNotDir
		} else if err != nil {
			break
		}
	}
	cur, err := s.state(r)
	switch {
	case err != nil:
		return hostfiles.Meta{}, s.fail("put "+hostfiles.Printable(key), err)
	case cur.dir:
		return hostfiles.Meta{}, hostfiles.ErrIsDir
	}
	if err := hostfiles.CheckCond(key, cond, cur.exists, cur.etag); err != nil {
		return hostfiles.Meta{}, err
	}
	parent := filepath.Dir(r)
	if err := s.root.MkdirAll(parent, 0o755); err != nil {
		if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EEXIST) {
			return hostfiles.Meta{}, hostfiles.ErrNotDir
		}
		return hostfiles.Meta{}, s.fail("put "+hostfiles.Printable(key), err)
	}
	tmp, err := s.writeTemp(data)
	if err != nil {
		return hostfiles.Meta{}, s.fail("put "+hostfiles.Printable(key), err)
	}
	if cur.empty {
		s.root.RemoveAll(r) // an empty directory tree: nothing visible lost
	}
	if err := s.root.Rename(tmp, r); err != nil {
		s.root.Remove(tmp)
		return hostfiles.Meta{}, s.fail("put "+hostfiles.Printable(key), err)
	}
	if err := s.syncDir(parent); err != nil {
		return hostfiles.Meta{}, s.fail("put "+hostfiles.Printable(key), err)
	}
	info, err := s.root.Lstat(r)
	if err != nil {
		return hostfiles.Meta{}, s.fail("put "+hostfiles.Printable(key), err)
	}
	etag := s.noteETag(r, info, data)
	st.noteKnown(key, etag)
	return hostfiles.Meta{Key: key, Size: int64(len(data)), ETag: etag, ModTime: info.ModTime()}, nil
}

// writeTemp writes data to a new file under .julyfs/tmp and fsyncs it; on
// failure nothing is left behind.
func (s *Store) writeTemp(data []byte) (string, error) {
	var rnd [12]byte
	rand.Read(rnd[:])
	name := ".julyfs/tmp/" + hex.EncodeToString(rnd[:])
	f, err := s.root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.root.Remove(name)
		return "", err
	}
	return name, nil
}

func (s *Store) syncDir(r string) error {
	d, err := s.root.Open(r)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Delete removes the file at key when cond holds.
func (s *Store) Delete(ctx context.Context, sc hostfiles.Scope, key string, cond vfs.Precondition) error {
	if err := checkArgs(ctx, sc, key); err != nil {
		return err
	}
	st, err := s.scope(sc)
	if err != nil {
		return err
	}
	if err := st.delete(key, cond); err != nil {
		return err
	}
	st.publish(hostfiles.Event{Key: key, Deleted: true})
	return nil
}

func (st *scope) delete(key string, cond vfs.Precondition) error {
	s := st.store
	unlock, err := st.lock()
	if err != nil {
		return err
	}
	defer unlock()
	r := rel(st.name, key)
	cur, err := s.state(r)
	switch {
	case err != nil:
		return s.fail("delete "+hostfiles.Printable(key), err)
	case cur.dir:
		return hostfiles.ErrIsDir
	case !cur.exists:
		return hostfiles.ErrNotFound
	}
	if err := hostfiles.CheckCond(key, vfs.Precondition{IfMatch: cond.IfMatch}, true, cur.etag); err != nil {
		return err
	}
	if err := s.root.Remove(r); err != nil {
		return s.fail("delete "+hostfiles.Printable(key), err)
	}
	parent := filepath.Dir(r)
	if err := s.syncDir(parent); err != nil {
		return s.fail("delete "+hostfiles.Printable(key), err)
	}
	// Remove the directories the file leaves empty, up to the scope.
	for d := parent; d != string(st.name) && strings.Contains(d, "/"); d = filepath.Dir(d) {
		if s.root.Remove(d) != nil {
			break
		}
	}
	st.noteKnown(key, "")
	return nil
}

// List yields the files under prefix from start, in key order, walking
// one directory at a time. It leaves Meta.ETag empty: computing it would
// read every file.
func (s *Store) List(ctx context.Context, sc hostfiles.Scope, prefix, start string) iter.Seq2[hostfiles.Meta, error] {
	return func(yield func(hostfiles.Meta, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(hostfiles.Meta{}, err)
			return
		}
		if err := sc.Validate(); err != nil {
			yield(hostfiles.Meta{}, err)
			return
		}
		if !strings.HasPrefix(prefix, "/") {
			yield(hostfiles.Meta{}, fmt.Errorf("invalid prefix %q: want an absolute path prefix", prefix))
			return
		}
		dir := prefix[:strings.LastIndexByte(prefix, '/')+1] // "/a/" of "/a/b"
		w := walker{s: s, ctx: ctx, scope: sc, prefix: prefix, start: start, yield: yield}
		w.walk(strings.TrimSuffix(dir, "/"))
	}
}

type walker struct {
	s             *Store
	ctx           context.Context
	scope         hostfiles.Scope
	prefix, start string
	yield         func(hostfiles.Meta, error) bool
}

// overlaps reports whether keys under the directory key d can match.
func (w *walker) overlaps(d string) bool {
	lo, hi := hostfiles.DirRange(d)
	if w.start >= hi {
		return false
	}
	return strings.HasPrefix(lo, w.prefix) || strings.HasPrefix(w.prefix, lo)
}

// walk lists directory key d ("" is the scope root); false stops.
func (w *walker) walk(d string) bool {
	if err := w.ctx.Err(); err != nil {
		w.yield(hostfiles.Meta{}, err)
		return false
	}
	r := string(w.scope) + d
	f, err := w.s.root.Open(r)
	if notFound(err) {
		return true
	}
	if err != nil {
		w.yield(hostfiles.Meta{}, w.s.fail("list "+hostfiles.Printable(w.prefix), err))
		return false
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil && !notFound(err) {
		w.yield(hostfiles.Meta{}, w.s.fail("list "+hostfiles.Printable(w.prefix), err))
		return false
	}
	type item struct {
		sort string
		name string
		dir  bool
		ent  fs.DirEntry
	}
	items := make([]item, 0, len(ents))
	for _, e := range ents {
		switch {
		case e.IsDir():
			items = append(items, item{e.Name() + "/", e.Name(), true, e})
		case e.Type().IsRegular():
			items = append(items, item{e.Name(), e.Name(), false, e})
		}
	}
	slices.SortFunc(items, func(a, b item) int { return strings.Compare(a.sort, b.sort) })
	for _, it := range items {
		key := d + "/" + it.name
		if it.dir {
			if w.overlaps(key) && !w.walk(key) {
				return false
			}
			continue
		}
		if key < w.start || !strings.HasPrefix(key, w.prefix) {
			continue
		}
		info, err := it.ent.Info()
		if notFound(err) {
			continue // removed since the directory was read
		}
		if err != nil {
			w.yield(hostfiles.Meta{}, w.s.fail("list "+hostfiles.Printable(w.prefix), err))
			return false
		}
		if !w.yield(hostfiles.Meta{Key: key, Size: info.Size(), ModTime: info.ModTime()}, nil) {
			return false
		}
	}
	return true
}
