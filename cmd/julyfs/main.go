// Command julyfs runs the julyfs filesystem verbs from a shell against a
// tree composed from --mount flags and --config files, without mounting
// anything.
//
//	julyfs tour                                   # a guided run on a built-in tree
//	julyfs ls   --mount /=local:./docs /
//	julyfs grep --mount /repo=local:./src --mount /notes=temp: 'TODO' / --glob '*.go'
//
// Every command that reads or writes a tree takes repeatable --mount
// PREFIX=KIND:ARG[?ro] flags and an optional --config FILE (see package
// rootspec); flags may come before or after the positional arguments.
// Errors print the contract string ("not found: /p") on stderr and exit 1;
// usage errors exit 2; grep exits 1 when nothing matched. See
// docs/cli.md.
//
// The commands that need FUSE or the search index (mount, unmount, index
// build, search --index) are carried out by the companion executable
// julyfsd, which julyfs execs with the same arguments ($JULYFSD, else
// julyfsd beside julyfs, else on $PATH). julyfs itself links neither
// go-fuse nor bleve, so every other command starts fast. The commands live
// in internal/julyfscli.
package main

import (
	"os"
	"runtime/debug"

	"github.com/julyfs/julyfs/internal/julyfscli"
)

// gcPercent is julyfs's garbage-collection target (Go's default is 100).
// A julyfs command lives for a moment and keeps little alive (the files in
// flight, not the tree), so collecting less often is much faster for a few
// MB more: grep -i over the Go source tree went from 160 to 136 ms, peak RSS
// from 14 to 20 MB (docs/perf/grep.md). Memory still does not grow with the
// tree. GOGC in the environment wins. julyfsd, which serves mounts and
// builds indexes, keeps Go's default.
const gcPercent = 400

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	julyfscli.Main(julyfscli.Heavy{})
}
