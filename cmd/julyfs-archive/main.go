// Command julyfs-archive is a julyfs plugin serving a .zip, .tar or
// .tar.gz file as a read-only tree:
//
//	julyfs cat --mount '/a=plugin:julyfs-archive?file=dist.tar.gz' /a/README.md
//
// Parameters: file (the archive, relative to the working directory) and
// format (zip, tar or tar.gz; by default from the file name, then from
// the first bytes), and the limits below. A corrupt archive fails the
// mount with one line naming what is wrong. Directories the archive
// implies but does not list are listed; links, devices and sparse files
// of a tar are left out.
//
// # Streaming
//
// Entries are never held whole: a ranged read (julyfs cat, a FUSE mount)
// reads a tar entry in place and inflates a zip or tar.gz entry as a
// stream that the next read continues, and grep streams each entry. A
// zip entry is checked against its declared size and checksum as it is
// read. A tar.gz has no index of its own: reading an entry inflates the
// stream up to it.
//
// # Limits
//
// Each is a parameter (sizes in bytes, or with a K, M or G suffix):
//
//   - max-entries (default 2000000): an archive with more entries (its
//     implied directories included) is refused at the mount.
//   - max-entry-size (default 4G): a larger entry is refused to every
//     read; grep passes over it.
//   - max-ratio (default 200): a zip entry of more than 1 MiB that
//     expands more than this many times its compressed size is refused
//     like an oversized one, and a tar.gz that expands past this many
//     times its size is refused at the mount (0: no ratio limit).
//   - max-read (default 64M): a whole Read of a larger entry is refused;
//     ranged reads stream it.
//
// # Index cache
//
// The index of an archive (every entry's path, size and place) is kept
// in the cache directory (cache=DIR, default the user's cache directory,
// julyfs/archive-index under it; cache=off keeps none), keyed by the
// archive's path, size, modification time, device and inode: a second
// command on an unchanged archive maps the index instead of reading the
// archive again, whatever its size. A changed archive is indexed anew; a
// damaged index is ignored and rebuilt.
package main

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs"
)

func main() {
	plugins.ServeWith(plugins.ServeOptions{
		Open: func(_ context.Context, args map[string]string) (vfs.FileSystem, error) {
			lim := defaultLimits
			cache := defaultCache()
			for k, v := range args {
				var err error
				switch k {
				case "file", "format":
				case "cache":
					cache = v
					if v == "off" {
						cache = ""
					}
				case "max-entries":
					var n int64
					n, err = strconv.ParseInt(v, 10, 64)
					if err != nil || n < 0 || n > math.MaxInt32 {
						err = fmt.Errorf("max-entries=%s: want a count", v)
					}
					lim.maxEntries = int(n)
				case "max-entry-size":
					lim.maxEntrySize, err = parseSize(k, v)
				case "max-ratio":
					lim.maxRatio, err = strconv.ParseInt(v, 10, 64)
					if err != nil || lim.maxRatio < 0 {
						err = fmt.Errorf("max-ratio=%s: want a whole number (0: no limit)", v)
					}
				case "max-read":
					lim.maxRead, err = parseSize(k, v)
				default:
					return nil, fmt.Errorf("unknown parameter %q (known: file, format, cache, max-entries, max-entry-size, max-ratio, max-read); have %v", k, slices.Sorted(maps.Keys(args)))
				}
				if err != nil {
					return nil, err
				}
			}
			return openArchiveFS(args["file"], args["format"], cache, lim)
		},
		Seed: func(_ context.Context, files map[string][]byte) (vfs.FileSystem, error) { return seedZip(files) },
	})
}

// defaultCache is the directory of cached indexes, "" when the user has
// no cache directory.
func defaultCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "julyfs", "archive-index")
}

// openArchive opens file as a read-only tree with the default limits and
// no index cache.
func openArchive(file, format string) (*archiveFS, error) {
	return openArchiveFS(file, format, "", defaultLimits)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// detect guesses the format from the name, then from magic bytes.
func detect(file string, head []byte) string {
	switch name := strings.ToLower(file); {
	case strings.HasSuffix(name, ".zip"):
		return "zip"
	case strings.HasSuffix(name, ".tar.gz"), strings.HasSuffix(name, ".tgz"):
		return "tar.gz"
	case strings.HasSuffix(name, ".tar"):
		return "tar"
	}
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		return "zip"
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "tar.gz"
	}
	return "tar"
}

// parseSize parses a size parameter: bytes, or a number with a K, M or G
// suffix (powers of 1024).
func parseSize(name, v string) (int64, error) {
	mult, num := int64(1), strings.TrimSuffix(strings.TrimSuffix(v, "iB"), "B")
	switch {
	case strings.HasSuffix(num, "K"):
		mult, num = 1<<10, strings.TrimSuffix(num, "K")
	case strings.HasSuffix(num, "M"):
		mult, num = 1<<20, strings.TrimSuffix(num, "M")
	case strings.HasSuffix(num, "G"):
		mult, num = 1<<30, strings.TrimSuffix(num, "G")
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%s=%s: want a size in bytes, or with a K, M or G suffix (64M)", name, v)
	}
	return n * mult, nil
}

// seedZip builds a zip holding exactly files, with directory entries, in
// an unlinked temporary file, and serves it (julyfs conformance).
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
	tmp, err := os.CreateTemp("", "julyfs-seed-*.zip")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		return nil, err
	}
	return openArchiveFS(tmp.Name(), "zip", "", defaultLimits)
}
