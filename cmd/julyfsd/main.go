// Command julyfsd is julyfs's companion: the same command line with the
// commands that need FUSE or the search index carried out in-process
// (julyfs mount, unmount, index build, search --index). julyfs execs it for
// those, with the same arguments, so users type julyfs; julyfsd works
// directly too. It is separate because linking go-fuse and bleve costs
// every julyfs run tens of milliseconds of start-up. See docs/cli.md.
//
//	go install github.com/julyfs/julyfs/cmd/...@latest   # julyfs, julyfsd, july
package main

import (
	"github.com/julyfs/julyfs/internal/julyfscli"
	"github.com/julyfs/julyfs/internal/julyfscli/full"
)

func main() {
	julyfscli.Main(full.Heavy())
}
