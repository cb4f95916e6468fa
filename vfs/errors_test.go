package vfs_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/julyfs/julyfs/vfs"
)

var sentinels = map[vfs.ErrorKind]error{
	vfs.KindNotFound:           vfs.ErrNotFound,
	vfs.KindWriteFailed:        vfs.ErrWriteFailed,
	vfs.KindReadOnly:           vfs.ErrReadOnly,
	vfs.KindNoMount:            vfs.ErrNoMount,
	vfs.KindInvalidGrepPattern: vfs.ErrInvalidGrepPattern,
	vfs.KindEdit:               vfs.ErrEdit,
	vfs.KindDeleteNotSupported: vfs.ErrDeleteNotSupported,
	vfs.KindInvalidGlobPattern: vfs.ErrInvalidGlobPattern,
	vfs.KindIsDir:              vfs.ErrIsDir,
	vfs.KindConflict:           vfs.ErrConflict,
	vfs.KindUnavailable:        vfs.ErrUnavailable,
}

func TestPathErrorStrings(t *testing.T) {
	cause := errors.New("disk on fire")
	for _, c := range []struct {
		err  error
		want string
		kind vfs.ErrorKind
	}{
		{vfs.NotFound("/p"), "not found: /p", vfs.KindNotFound},
		{vfs.WriteFailed("/p", cause), "write failed: /p", vfs.KindWriteFailed},
		{vfs.WriteFailed("/p", syscall.ENOSPC), "write failed: /p: no space left on device", vfs.KindWriteFailed},
		{vfs.WriteFailed("/p", &os.PathError{Op: "write", Path: "/host/secret/p", Err: syscall.ENOSPC}), "write failed: /p: no space left on device", vfs.KindWriteFailed},
		{vfs.ReadOnly("/p"), "read-only mount: /p", vfs.KindReadOnly},
		{vfs.NoMount("/p"), "no mount for path: /p", vfs.KindNoMount},
		{vfs.InvalidGrepPattern("(", cause), "invalid grep pattern: (", vfs.KindInvalidGrepPattern},
		{vfs.InvalidGlobPattern("[", cause), "invalid glob pattern: [", vfs.KindInvalidGlobPattern},
		{vfs.EditError("/p", vfs.EditEmptyOld), "oldText is empty", vfs.KindEdit},
		{vfs.EditError("/p", vfs.EditSame), "oldText and newText are exactly the same", vfs.KindEdit},
		{vfs.EditError("/p", vfs.EditNotFound), "The string to replace was not found in the file", vfs.KindEdit},
		{vfs.EditError("/p", vfs.EditMultipleFound), "The string to replace was found multiple times in the file. Use replace_all to replace all occurrences, or include more context to only edit one occurrence.", vfs.KindEdit},
		{vfs.NewError(vfs.KindDeleteNotSupported, "/p", nil), "delete not supported: /p", vfs.KindDeleteNotSupported},
		{vfs.IsDir("/p"), "is a directory: /p", vfs.KindIsDir},
		{vfs.NewError(vfs.KindConflict, "/p", nil), "conflict: /p", vfs.KindConflict},
		{vfs.NewError(vfs.KindUnavailable, "/p", cause), "unavailable: /p", vfs.KindUnavailable},
		{vfs.NewError(vfs.KindOther, "/p", cause), "/p: disk on fire", vfs.KindOther},
		{vfs.NewError(vfs.KindOther, "", cause), "disk on fire", vfs.KindOther},
		{&vfs.PathError{Kind: vfs.KindOther, Path: "/p", Detail: "custom"}, "custom", vfs.KindOther},
		{vfs.NewError(vfs.KindOther, "/p", nil), "error: /p", vfs.KindOther},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
		if got := vfs.KindOf(c.err); got != c.kind {
			t.Errorf("KindOf(%q) = %v, want %v", c.err, got, c.kind)
		}
		var pe *vfs.PathError
		if !errors.As(fmt.Errorf("wrapped: %w", c.err), &pe) || pe.Kind != c.kind {
			t.Errorf("errors.As(wrapped %q) = %v, want kind %v", c.err, pe, c.kind)
		}
		for k, s := range sentinels {
			if got := errors.Is(fmt.Errorf("wrapped: %w", c.err), s); got != (k == c.kind) {
				t.Errorf("errors.Is(%q, %v) = %v, want %v", c.err, s, got, k == c.kind)
			}
		}
	}
	if err := vfs.WriteFailed("/p", cause); !errors.Is(err, cause) || errors.Unwrap(err) != cause {
		t.Errorf("WriteFailed does not unwrap to its cause")
	}
	if errors.Is(vfs.NotFound("/p"), fs.ErrNotExist) {
		t.Errorf("vfs errors match io/fs sentinels; the mapping belongs to the io/fs view")
	}
}

func TestErrorKindRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	for k := vfs.KindOther; k <= vfs.KindUnavailable; k++ {
		s := k.String()
		if seen[s] {
			t.Errorf("ErrorKind(%d).String() = %q, a duplicate", k, s)
		}
		seen[s] = true
		if got, ok := vfs.ParseErrorKind(s); !ok || got != k {
			t.Errorf("ParseErrorKind(%q) = %v, %v, want %v, true", s, got, ok, k)
		}
	}
	if got, ok := vfs.ParseErrorKind("no_such_kind"); ok || got != vfs.KindOther {
		t.Errorf("ParseErrorKind(\"no_such_kind\") = %v, %v, want other, false", got, ok)
	}
	if got := vfs.ErrorKind(200).String(); got != "kind(200)" {
		t.Errorf("ErrorKind(200).String() = %q, want \"kind(200)\"", got)
	}
	if got := vfs.KindOf(nil); got != vfs.KindOther {
		t.Errorf("KindOf(nil) = %v, want other", got)
	}
	if got := vfs.KindOf(errors.New("plain")); got != vfs.KindOther {
		t.Errorf("KindOf(plain) = %v, want other", got)
	}
}

func TestWithPathAndRebase(t *testing.T) {
	orig := vfs.NotFound("/x").(*vfs.PathError)
	moved := orig.WithPath("/mnt/x")
	if orig.Path != "/x" || moved.Path != "/mnt/x" || moved.Error() != "not found: /mnt/x" || !errors.Is(moved, vfs.ErrNotFound) {
		t.Errorf("WithPath: orig %q, moved %q", orig, moved)
	}
	plain := errors.New("plain")
	for _, c := range []struct {
		err    error
		prefix string
		want   string
	}{
		{vfs.NotFound("/x"), "/mnt", "not found: /mnt/x"},
		{vfs.NotFound("/"), "/mnt", "not found: /mnt"},
		{vfs.ReadOnly("/a/b"), "/m/n", "read-only mount: /m/n/a/b"},
		{vfs.NotFound("/x"), "/", "not found: /x"},
		{vfs.NotFound("/x"), "", "not found: /x"},
		{fmt.Errorf("ctx: %w", vfs.NotFound("/x")), "/mnt", "not found: /mnt/x"},
		{vfs.InvalidGrepPattern("(", nil), "/mnt", "invalid grep pattern: ("},
		{plain, "/mnt", "plain"},
	} {
		got := vfs.Rebase(c.err, c.prefix)
		if got.Error() != c.want {
			t.Errorf("Rebase(%q, %q) = %q, want %q", c.err, c.prefix, got, c.want)
		}
		if vfs.KindOf(got) != vfs.KindOf(c.err) {
			t.Errorf("Rebase(%q, %q) changed the kind to %v", c.err, c.prefix, vfs.KindOf(got))
		}
	}
	if vfs.Rebase(nil, "/mnt") != nil {
		t.Errorf("Rebase(nil) != nil")
	}
	if got := vfs.Rebase(plain, "/mnt"); got != plain {
		t.Errorf("Rebase(plain, /mnt) = %#v, want plain itself", got)
	}
}
