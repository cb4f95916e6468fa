package cow

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/julyfs/julyfs/vfs"
)

// EntryType says what an [Entry] of the upper layer is.
type EntryType string

const (
	// TypeFile is a file whose contents are the blob Hash.
	TypeFile EntryType = "file"
	// TypeDir is a directory of the layer's own: made in the layer, or a
	// base directory whose mode or time the layer changed. Opaque says
	// the base's directory at the path, if any, is hidden with all it
	// holds.
	TypeDir EntryType = "dir"
	// TypeLink is a symbolic link to Target.
	TypeLink EntryType = "link"
	// TypeWhiteout hides the base's file, link or whole directory at the
	// path.
	TypeWhiteout EntryType = "whiteout"
)

// Entry is one path where the layer differs from its base: what a
// manifest (and a checkpoint) holds. Entries of a manifest are sorted by
// path; directories the layer passes through to the base (it holds
// something below them but leaves them as the base has them) are not
// entries.
type Entry struct {
	Path string    `json:"path"`
	Type EntryType `json:"type"`
	// Hash is the SHA-256 of a file's contents, in hex: the name of its
	// blob.
	Hash string `json:"hash,omitempty"`
	Size int64  `json:"size,omitempty"`
	// Mode is a file's or directory's POSIX permission bits
	// (vfs.ModeBits).
	Mode    uint32    `json:"mode,omitempty"`
	ModTime time.Time `json:"mtime,omitzero"`
	// Target is a link's target, as given.
	Target string `json:"target,omitempty"`
	// Opaque: a directory that hides the base's directory at its path.
	Opaque bool `json:"opaque,omitempty"`
	// BaseKind and BaseETag are what the base had at the path when the
	// layer first shadowed it ("file", "dir", "link", or "" for nothing,
	// and the file's etag): what a compare-and-swap apply checks the base
	// against.
	BaseKind string `json:"baseKind,omitempty"`
	BaseETag string `json:"baseETag,omitempty"`
	// BaseHash names the blob of the base file's contents then (files up
	// to MaxBaseCopy bytes): the base side of a three-way diff.
	BaseHash string `json:"baseHash,omitempty"`
}

// ETag is the etag the layer gives a file entry: vfs.ContentETag of its
// contents, the first 32 hex digits of its hash.
func (e Entry) ETag() string {
	if len(e.Hash) < 32 {
		return e.Hash
	}
	return e.Hash[:32]
}

// SameContent reports whether a and b describe the same path the same
// way, ignoring the origin fields (BaseKind, BaseETag, BaseHash) and,
// for directories, the time.
func SameContent(a, b Entry) bool {
	a.BaseKind, a.BaseETag, b.BaseKind, b.BaseETag = "", "", "", ""
	if a.Type == TypeDir && b.Type == TypeDir {
		a.ModTime, b.ModTime = time.Time{}, time.Time{}
	}
	return a.Path == b.Path && a.Type == b.Type && a.Hash == b.Hash && a.Size == b.Size &&
		a.Mode == b.Mode && a.ModTime.Equal(b.ModTime) && a.Target == b.Target && a.Opaque == b.Opaque
}

// SortEntries sorts entries by path.
func SortEntries(entries []Entry) {
	slices.SortFunc(entries, func(a, b Entry) int { return cmp.Compare(a.Path, b.Path) })
}

// validEntry reports what is wrong with e read from disk, or "".
func validEntry(e Entry) string {
	switch {
	case e.Path == "/" || vfs.Clean(e.Path) != e.Path:
		return "path " + e.Path + " is not a clean path below /"
	case e.Type == TypeFile && !validHash(e.Hash):
		return "file " + e.Path + " has no valid hash"
	case e.BaseHash != "" && !validHash(e.BaseHash):
		return "path " + e.Path + " has an invalid baseHash"
	case e.Type == TypeLink && e.Target == "":
		return "link " + e.Path + " has no target"
	case e.Type != TypeFile && e.Type != TypeDir && e.Type != TypeLink && e.Type != TypeWhiteout:
		return "path " + e.Path + " has unknown type " + string(e.Type)
	}
	return ""
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	return strings.Trim(h, "0123456789abcdef") == ""
}
