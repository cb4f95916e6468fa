package plugins

import (
	"context"
	"errors"

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
		}
		return e
	}
	switch {
	case errors.Is(err, context.Canceled):
		return &pluginpb.Error{Kind: wireCanceled}
	case errors.Is(err, context.DeadlineExceeded):
		return &pluginpb.Error{Kind: wireDeadline}
	}
	return &pluginpb.Error{Cause: []byte(err.Error())}
}

// remoteError is the cause of a PathError, or a plain error, as the plugin
// rendered it.
type remoteError struct{ msg string }

func (e *remoteError) Error() string { return e.msg }

// decodeError is the inverse of encodeError: a *vfs.PathError with the same
// kind, path, pattern and detail, so its message and errors.Is answer are
// those the plugin's tree gave.
func decodeError(e *pluginpb.Error) error {
	if e == nil {
		return nil
	}
	switch e.Kind {
	case "":
		return &remoteError{msg: string(e.Cause)}
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
		pe.Err = &remoteError{msg: string(e.Cause)}
	}
	return pe
}
