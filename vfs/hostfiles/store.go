package hostfiles

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/julyfs/julyfs/vfs"
)

// Store is durable storage for host files, shared by every process that
// opens the same directory or database. Keys are clean absolute vfs paths
// ("/notes/today.md"), namespaced by a [Scope]. A Store is safe for
// concurrent use; implementations live in sub-packages (diskstore,
// pgstore) and tests run them through [FS] and vfs/vfstest.
//
// Errors: a missing key is [ErrNotFound]; a failed precondition is a
// *[ConflictError]; a key that is a directory (some key is under it) is
// [ErrIsDir]; a key below another key is [ErrNotDir]; anything else is a
// *[StoreError] naming the store.
type Store interface {
	// Name identifies the store in messages: a directory, or a database
	// URL without its password. It never contains a secret.
	Name() string
	// Get returns the contents of the file at key and its metadata. The
	// slice belongs to the caller.
	Get(ctx context.Context, scope Scope, key string) ([]byte, Meta, error)
	// Stat returns the metadata of the file at key.
	Stat(ctx context.Context, scope Scope, key string) (Meta, error)
	// Put creates or replaces the file at key when cond holds (IfMatch:
	// the current etag equals it; IfNoneMatch: no file at key; neither:
	// unconditional) and returns its new metadata. A refused put writes
	// nothing and fails with a *ConflictError. A put is atomic: a reader,
	// or a crash, sees the old or the new contents, never a mix.
	Put(ctx context.Context, scope Scope, key string, data []byte, cond vfs.Precondition) (Meta, error)
	// Delete removes the file at key when cond.IfMatch is empty or equals
	// its etag.
	Delete(ctx context.Context, scope Scope, key string, cond vfs.Precondition) error
	// List yields the files whose key starts with prefix (a plain string
	// prefix) and is >= start, in byte order of the key. It streams: a
	// consumer that stops early stops the listing. An error is the last
	// element. A store may leave Meta.ETag empty here when computing it
	// costs a read of the file (the disk store does); Stat has it.
	List(ctx context.Context, scope Scope, prefix, start string) iter.Seq2[Meta, error]
	// Watch calls fn for each change to scope: synchronously, before Put
	// or Delete returns, for changes made through this Store value; and
	// asynchronously, as the store learns of them, for changes made by
	// other processes or Store values. fn must not block for long or call
	// back into the store's writes. cancel stops delivery; after it
	// returns fn is not called again.
	Watch(scope Scope, fn func(Event)) (cancel func())
	// Close releases the store's resources.
	Close() error
}

// Opener is the optional Store capability of reading a file as a stream.
// [FS.Grep] reads files through it, so a scan holds a piece of a file at a
// time, never the whole file; a store without it is read with Get. Both
// stores implement it.
type Opener interface {
	// Open returns a reader of the contents of the file at key, as they
	// were at one moment (a put after Open does not change what the reader
	// returns), and the file's metadata: Size is exact, ETag may be empty.
	// A missing key is ErrNotFound. The caller closes the reader; a reader
	// may hold a store resource (a database connection) until then.
	Open(ctx context.Context, scope Scope, key string) (io.ReadCloser, Meta, error)
}

// Meta describes one stored file.
type Meta struct {
	Key     string
	Size    int64
	ETag    string // vfs.ContentETag of the contents, in every store
	ModTime time.Time
}

// Event is one change reported by [Store.Watch].
type Event struct {
	Key     string
	Deleted bool   // the file was removed; otherwise created or replaced
	ETag    string // the new etag; "" for a delete
}

// Errors of a Store, matched with errors.Is.
var (
	// ErrNotFound: no file at the key.
	ErrNotFound = errors.New("no such file")
	// ErrIsDir: the key is a directory (some file is under it).
	ErrIsDir = errors.New("is a directory")
	// ErrNotDir: a parent of the key is a file.
	ErrNotDir = errors.New("a parent is a file")
	// ErrTooLarge: the contents are over the store's size limit.
	ErrTooLarge = errors.New("file too large")
)

// ConflictError is a refused conditional write or delete. It carries the
// etag the writer expected and the one the store has, so a caller can
// tell "someone else changed it" from "someone else created it".
type ConflictError struct {
	Key string
	// Want is the etag the writer required; "" with WantMissing means it
	// required that no file exist.
	Want        string
	WantMissing bool
	// Have is the current etag; "" when no file exists.
	Have string
}

// Error says what was expected and what was found.
func (e *ConflictError) Error() string {
	want := fmt.Sprintf("etag %q", e.Want)
	if e.WantMissing {
		want = "no file"
	}
	have := fmt.Sprintf("etag %q", e.Have)
	if e.Have == "" {
		have = "no file"
	}
	return fmt.Sprintf("changed by another writer: wanted %s, found %s", want, have)
}

// Is makes errors.Is(err, vfs.ErrConflict) hold for a bare ConflictError.
func (e *ConflictError) Is(target error) bool { return target == vfs.ErrConflict }

// StoreError is a failure of the store itself (a database that cannot be
// reached, a full disk), naming the store and the operation.
type StoreError struct {
	Store string // Store.Name()
	Op    string // "get", "put", "delete", "list", "open", ...
	Err   error
	// Unavailable marks a store that could not be reached; errors.Is(err,
	// vfs.ErrUnavailable) then holds.
	Unavailable bool
}

// Error renders "hostfiles store NAME: OP: CAUSE".
func (e *StoreError) Error() string {
	return "hostfiles store " + e.Store + ": " + e.Op + ": " + e.Err.Error()
}

// Unwrap returns the cause, and vfs.ErrUnavailable when the store could
// not be reached.
func (e *StoreError) Unwrap() []error {
	if e.Unavailable {
		return []error{e.Err, vfs.ErrUnavailable}
	}
	return []error{e.Err}
}

// Scope namespaces a store: "deployment" is shared by every session of a
// deployment, "session-ID" belongs to one session. Scopes are plain names;
// see [ParseScope].
type Scope string

// Deployment is the scope shared across sessions.
const Deployment Scope = "deployment"

// SessionScope returns the scope of the session with id.
func SessionScope(id string) (Scope, error) {
	if id == "" {
		return "", errors.New("scope session needs a session id")
	}
	s := Scope("session-" + id)
	return s, s.Validate()
}

// Validate reports whether s is a usable scope name: 1 to 200 bytes of
// valid UTF-8, no '/', no "..", no control characters, not starting with
// '.'. A scope becomes a directory name (diskstore) or a key column
// (pgstore), so nothing in it may climb or hide.
func (s Scope) Validate() error {
	str := string(s)
	bad := func(why string) error { return fmt.Errorf("invalid scope %q: %s", str, why) }
	switch {
	case str == "":
		return bad("empty")
	case len(str) > 200:
		return bad("longer than 200 bytes")
	case !utf8.ValidString(str):
		return bad("not UTF-8")
	case strings.ContainsRune(str, '/'), strings.ContainsRune(str, '\\'):
		return bad("contains a slash")
	case strings.Contains(str, ".."):
		return bad(`contains ".."`)
	case str[0] == '.':
		return bad("starts with '.'")
	}
	for _, r := range str {
		if r < 0x20 || r == 0x7f {
			return bad("contains a control character")
		}
	}
	return nil
}

// ValidKey reports whether key can be stored: a clean absolute path other
// than "/", valid UTF-8 without NUL (a database text column refuses
// both). The error says why not.
func ValidKey(key string) error {
	switch {
	case key == "/" || key == "" || key[0] != '/' || vfs.Clean(key) != key:
		return fmt.Errorf("invalid key %q: want a clean absolute file path", key)
	case !utf8.ValidString(key):
		return fmt.Errorf("invalid key %q: not UTF-8", key)
	case strings.IndexByte(key, 0) >= 0:
		return fmt.Errorf("invalid key %q: contains NUL", key)
	}
	return nil
}

// CheckCond reports whether a file with etag have (exists says whether
// there is one) satisfies cond, as a *ConflictError when it does not.
// Stores that check preconditions in Go share it.
func CheckCond(key string, cond vfs.Precondition, exists bool, have string) error {
	if !exists {
		have = ""
	}
	switch {
	case cond.IfNoneMatch && exists:
		return &ConflictError{Key: key, WantMissing: true, Have: have}
	case cond.IfMatch != "" && (!exists || have != cond.IfMatch):
		return &ConflictError{Key: key, Want: cond.IfMatch, Have: have}
	}
	return nil
}

// DirRange returns the key range [lo, hi) of everything strictly under the
// directory key dir: lo is dir+"/" and hi is dir+"0" ('0' is the byte after
// '/'). For the root, lo is "/" and hi is "0".
func DirRange(dir string) (lo, hi string) {
	if dir == "/" {
		return "/", "0"
	}
	return dir + "/", dir + "0"
}

// Ancestors returns the proper ancestors of key other than "/", nearest
// last: "/a/b/c" gives ["/a", "/a/b"].
func Ancestors(key string) []string {
	var out []string
	for i := 1; i < len(key); i++ {
		if key[i] == '/' {
			out = append(out, key[:i])
		}
	}
	return out
}

// Printable returns s as is, or quoted with Go escapes when it holds a
// control character or invalid UTF-8, for keys put into messages.
func Printable(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return strconv.Quote(s)
		}
	}
	return s
}
