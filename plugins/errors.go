package plugins

import (
	"context"
	"errors"
	"syscall"

	"github.com/julyfs/julyfs/plugins/pluginpb"
	"github.com/julyfs/julyfs/vfs"
)

// Wire kinds of the context errors, beside vfs.ErrorKind names.
const (
	wireCanceled = "canceled"
	wireDeadline = "deadline_exceeded"
	wireEOF      = "eof"
)

// encodeError turns err into its wire form; nil stays nil.
func encodeError(err error) *pluginpb.Error {
	if err == nil {
		return nil
	}
	var pe *vfs.PathError
	if errors.As(err, &pe) {
		e := &pluginpb.Error{
			Kind:    pe.Kind.String(),
			Path:    []byte(pe.Path),
			Pattern: []byte(pe.Pattern),
			Detail:  []byte(pe.Detail),
		}
		if pe.Err != nil {
			e.Cause = []byte(pe.Err.Error())
			e.Errno, e.Unsupported = sentinels(pe.Err)
		}
		return e
	}
	switch {
	case errors.Is(err, context.Canceled):
		return &pluginpb.Error{Kind: wireCanceled}
	case errors.Is(err, context.DeadlineExceeded):
		return &pluginpb.Error{Kind: wireDeadline}
	}
	e := &pluginpb.Error{Cause: []byte(err.Error())}
	e.Errno, e.Unsupported = sentinels(err)
	return e
}

// sentinels are the errors a cause is or wraps that callers test with
// errors.Is: its syscall.Errno (the directory verbs' ENOTEMPTY, EBUSY,
// ENOTDIR, EEXIST), and errors.ErrUnsupported.
func sentinels(err error) (errno int64, unsupported bool) {
	var en syscall.Errno
	if errors.As(err, &en) {
		errno = int64(en)
	}
	return errno, errors.Is(err, errors.ErrUnsupported)
}

// remoteError is the cause of a PathError, or a plain error, as the plugin
// rendered it, wrapping the sentinels it carried (sentinels).
type remoteError struct {
	msg  string
	wrap []error
}

func (e *remoteError) Error() string { return e.msg }

func (e *remoteError) Unwrap() []error { return e.wrap }

func newRemoteError(e *pluginpb.Error) *remoteError {
	r := &remoteError{msg: string(e.Cause)}
	if e.Errno != 0 {
		r.wrap = append(r.wrap, syscall.Errno(e.Errno))
	}
	if e.Unsupported {
		r.wrap = append(r.wrap, errors.ErrUnsupported)
	}
	return r
}

// decodeError is the inverse of encodeError: a *vfs.PathError with the same
// kind, path, pattern and detail, so its message and errors.Is answer are
// those the plugin's tree gave.
func decodeError(e *pluginpb.Error) error {
	if e == nil {
		return nil
	}
	switch e.Kind {
	case "":
		return newRemoteError(e)
	case wireCanceled:
		return context.Canceled
	case wireDeadline:
		return context.DeadlineExceeded
	}
	kind, known := vfs.ParseErrorKind(e.Kind)
	pe := &vfs.PathError{Kind: kind, Path: string(e.Path), Pattern: string(e.Pattern), Detail: string(e.Detail)}
	if !known && pe.Detail == "" {
		// A kind this host does not know (a newer plugin): keep its name.
		pe.Detail = e.Kind + ": " + pe.Path
	}
	if len(e.Cause) > 0 {
		pe.Err = newRemoteError(e)
	}
	return pe
}
