package vfs

import (
	"context"
	"errors"
)

// ConditionalCommitter is the optional capability of a StagedFile to be
// published only while a precondition holds, checked atomically with the
// commit: how a writer through a mount avoids overwriting an edit made
// meanwhile through the API or by another process (the staging was copied
// from version E; commit only if the file is still E).
type ConditionalCommitter interface {
	// BaseETag is the etag of the file at the staged path when the
	// staging was opened (with keep, the version its contents were copied
	// from); "" when there was no file.
	BaseETag() string
	// CommitIf commits as Commit does when cond holds at the moment of
	// the commit; otherwise it fails with KindConflict ("conflict: /p"),
	// publishes nothing, and the staging stays open (Commit, CommitIf or
	// Abort may follow).
	CommitIf(ctx context.Context, cond Precondition) error
}

// CommitIf commits s through its ConditionalCommitter, or answers
// errors.ErrUnsupported (and leaves s open) when it has none.
func CommitIf(ctx context.Context, s StagedFile, cond Precondition) error {
	if c, ok := s.(ConditionalCommitter); ok {
		return c.CommitIf(ctx, cond)
	}
	return errors.ErrUnsupported
}

// BaseETag returns s's BaseETag, or "" when it has no
// ConditionalCommitter.
func BaseETag(s StagedFile) string {
	if c, ok := s.(ConditionalCommitter); ok {
		return c.BaseETag()
	}
	return ""
}
