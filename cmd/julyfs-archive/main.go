// Command julyfs-archive is a julyfs plugin serving a .zip, .tar or
// .tar.gz file as a read-only tree, through afero's zipfs and tarfs and
// the vfs/aferofs bridge:
//
//	julyfs cat --mount '/a=plugin:julyfs-archive?file=dist.tar.gz' /a/README.md
//
// Parameters: file (the archive, relative to the working directory) and
// format (zip, tar or tar.gz; by default from the file name, then from
// the first bytes). A tar archive is read whole into memory (tarfs keeps
// its files in memory); a zip is read in place. A corrupt archive fails
// the mount with one line naming what is wrong. Directories the archive
// implies but does not list are listed.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/spf13/afero"
	"github.com/spf13/afero/tarfs"
	"github.com/spf13/afero/zipfs"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/aferofs"
	"github.com/julyfs/julyfs/vfs/readonly"
)

func main() {
	plugins.ServeWith(plugins.ServeOptions{
		Open: func(_ context.Context, args map[string]string) (vfs.FileSystem, error) {
			for k := range args {
				if k != "file" && k != "format" {
					return nil, fmt.Errorf("unknown parameter %q (known: file, format); have %v", k, slices.Sorted(maps.Keys(args)))
				}
			}
			return openArchive(args["file"], args["format"])
		},
		Seed: func(_ context.Context, files map[string][]byte) (vfs.FileSystem, error) { return seedZip(files) },
	})
}

// openArchive opens file as a read-only tree.
func openArchive(file, format string) (vfs.FileSystem, error) {
	if file == "" {
		return nil, errors.New("file= is required: the .zip, .tar or .tar.gz to serve")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("file=%s: %v", file, unwrapPath(err))
	}
	if format == "" {
		format = detect(file, data)
	}
	var afs afero.Fs
	switch format {
	case "zip":
		afs, err = openZip(data)
	case "tar":
		afs, err = openTar(data)
	case "tar.gz", "tgz":
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(bytes.NewReader(data)); err == nil {
			var raw []byte
			if raw, err = io.ReadAll(zr); err == nil {
				afs, err = openTar(raw)
			}
		}
	default:
		return nil, fmt.Errorf("format=%s: want zip, tar or tar.gz", format)
	}
	if err != nil {
		return nil, fmt.Errorf("%s is not a valid %s archive: %v", file, format, err)
	}
	return readonly.New(aferofs.New(afs)), nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// detect guesses the format from the name, then from magic bytes.
func detect(file string, data []byte) string {
	switch name := strings.ToLower(file); {
	case strings.HasSuffix(name, ".zip"):
		return "zip"
	case strings.HasSuffix(name, ".tar.gz"), strings.HasSuffix(name, ".tgz"):
		return "tar.gz"
	case strings.HasSuffix(name, ".tar"):
		return "tar"
	}
	switch {
	case bytes.HasPrefix(data, []byte("PK\x03\x04")), bytes.HasPrefix(data, []byte("PK\x05\x06")):
		return "zip"
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		return "tar.gz"
	}
	return "tar"
}

func openZip(data []byte) (afero.Fs, error) {
	r, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	var names, dirs []string
	for _, f := range r.File {
		if strings.HasSuffix(f.Name, "/") {
			dirs = append(dirs, f.Name)
		} else {
			names = append(names, f.Name)
		}
		// Check every entry can be read now, not at the first Read.
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", f.Name, err)
		}
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", f.Name, err)
		}
	}
	missing := impliedDirs(names, dirs)
	if len(missing) == 0 {
		return zipfs.New(r), nil
	}
	// zipfs lists only the directories the archive has entries for:
	// rewrite it with the missing ones (file data is copied compressed).
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, d := range missing {
		if _, err := w.Create(d + "/"); err != nil {
			return nil, err
		}
	}
	for _, f := range r.File {
		if err := w.Copy(f); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	r, err = zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		return nil, err
	}
	return zipfs.New(r), nil
}

// impliedDirs returns the directories (without leading or trailing
// slash) that the file names imply but no directory entry lists, sorted.
func impliedDirs(names, dirs []string) []string {
	listed := map[string]bool{}
	for _, d := range dirs {
		listed[strings.Trim(path.Clean("/"+d), "/")] = true
	}
	implied := map[string]bool{}
	for _, n := range names {
		for d := path.Dir(path.Clean("/" + n)); d != "/"; d = path.Dir(d) {
			if k := d[1:]; !listed[k] {
				implied[k] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(implied))
}

// openTar validates the whole archive first: tarfs.New returns nil on a
// read error and panics on a short entry.
func openTar(data []byte) (afs afero.Fs, err error) {
	tr := tar.NewReader(bytes.NewReader(data))
	var names, dirs []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if _, err := io.Copy(io.Discard, tr); err != nil {
			return nil, fmt.Errorf("%s: %v", h.Name, err)
		}
		if h.Typeflag == tar.TypeDir {
			dirs = append(dirs, h.Name)
		} else {
			names = append(names, h.Name)
		}
	}
	if missing := impliedDirs(names, dirs); len(missing) > 0 {
		// tarfs lists only the directories the archive has entries for:
		// put the missing ones first.
		var buf bytes.Buffer
		w := tar.NewWriter(&buf)
		for _, d := range missing {
			if err := w.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
				return nil, err
			}
		}
		tr := tar.NewReader(bytes.NewReader(data))
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			if err := w.WriteHeader(h); err != nil {
				return nil, err
			}
			if _, err := io.Copy(w, tr); err != nil {
				return nil, err
			}
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		data = buf.Bytes()
	}
	defer func() {
		if r := recover(); r != nil {
			afs, err = nil, fmt.Errorf("%v", r)
		}
	}()
	t := tarfs.New(tar.NewReader(bytes.NewReader(data)))
	if t == nil {
		return nil, errors.New("unreadable")
	}
	return t, nil
}

// seedZip builds a zip holding exactly files, with directory entries, and
// serves it (julyfs conformance).
func seedZip(files map[string][]byte) (vfs.FileSystem, error) {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		for d := vfs.Parent(vfs.Clean(p)); d != "/"; d = vfs.Parent(d) {
			dirs[d] = true
		}
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		if _, err := w.Create(strings.TrimPrefix(d, "/") + "/"); err != nil {
			return nil, err
		}
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		f, err := w.Create(strings.TrimPrefix(vfs.Clean(p), "/"))
		if err != nil {
			return nil, err
		}
		if _, err := f.Write(files[p]); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	afs, err := openZip(buf.Bytes())
	if err != nil {
		return nil, err
	}
	return readonly.New(aferofs.New(afs)), nil
}
