package vfs

import (
	"context"
	"io/fs"
	"iter"
	"time"
)

// FileSystem is the contract every julyfs tree implements. All paths are
// absolute posix paths; implementations normalize them with [Clean] first.
// Returned byte slices belong to the caller.
type FileSystem interface {
	// List yields the immediate children of the directory at prefix, sorted
	// by path and unique. Listing a file or a missing path yields nothing.
	List(ctx context.Context, prefix string) iter.Seq2[DirEntry, error]
	// Stat describes path. A missing path is a FileInfo of KindMissing and
	// a nil error.
	Stat(ctx context.Context, path string) (FileInfo, error)
	// Glob yields the files and directories under dir whose path relative
	// to dir matches pattern (see [CompilePattern]), sorted by path.
	Glob(ctx context.Context, pattern, dir string) iter.Seq2[DirEntry, error]
	// Read returns the whole contents of the file at path.
	Read(ctx context.Context, path string) ([]byte, error)
	// Grep yields the lines matching q, sorted by path then line number.
	Grep(ctx context.Context, q GrepQuery) iter.Seq2[GrepResult, error]
	// Write creates or replaces the file at path with data.
	Write(ctx context.Context, path string, data []byte) error
	// Delete removes the file at path.
	Delete(ctx context.Context, path string) error
	// Search yields ranked results for q, by score descending then path
	// ascending. A tree without an index yields nothing.
	Search(ctx context.Context, q SearchQuery) iter.Seq2[SearchResult, error]
}

// EntryKind says what a path names.
type EntryKind uint8

const (
	// KindMissing is a path that names nothing (Stat only).
	KindMissing EntryKind = iota
	// KindFile is a regular file.
	KindFile
	// KindDir is a directory. Directories exist when something is under
	// them (or the backend has a real directory there).
	KindDir
)

// String returns "missing", "file" or "directory".
func (k EntryKind) String() string {
	switch k {
	case KindFile:
		return "file"
	case KindDir:
		return "directory"
	default:
		return "missing"
	}
}

// DirEntry is one path yielded by List or Glob.
type DirEntry struct {
	Path string
	Kind EntryKind
	// Link says the entry is a symbolic link, in a tree that has them
	// (vfs.Symlinker). List yields every link of a directory, as ls
	// does: Kind is what the link leads to inside the tree (as Stat
	// says), KindMissing for one that dangles or leaves the root. Walks
	// (Walk, Glob, Grep) never descend into a link and yield only links
	// to files (see SkipInWalk).
	Link bool
}

// SkipInWalk reports whether a walk leaves e out: a link to anything but
// a file inside the tree (a directory, nothing, outside the root). A walk
// never descends into a link, so it never loops and never sees a subtree
// twice, as native LS, Glob and Grep do not follow directory links.
func (e DirEntry) SkipInWalk() bool { return e.Link && e.Kind != KindFile }

// FileInfo is what Stat answers.
type FileInfo struct {
	Path    string
	Kind    EntryKind
	Size    int64     // bytes, for files
	ModTime time.Time // zero when the backend has none
	ETag    string    // opaque; a content hash where the backend has none

	// Mode holds the permission bits (with setuid, setgid and sticky) and
	// UID and GID the owner of a host file or directory, where the backend
	// has them (HasMode); a FUSE mount shows them and lets the kernel
	// check access against them. Zero otherwise.
	Mode    fs.FileMode
	UID     uint32
	GID     uint32
	HasMode bool

	// Link says the path itself is a symbolic link, in a tree that has
	// them (vfs.Symlinker). Stat still follows it inside the tree: Kind
	// and the rest describe its target, KindMissing when it dangles or
	// leaves the root (a caller that ignores Link sees what it saw
	// before). Read the target with Readlink. List yields every link
	// with DirEntry.Link set; the walks (Walk, Glob, Grep) never descend
	// into one and leave out all but links to files.
	Link bool
	// LinkModTime is the link's own modification time (lstat's, which
	// lutimes and vfs.LinkTimeSetter set) when Link is set, and
	// LinkChangeTime its own change time; zero when the tree has none.
	LinkModTime    time.Time
	LinkChangeTime time.Time
	// Nlink is the number of names of the file (hard links, vfs.Linker)
	// and ChangeTime its status change time (ctime: chmod, chown, link,
	// rename and writes move it), where the tree has them (a host
	// directory); 0 and zero otherwise.
	Nlink      uint32
	ChangeTime time.Time

	// Special is the type of a special file at the path, in a tree that
	// keeps them (vfs.NodeMaker: a host directory): fs.ModeNamedPipe,
	// fs.ModeSocket, fs.ModeDevice (a block device) or
	// fs.ModeDevice|fs.ModeCharDevice, with Rdev its device number. Kind
	// is then KindMissing, as for every verb of the contract such a file
	// is not there (a caller that ignores Special sees what it saw
	// before); Mode, UID, GID, ModTime, Nlink and ChangeTime describe it.
	Special fs.FileMode
	Rdev    uint64

	// LinkUID and LinkGID are the link's own owner and group (lstat's,
	// which lchown and vfs.LinkOwnerSetter set) when Link and
	// LinkHasOwner are set, in a tree whose links have owners.
	LinkUID      uint32
	LinkGID      uint32
	LinkHasOwner bool

	// Dev and Ino are the host's device and inode number of what the
	// path describes (a link's target when Link is set; LinkDev and
	// LinkIno are then the link's own), in a tree of host files
	// (vfs/local); zero elsewhere. Two names of one host file (hard
	// links, vfs.Linker) have the same numbers and a rename keeps them,
	// so a FUSE mount shows them as the inode number.
	Dev, Ino         uint64
	LinkDev, LinkIno uint64
}

// GrepQuery is the argument of Grep.
type GrepQuery struct {
	// Pattern is a Go RE2 regular expression matched against each line.
	Pattern string
	// Path scopes the search to a file or a directory; "" is the root.
	Path string
	// Glob filters files: a slash-free pattern matches the basename at any
	// depth, a pattern with a slash is relative to Path.
	Glob string
	// CaseInsensitive matches without regard to case.
	CaseInsensitive bool
	// MaxResults stops the stream after that many hits; 0 means no limit.
	MaxResults int
	// MaxLineBytes, when positive, bounds a hit's Line: a longer matching
	// line is cut to at most that many bytes (never inside a valid UTF-8
	// sequence) and GrepResult.LineBytes tells its whole length. Trees that
	// stream their files (local) then hold no more of any line than a
	// window of the scan, however long the line; matching is exact either
	// way (see the package doc, "Grep and long lines"). 0 means whole
	// lines. A tree may ignore it and return whole lines.
	MaxLineBytes int

	// compiled is Pattern compiled by [CompileGrepQuery], which a
	// composer hands down to its children with the query; nil until then.
	compiled *compiledGrep
}

// GrepResult is one matching line.
type GrepResult struct {
	Path       string
	LineNumber int    // 1-based
	Line       string // without the line terminator
	// LineBytes is the length in bytes of the whole line (without its
	// terminator) when Line was cut to GrepQuery.MaxLineBytes; 0 when Line
	// is the whole line.
	LineBytes int
}

// SearchQuery is the argument of Search.
type SearchQuery struct {
	// Query is free text.
	Query string
	// Path scopes the search to a path prefix; "" is the root.
	Path string
	// MaxResults stops the stream after that many results; 0 means no limit.
	MaxResults int
}

// SearchResult is one ranked hit.
type SearchResult struct {
	Path       string
	Score      float64
	LineNumber int    // line of the best hit, 0 when unknown
	Snippet    string // short excerpt around the best hit
}

// CompareSearchResults orders results by score descending, then path
// ascending: the order of every Search stream.
func CompareSearchResults(a, b SearchResult) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	}
	return compareStrings(a.Path, b.Path)
}

// CompareGrepResults orders results by path, then line number.
func CompareGrepResults(a, b GrepResult) int {
	if c := compareStrings(a.Path, b.Path); c != 0 {
		return c
	}
	return a.LineNumber - b.LineNumber
}

// CompareDirEntries orders entries by path.
func CompareDirEntries(a, b DirEntry) int { return compareStrings(a.Path, b.Path) }

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
