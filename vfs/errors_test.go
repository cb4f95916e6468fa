package vfs_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

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
		assert.EqualError(t, c.err, c.want)
		assert.Equal(t, c.kind, vfs.KindOf(c.err), "KindOf(%q)", c.err)
		var pe *vfs.PathError
		if assert.ErrorAs(t, fmt.Errorf("wrapped: %w", c.err), &pe, "errors.As(wrapped %q)", c.err) {
			assert.Equal(t, c.kind, pe.Kind, "errors.As(wrapped %q).Kind", c.err)
		}
		for k, s := range sentinels {
			assert.Equal(t, k == c.kind, errors.Is(fmt.Errorf("wrapped: %w", c.err), s), "errors.Is(%q, %v)", c.err, s)
		}
	}
	err := vfs.WriteFailed("/p", cause)
	assert.ErrorIs(t, err, cause, "WriteFailed does not unwrap to its cause")
	assert.Same(t, cause, errors.Unwrap(err), "WriteFailed does not unwrap to its cause")
	assert.NotErrorIs(t, vfs.NotFound("/p"), fs.ErrNotExist, "vfs errors match io/fs sentinels; the mapping belongs to the io/fs view")
}

func TestErrorKindRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	for k := vfs.KindOther; k <= vfs.KindUnavailable; k++ {
		s := k.String()
		assert.False(t, seen[s], "ErrorKind(%d).String() = %q, a duplicate", k, s)
		seen[s] = true
		got, ok := vfs.ParseErrorKind(s)
		assert.True(t, ok, "ParseErrorKind(%q) ok", s)
		assert.Equal(t, k, got, "ParseErrorKind(%q)", s)
	}
	got, ok := vfs.ParseErrorKind("no_such_kind")
	assert.False(t, ok, "ParseErrorKind(\"no_such_kind\") ok")
	assert.Equal(t, vfs.KindOther, got, "ParseErrorKind(\"no_such_kind\")")
	assert.Equal(t, "kind(200)", vfs.ErrorKind(200).String())
	assert.Equal(t, vfs.KindOther, vfs.KindOf(nil), "KindOf(nil)")
	assert.Equal(t, vfs.KindOther, vfs.KindOf(errors.New("plain")), "KindOf(plain)")
}

func TestWithPathAndRebase(t *testing.T) {
	orig := vfs.NotFound("/x").(*vfs.PathError)
	moved := orig.WithPath("/mnt/x")
	assert.Equal(t, "/x", orig.Path, "WithPath changed the original")
	assert.Equal(t, "/mnt/x", moved.Path)
	assert.EqualError(t, moved, "not found: /mnt/x")
	assert.ErrorIs(t, moved, vfs.ErrNotFound)
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
		assert.EqualError(t, got, c.want, "Rebase(%q, %q)", c.err, c.prefix)
		assert.Equal(t, vfs.KindOf(c.err), vfs.KindOf(got), "Rebase(%q, %q) changed the kind", c.err, c.prefix)
	}
	assert.NoError(t, vfs.Rebase(nil, "/mnt"), "Rebase(nil)")
	assert.Same(t, plain, vfs.Rebase(plain, "/mnt"), "Rebase(plain, /mnt) is not plain itself")
}
