package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/plugins/sequential"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/grepscan"
)

// maxCachedDirs bounds the directory cache; past it the cache starts
// afresh (trees are immutable, so a miss only costs a decode).
const maxCachedDirs = 1 << 16

// gitFS is a read-only tree of a git repository at one commit, served
// straight from the object database: no checkout, no working-tree files.
// Directories are git tree objects, decoded once and cached by path;
// files are blobs, whose hash is their etag. Submodule entries are left
// out (their commits are not in this repository).
//
// go-git's object storage is not safe for concurrent use, so each object
// read borrows one of several handles on the repository (one per
// GOMAXPROCS; a seeded in-memory repository has one).
type gitFS struct {
	repo   *git.Repository
	commit plumbing.Hash
	when   time.Time

	// repos holds handles on the repository, each used by one goroutine
	// at a time: go-git's object storage is not safe for concurrent use,
	// but separate handles are independent, so Grep's parallel reads
	// inflate blobs on several cores.
	repos chan *git.Repository
	mu    sync.Mutex // guards n
	dirs  sync.Map   // clean dir path -> *dirNode
	n     int        // entries in dirs, under mu

	limits limits
	// blobs keeps the streams of recent ranged reads, positioned where
	// they ended (keyed by blob hash).
	blobs sequential.Files
}

// limits bound what one command may make the plugin do (parameters
// max-file-size and max-read).
type limits struct {
	// maxFile: a blob larger than this is refused to every read (a grep
	// passes over it).
	maxFile int64
	// maxRead: a whole Read of a larger blob is refused; ranged reads
	// (julyfs cat, a FUSE mount) stream it in pieces.
	maxRead int64
}

// Defaults of the limits.
const (
	defaultMaxFile = 4 << 30
	defaultMaxRead = 64 << 20
	// largeObject is the size from which go-git streams a packed blob
	// instead of inflating it into memory.
	largeObject = 1 << 20
)

var defaultLimits = limits{maxFile: defaultMaxFile, maxRead: defaultMaxRead}

// dirNode is a decoded tree object: its children sorted by path.
type dirNode struct {
	hash     plumbing.Hash
	children []child
}

type child struct {
	name string
	kind vfs.EntryKind
	hash plumbing.Hash
}

// openRepo opens the repository at dir (or above it) at rev: a branch,
// tag, commit hash or any revision go-git resolves (HEAD~2, v1.2.0^{}).
func openRepo(dir, rev string) (*gitFS, error) {
	if dir == "" {
		dir = "."
	}
	if rev == "" {
		rev = "HEAD"
	}
	opts := &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true}
	repo, err := git.PlainOpenWithOptions(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("repo=%s: %v", dir, err)
	}
	h, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return nil, fmt.Errorf("ref=%s: not found in %s (%v)", rev, dir, err)
	}
	// Read through handles that keep the pack files open: go-git's
	// default opens the pack file again for every object it reads
	// (three quarters of a Grep's time went to open(2)).
	st, ok := repo.Storer.(*filesystem.Storage)
	if !ok {
		return newGitFS(repo, *h)
	}
	var handles []*git.Repository
	for range max(1, runtime.GOMAXPROCS(0)) {
		s := filesystem.NewStorageWithOptions(st.Filesystem(), cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true, LargeObjectThreshold: largeObject})
		r, err := git.Open(s, nil)
		if err != nil {
			return nil, fmt.Errorf("repo=%s: %v", dir, err)
		}
		handles = append(handles, r)
	}
	return newGitFS(handles[0], *h, handles[1:]...)
}

// newGitFS serves repo at commit; more are further handles on the same
// repository for parallel reads.
func newGitFS(repo *git.Repository, commit plumbing.Hash, more ...*git.Repository) (*gitFS, error) {
	c, err := repo.CommitObject(commit)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %v", commit, err)
	}
	g := &gitFS{repo: repo, commit: commit, when: c.Committer.When, repos: make(chan *git.Repository, 1+len(more)), limits: defaultLimits}
	g.repos <- repo
	for _, r := range more {
		g.repos <- r
	}
	root, err := g.decode(c.TreeHash)
	if err != nil {
		return nil, err
	}
	g.dirs.Store("/", root)
	return g, nil
}

// seedRepo builds an in-memory repository with one commit holding exactly
// files and returns the tree at that commit (for julyfs conformance).
func seedRepo(files map[string][]byte) (*gitFS, error) {
	wt := memfs.New()
	repo, err := git.Init(memory.NewStorage(), wt)
	if err != nil {
		return nil, err
	}
	w, err := repo.Worktree()
	if err != nil {
		return nil, err
	}
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range files {
			if !yield(p) {
				return
			}
		}
	}) {
		f, err := wt.Create(strings.TrimPrefix(vfs.Clean(p), "/"))
		if err != nil {
			return nil, err
		}
		if _, err := f.Write(files[p]); err != nil {
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
	}
	if err := w.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		return nil, err
	}
	sig := &object.Signature{Name: "julyfs", Email: "julyfs@localhost", When: time.Unix(1700000000, 0)}
	h, err := w.Commit("seed", &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	if err != nil {
		return nil, err
	}
	return newGitFS(repo, h)
}

// decode reads tree object h into a dirNode.
func (g *gitFS) decode(h plumbing.Hash) (*dirNode, error) {
	repo := <-g.repos
	t, err := repo.TreeObject(h)
	g.repos <- repo
	if err != nil {
		return nil, fmt.Errorf("tree %s: %v", h, err)
	}
	d := &dirNode{hash: h, children: make([]child, 0, len(t.Entries))}
	for _, e := range t.Entries {
		switch e.Mode {
		case filemode.Dir:
			d.children = append(d.children, child{e.Name, vfs.KindDir, e.Hash})
		case filemode.Submodule:
		default:
			d.children = append(d.children, child{e.Name, vfs.KindFile, e.Hash})
		}
	}
	// git orders a directory "b" as "b/", after "b-c"; paths order "/b"
	// before "/b-c".
	slices.SortFunc(d.children, func(a, b child) int { return strings.Compare(a.name, b.name) })
	return d, nil
}

// dir returns the directory at clean path p, nil when p is not one.
func (g *gitFS) dir(p string) (*dirNode, error) {
	if d, ok := g.dirs.Load(p); ok {
		return d.(*dirNode), nil
	}
	parent, err := g.dir(vfs.Parent(p))
	if parent == nil || err != nil {
		return nil, err
	}
	c, ok := parent.find(vfs.Base(p))
	if !ok || c.kind != vfs.KindDir {
		return nil, nil
	}
	d, err := g.decode(c.hash)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	if g.n++; g.n > maxCachedDirs {
		g.dirs.Range(func(k, _ any) bool {
			if k != "/" {
				g.dirs.Delete(k)
			}
			return true
		})
		g.n = 0
	}
	g.mu.Unlock()
	g.dirs.Store(p, d)
	return d, nil
}

func (d *dirNode) find(name string) (child, bool) {
	i, ok := slices.BinarySearchFunc(d.children, name, func(c child, n string) int { return strings.Compare(c.name, n) })
	if !ok {
		return child{}, false
	}
	return d.children[i], true
}

// entry returns what clean path p names; ok is false when nothing.
func (g *gitFS) entry(p string) (child, bool, error) {
	if p == "/" {
		d, err := g.dir("/")
		if err != nil {
			return child{}, false, err
		}
		return child{kind: vfs.KindDir, hash: d.hash}, true, nil
	}
	parent, err := g.dir(vfs.Parent(p))
	if parent == nil || err != nil {
		return child{}, false, err
	}
	c, ok := parent.find(vfs.Base(p))
	return c, ok, nil
}

func (g *gitFS) List(ctx context.Context, prefix string) iter.Seq2[vfs.DirEntry, error] {
	return func(yield func(vfs.DirEntry, error) bool) {
		p := vfs.Clean(prefix)
		d, err := g.dir(p)
		if err != nil {
			yield(vfs.DirEntry{}, err)
			return
		}
		if d == nil {
			return
		}
		for _, c := range d.children {
			if err := ctx.Err(); err != nil {
				yield(vfs.DirEntry{}, err)
				return
			}
			if !yield(vfs.DirEntry{Path: vfs.Join(p, c.name), Kind: c.kind}, nil) {
				return
			}
		}
	}
}

func (g *gitFS) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return vfs.FileInfo{}, err
	}
	c, ok, err := g.entry(p)
	switch {
	case err != nil:
		return vfs.FileInfo{}, err
	case !ok:
		return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}, nil
	case c.kind == vfs.KindDir:
		return vfs.FileInfo{Path: p, Kind: vfs.KindDir, ModTime: g.when, ETag: c.hash.String()}, nil
	}
	repo := <-g.repos
	size, err := repo.Storer.EncodedObjectSize(c.hash)
	g.repos <- repo
	if err != nil {
		return vfs.FileInfo{}, vfs.NewError(vfs.KindOther, p, err)
	}
	return vfs.FileInfo{Path: p, Kind: vfs.KindFile, Size: size, ModTime: g.when, ETag: c.hash.String()}, nil
}

func (g *gitFS) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	return vfs.Glob(ctx, g, pattern, dir)
}

// blob returns the file at clean p: its hash and size, checked against
// the limits (what a read of it may cost).
func (g *gitFS) blob(ctx context.Context, p string) (plumbing.Hash, int64, error) {
	if err := ctx.Err(); err != nil {
		return plumbing.ZeroHash, 0, err
	}
	c, ok, err := g.entry(p)
	switch {
	case err != nil:
		return plumbing.ZeroHash, 0, err
	case !ok:
		return plumbing.ZeroHash, 0, vfs.NotFound(p)
	case c.kind == vfs.KindDir:
		return plumbing.ZeroHash, 0, vfs.IsDir(p)
	}
	repo := <-g.repos
	size, err := repo.Storer.EncodedObjectSize(c.hash)
	g.repos <- repo
	if err != nil {
		return plumbing.ZeroHash, 0, vfs.NewError(vfs.KindOther, p, err)
	}
	if size > g.limits.maxFile {
		return plumbing.ZeroHash, 0, vfs.NewError(vfs.KindOther, p, fmt.Errorf("the blob is %d bytes, over this mount's max-file-size=%d (raise it with ?max-file-size=BYTES)", size, g.limits.maxFile))
	}
	return c.hash, size, nil
}

// open returns a stream of blob h: go-git streams a packed blob of
// largeObject bytes or more from the pack file, and a loose one from its
// file; the repository handle is needed only to find it.
func (g *gitFS) open(p string, h plumbing.Hash, size int64) sequential.Opener {
	return func(ctx context.Context) (io.ReadCloser, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		repo := <-g.repos
		defer func() { g.repos <- repo }()
		b, err := repo.BlobObject(h)
		if err != nil {
			return nil, vfs.NewError(vfs.KindOther, p, err)
		}
		r, err := b.Reader()
		if err != nil {
			return nil, vfs.NewError(vfs.KindOther, p, err)
		}
		return r, nil
	}
}

func (g *gitFS) Read(ctx context.Context, path string) ([]byte, error) {
	p := vfs.Clean(path)
	h, size, err := g.blob(ctx, p)
	if err != nil {
		return nil, err
	}
	if size > g.limits.maxRead {
		return nil, vfs.NewError(vfs.KindOther, p, fmt.Errorf("the blob is %d bytes, over this mount's max-read=%d for a whole read (read it in ranges, as julyfs cat does, or raise it with ?max-read=BYTES)", size, g.limits.maxRead))
	}
	r, err := g.open(p, h, size)(ctx)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	buf := make([]byte, size)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, vfs.NewError(vfs.KindOther, p, err)
	}
	return buf, nil
}

// MaxRead is the size over which a whole Read is refused
// (plugins.ReadLimiter).
func (g *gitFS) MaxRead() int64 { return g.limits.maxRead }

// ReadAt reads a range of a blob, continuing the stream of the last read
// when it ended where this one starts (vfs.RangeReader).
func (g *gitFS) ReadAt(ctx context.Context, path string, buf []byte, off int64) (int, error) {
	p := vfs.Clean(path)
	if off < 0 {
		return 0, vfs.NewError(vfs.KindOther, p, errors.New("negative offset"))
	}
	h, size, err := g.blob(ctx, p)
	if err != nil {
		return 0, err
	}
	n, err := g.blobs.ReadAt(ctx, h.String(), size, g.open(p, h, size), buf, off)
	if err != nil && err != io.EOF {
		err = vfs.NewError(vfs.KindOther, p, err)
	}
	return n, err
}

// OpenFile opens a blob for ranged reads (vfs.FileOpener).
func (g *gitFS) OpenFile(ctx context.Context, path string) (vfs.FileReader, error) {
	p := vfs.Clean(path)
	h, size, err := g.blob(ctx, p)
	if err != nil {
		return nil, err
	}
	return g.blobs.Open(ctx, h.String(), size, g.open(p, h, size)), nil
}

// Grep is the grep engine over the tree's List, streaming each blob (it
// skips binary blobs, a NUL byte, as grep does, and blobs over
// max-file-size).
func (g *gitFS) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	file := func(p string) grepscan.File {
		return grepscan.File{Path: p, Open: func(ctx context.Context) (io.ReadCloser, int64, error) {
			h, size, err := g.blob(ctx, p)
			if err != nil {
				if ctx.Err() == nil && vfs.KindOf(err) != vfs.KindNotFound {
					// Passed over, as a binary file is, but said.
					plugins.Logger().Warn("grep passes over a file", "path", p, "reason", err.Error())
				}
				if ctx.Err() == nil {
					err = fmt.Errorf("%w: %v", grepscan.SkipFile, err)
				}
				return nil, 0, err
			}
			r, err := g.open(p, h, size)(ctx)
			return r, size, err
		}}
	}
	return vfs.GrepTree(ctx, q, vfs.GrepSource{
		Stat: g.Stat,
		File: file,
		Dir:  vfs.WalkGrepFiles(g.List, file),
	})
}

func (g *gitFS) Write(_ context.Context, path string, _ []byte) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

func (g *gitFS) Delete(_ context.Context, path string) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

func (g *gitFS) Search(context.Context, vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return vfs.Empty[vfs.SearchResult]()
}

var (
	_ vfs.FileSystem  = (*gitFS)(nil)
	_ vfs.RangeReader = (*gitFS)(nil)
	_ vfs.FileOpener  = (*gitFS)(nil)
)
