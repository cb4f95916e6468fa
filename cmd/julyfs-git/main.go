// Command julyfs-git is a julyfs plugin serving a git repository at a
// ref, tag or commit, read-only, straight from the object database (no
// checkout):
//
//	julyfs ls   --mount '/repo=plugin:julyfs-git?repo=.&ref=v1.2.0' /repo
//	julyfs grep --mount '/repo=plugin:julyfs-git?repo=.&ref=3f2a9c1' TODO /repo
//
// Parameters: repo (a directory in the repository, default the working
// directory) and ref (anything git rev-parse takes that names a commit:
// a branch, a tag, a hash, HEAD~2; default HEAD). Etags are blob hashes,
// modification times the commit's committer time; Grep skips binary
// blobs; Write and Delete fail with "read-only mount". Run by hand it says
// it is a plugin and exits.
//
// Blobs are streamed: ranged reads (julyfs cat, a FUSE mount) and grep
// read a blob in pieces, so a 300 MB blob costs a few MB. Limits, as
// parameters (bytes, or with a K, M or G suffix: 64M):
//
//   - max-file-size (default 4G): a larger blob is refused to every read
//     ("over this mount's max-file-size"); grep passes over it.
//   - max-read (default 64M): a whole Read of a larger blob is refused;
//     ranged reads stream it.
package main

import (
	"context"
	"fmt"
	"maps"
	"math"
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
			for k, v := range args {
				var err error
				switch k {
				case "repo", "ref":
				case "max-file-size":
					lim.maxFile, err = parseSize(k, v)
				case "max-read":
					lim.maxRead, err = parseSize(k, v)
				default:
					return nil, fmt.Errorf("unknown parameter %q (known: repo, ref, max-file-size, max-read); have %v", k, slices.Sorted(maps.Keys(args)))
				}
				if err != nil {
					return nil, err
				}
			}
			g, err := openRepo(args["repo"], args["ref"])
			if err != nil {
				return nil, err
			}
			g.limits = lim
			return g, nil
		},
		Seed: func(_ context.Context, files map[string][]byte) (vfs.FileSystem, error) { return seedRepo(files) },
	})
}

// parseSize parses a size parameter: bytes, or a number with a K, M or G
// suffix (powers of 1024).
func parseSize(name, v string) (int64, error) {
	mult := int64(1)
	switch t := strings.TrimSuffix(strings.TrimSuffix(v, "iB"), "B"); {
	case strings.HasSuffix(t, "K"):
		mult, v = 1<<10, strings.TrimSuffix(t, "K")
	case strings.HasSuffix(t, "M"):
		mult, v = 1<<20, strings.TrimSuffix(t, "M")
	case strings.HasSuffix(t, "G"):
		mult, v = 1<<30, strings.TrimSuffix(t, "G")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%s=%s: want a size in bytes, or with a K, M or G suffix (64M)", name, v)
	}
	return n * mult, nil
}
