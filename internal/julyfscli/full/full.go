// Package full carries out the julyfs commands that need FUSE or the search
// index: mount, unmount, index build and search --index. Only cmd/julyfsd
// imports it, so the julyfs command users type links neither go-fuse nor
// bleve and starts fast; julyfs hands those commands to julyfsd (see
// julyfscli.Heavy).
package full

import "github.com/julyfs/julyfs/internal/julyfscli"

// Heavy returns the implementations of julyfs's heavy commands.
func Heavy() julyfscli.Heavy {
	return julyfscli.Heavy{
		Mount:       mount,
		Unmount:     unmount,
		IndexBuild:  indexBuild,
		IndexFollow: indexFollow,
		OpenIndex:   openIndex,
	}
}
