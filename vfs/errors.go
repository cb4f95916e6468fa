package vfs

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrorKind classifies a PathError. Its numeric values are stable so a kind
// can cross a process boundary; so can its String form ([ParseErrorKind]).
type ErrorKind uint8

const (
	// KindOther is an error with no contract kind; its message is Detail.
	KindOther ErrorKind = iota
	// KindNotFound: read or delete of a missing file.
	KindNotFound
	// KindWriteFailed: a write (or the write-back of an edit) failed.
	KindWriteFailed
	// KindReadOnly: a write or delete on a read-only tree.
	KindReadOnly
	// KindNoMount: a union has no mount for the path.
	KindNoMount
	// KindInvalidGrepPattern: a grep pattern that does not compile.
	KindInvalidGrepPattern
	// KindEdit: a StrReplace precondition failed; the message is Detail.
	KindEdit
	// KindDeleteNotSupported: the tree cannot delete.
	KindDeleteNotSupported
	// KindInvalidGlobPattern: a glob pattern that does not compile.
	KindInvalidGlobPattern
	// KindIsDir: read or delete of a directory.
	KindIsDir
	// KindConflict: a conditional write whose precondition failed.
	KindConflict
	// KindUnavailable: the backend could not be reached.
	KindUnavailable
)

var kindNames = [...]string{
	KindOther:              "other",
	KindNotFound:           "not_found",
	KindWriteFailed:        "write_failed",
	KindReadOnly:           "read_only",
	KindNoMount:            "no_mount",
	KindInvalidGrepPattern: "invalid_grep_pattern",
	KindEdit:               "edit",
	KindDeleteNotSupported: "delete_not_supported",
	KindInvalidGlobPattern: "invalid_glob_pattern",
	KindIsDir:              "is_dir",
	KindConflict:           "conflict",
	KindUnavailable:        "unavailable",
}

// String returns a stable snake_case name for k.
func (k ErrorKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParseErrorKind is the inverse of ErrorKind.String.
func ParseErrorKind(s string) (ErrorKind, bool) {
	for k, n := range kindNames {
		if n == s {
			return ErrorKind(k), true
		}
	}
	return KindOther, false
}

// Sentinels for errors.Is. A *PathError matches the sentinel of its kind.
var (
	ErrNotFound           = errors.New("not found")
	ErrWriteFailed        = errors.New("write failed")
	ErrReadOnly           = errors.New("read-only mount")
	ErrNoMount            = errors.New("no mount for path")
	ErrInvalidGrepPattern = errors.New("invalid grep pattern")
	ErrEdit               = errors.New("edit failed")
	ErrDeleteNotSupported = errors.New("delete not supported")
	ErrInvalidGlobPattern = errors.New("invalid glob pattern")
	ErrIsDir              = errors.New("is a directory")
	ErrConflict           = errors.New("conflict")
	ErrUnavailable        = errors.New("unavailable")
)

var kindSentinels = [...]error{
	KindNotFound:           ErrNotFound,
	KindWriteFailed:        ErrWriteFailed,
	KindReadOnly:           ErrReadOnly,
	KindNoMount:            ErrNoMount,
	KindInvalidGrepPattern: ErrInvalidGrepPattern,
	KindEdit:               ErrEdit,
	KindDeleteNotSupported: ErrDeleteNotSupported,
	KindInvalidGlobPattern: ErrInvalidGlobPattern,
	KindIsDir:              ErrIsDir,
	KindConflict:           ErrConflict,
	KindUnavailable:        ErrUnavailable,
}

// The exact messages of the edit errors (KindEdit), from the contract.
const (
	EditEmptyOld      = "oldText is empty"
	EditSame          = "oldText and newText are exactly the same"
	EditNotFound      = "The string to replace was not found in the file"
	EditMultipleFound = "The string to replace was found multiple times in the file. Use replace_all to replace all occurrences, or include more context to only edit one occurrence."
)

// PathError is the one error type of the contract. Error renders the
// contract string for Kind; Err, when set, is the underlying cause (an OS
// error, say) and is reachable with errors.Unwrap but not part of the
// message, so tools can show the message as-is, with one exception: a
// write failure caused by an OS error number adds its message after the
// contract string ("write failed: /p: no space left on device").
type PathError struct {
	Kind ErrorKind
	// Path is the absolute posix path the error is about, in the caller's
	// namespace.
	Path string
	// Pattern is the offending pattern for the invalid-pattern kinds.
	Pattern string
	// Detail is the message of KindEdit and KindOther errors.
	Detail string
	// Err is the cause, if any.
	Err error
}

// Error returns the contract string.
func (e *PathError) Error() string {
	switch e.Kind {
	case KindNotFound:
		return "not found: " + e.Path
	case KindWriteFailed:
		if cause := errnoCause(e.Err); cause != "" {
			return "write failed: " + e.Path + ": " + cause
		}
		return "write failed: " + e.Path
	case KindReadOnly:
		return "read-only mount: " + e.Path
	case KindNoMount:
		return "no mount for path: " + e.Path
	case KindInvalidGrepPattern:
		return "invalid grep pattern: " + e.Pattern
	case KindInvalidGlobPattern:
		return "invalid glob pattern: " + e.Pattern
	case KindEdit:
		return e.Detail
	case KindDeleteNotSupported:
		return "delete not supported: " + e.Path
	case KindIsDir:
		return "is a directory: " + e.Path
	case KindConflict:
		return "conflict: " + e.Path
	case KindUnavailable:
		return "unavailable: " + e.Path
	}
	switch {
	case e.Detail != "":
		return e.Detail
	case e.Err != nil && e.Path != "":
		return e.Path + ": " + e.Err.Error()
	case e.Err != nil:
		return e.Err.Error()
	}
	return "error: " + e.Path
}

// errnoCause is the message of the OS error number in err's chain, "" when
// there is none. A write failure names it ("write failed: /p: no space
// left on device"): an errno says what went wrong without naming a host
// path, which a wrapped *os.PathError would.
func errnoCause(err error) string {
	var n syscall.Errno
	if err == nil || !errors.As(err, &n) || n == 0 {
		return ""
	}
	return n.Error()
}

// Unwrap returns the cause.
func (e *PathError) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's kind.
func (e *PathError) Is(target error) bool {
	return int(e.Kind) < len(kindSentinels) && kindSentinels[e.Kind] != nil && kindSentinels[e.Kind] == target
}

// WithPath returns a copy of e about path p: how a union rewrites a child's
// error into the caller's namespace.
func (e *PathError) WithPath(p string) *PathError {
	c := *e
	c.Path = p
	return &c
}

// NewError returns a *PathError of kind k about path p with cause err
// (which may be nil).
func NewError(k ErrorKind, p string, err error) *PathError {
	return &PathError{Kind: k, Path: p, Err: err}
}

// NotFound returns the contract's "not found: <p>" error.
func NotFound(p string) error { return &PathError{Kind: KindNotFound, Path: p} }

// ReadOnly returns the contract's "read-only mount: <p>" error.
func ReadOnly(p string) error { return &PathError{Kind: KindReadOnly, Path: p} }

// NoMount returns the contract's "no mount for path: <p>" error.
func NoMount(p string) error { return &PathError{Kind: KindNoMount, Path: p} }

// WriteFailed returns the contract's "write failed: <p>" error with cause.
func WriteFailed(p string, cause error) error {
	return &PathError{Kind: KindWriteFailed, Path: p, Err: cause}
}

// IsDir returns "is a directory: <p>".
func IsDir(p string) error { return &PathError{Kind: KindIsDir, Path: p} }

// EditError returns a KindEdit error with one of the Edit* messages.
func EditError(p, msg string) error { return &PathError{Kind: KindEdit, Path: p, Detail: msg} }

// InvalidGrepPattern returns "invalid grep pattern: <pattern>".
func InvalidGrepPattern(pattern string, cause error) error {
	return &PathError{Kind: KindInvalidGrepPattern, Pattern: pattern, Err: cause}
}

// InvalidGlobPattern returns "invalid glob pattern: <pattern>".
func InvalidGlobPattern(pattern string, cause error) error {
	return &PathError{Kind: KindInvalidGlobPattern, Pattern: pattern, Err: cause}
}

// KindOf returns the ErrorKind of err, KindOther when err carries none, and
// KindOther for nil.
func KindOf(err error) ErrorKind {
	var pe *PathError
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return KindOther
}

// Rebase moves err from the namespace of a tree mounted at prefix into
// the caller's. When err is or wraps a *PathError, the result is a copy of
// the first PathError in err's chain (without what wrapped it) whose Path
// is Join(prefix, Path); a PathError without a path (an invalid pattern)
// is returned as it is. Any other error, and every error when prefix is
// "/" or "", is returned unchanged: Rebase never edits a message. A caller
// that knows the path wraps such an error in a PathError itself
// (vfs/union does).
func Rebase(err error, prefix string) error {
	if err == nil || prefix == "/" || prefix == "" {
		return err
	}
	var pe *PathError
	if errors.As(err, &pe) {
		if pe.Path == "" {
			return pe
		}
		return pe.WithPath(Join(prefix, pe.Path))
	}
	return err
}
