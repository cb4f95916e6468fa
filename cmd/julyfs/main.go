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

import "github.com/julyfs/julyfs/internal/julyfscli"

func main() {
	julyfscli.Main(julyfscli.Heavy{})
}
