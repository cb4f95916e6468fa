package httpapi

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/julyfs/julyfs/vfs"
)

// Defaults of the tree routes' bounds (Options.MaxFileBytes,
// Options.MaxTreeEntries).
const (
	DefaultMaxFileBytes   = 8 << 20
	DefaultMaxTreeEntries = 10000
)

// TreeEntry is one entry of GET /v1/sessions/{id}/tree.
type TreeEntry struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Dir  bool   `json:"dir"`
	// Size is a file's size in bytes (0 for a directory).
	Size int64 `json:"size"`
}

// errTreeBound is a listing over Options.MaxTreeEntries.
var errTreeBound = errors.New("tree bound")

// tree is GET /v1/sessions/{id}/tree?path=/dir: the directory's children
// in the session's bound tree, with their sizes.
func (a *agentAPI) tree(w http.ResponseWriter, r *http.Request) {
	dir := vfs.Clean(r.URL.Query().Get("path"))
	limit := a.s.opts.MaxTreeEntries
	entries := []TreeEntry{}
	err := a.Host.View(r.Context(), r.PathValue("id"), func(ctx context.Context, fsys vfs.FileSystem) error {
		fi, err := fsys.Stat(ctx, dir)
		if err != nil {
			return err
		}
		switch fi.Kind {
		case vfs.KindMissing:
			return vfs.NotFound(dir)
		case vfs.KindFile:
			return &notDirError{dir}
		}
		for e, err := range fsys.List(ctx, dir) {
			if err != nil {
				return err
			}
			if len(entries) == limit {
				return errTreeBound
			}
			te := TreeEntry{Name: path.Base(e.Path), Path: e.Path, Dir: e.Kind == vfs.KindDir}
			if e.Kind == vfs.KindFile {
				if fi, err := fsys.Stat(ctx, e.Path); err == nil {
					te.Size = fi.Size
				}
			}
			entries = append(entries, te)
		}
		return nil
	})
	if errors.Is(err, errTreeBound) {
		writeError(w, http.StatusRequestEntityTooLarge, "too_many_entries", fmt.Sprintf("%s has over %d entries, the server's listing limit (july serve --max-tree-entries)", dir, limit))
		return
	}
	if err != nil {
		writeTreeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"path": dir, "entries": entries})
}

// file is GET /v1/sessions/{id}/file?path=/x: the file's bytes from the
// session's bound tree, at most Options.MaxFileBytes. The content type is
// an image type for an image's extension, else text/plain for UTF-8 and
// application/octet-stream for the rest; the answer is sandboxed (CSP)
// and never sniffed, so a hostile file opened directly runs nothing.
func (a *agentAPI) file(w http.ResponseWriter, r *http.Request) {
	p := vfs.Clean(r.URL.Query().Get("path"))
	limit := a.s.opts.MaxFileBytes
	var data []byte
	var size int64
	err := a.Host.View(r.Context(), r.PathValue("id"), func(ctx context.Context, fsys vfs.FileSystem) error {
		fi, err := fsys.Stat(ctx, p)
		if err != nil {
			return err
		}
		switch fi.Kind {
		case vfs.KindMissing:
			return vfs.NotFound(p)
		case vfs.KindDir:
			return &vfs.PathError{Kind: vfs.KindIsDir, Path: p}
		}
		if size = fi.Size; size > limit {
			return errTreeBound
		}
		data, err = fsys.Read(ctx, p)
		if err == nil && int64(len(data)) > limit {
			size = int64(len(data))
			return errTreeBound
		}
		return err
	})
	if errors.Is(err, errTreeBound) {
		writeError(w, http.StatusRequestEntityTooLarge, "file_too_large", fmt.Sprintf("%s is %d bytes, over the viewer's limit of %d (july serve --max-file-bytes)", p, size, limit))
		return
	}
	if err != nil {
		writeTreeErr(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", fileType(p, data))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	w.Write(data)
}

// imageTypes are the extensions served with their image type.
var imageTypes = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".svg": true, ".avif": true, ".bmp": true, ".ico": true}

func fileType(p string, data []byte) string {
	ext := strings.ToLower(path.Ext(p))
	if imageTypes[ext] {
		if t := mime.TypeByExtension(ext); strings.HasPrefix(t, "image/") {
			return t
		}
	}
	if utf8.Valid(data) {
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

// notDirError is a tree listing of a file.
type notDirError struct{ path string }

func (e *notDirError) Error() string { return "not a directory: " + e.path }

// writeTreeErr writes an error of a tree route: the contract's string,
// with the status its kind maps to.
func writeTreeErr(w http.ResponseWriter, err error) {
	var nd *notDirError
	switch {
	case errors.As(err, &nd):
		writeError(w, http.StatusBadRequest, "not_dir", err.Error())
	case errors.Is(err, vfs.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", err.Error())
	case errors.Is(err, vfs.ErrIsDir):
		writeError(w, http.StatusBadRequest, "is_dir", err.Error())
	case errors.Is(err, vfs.ErrNoMount):
		writeError(w, http.StatusNotFound, "not_found", err.Error())
	case errors.Is(err, vfs.ErrUnavailable):
		writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
	default:
		writeErr(w, err)
	}
}
