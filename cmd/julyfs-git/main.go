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
package main

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs"
)

func main() {
	plugins.ServeWith(plugins.ServeOptions{
		Open: func(_ context.Context, args map[string]string) (vfs.FileSystem, error) {
			for k := range args {
				if k != "repo" && k != "ref" {
					return nil, fmt.Errorf("unknown parameter %q (known: repo, ref); have %v", k, slices.Sorted(maps.Keys(args)))
				}
			}
			return openRepo(args["repo"], args["ref"])
		},
		Seed: func(_ context.Context, files map[string][]byte) (vfs.FileSystem, error) { return seedRepo(files) },
	})
}
