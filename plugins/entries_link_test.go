package plugins

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/julyfs/julyfs/vfs"
)

// TestEntriesKeepLinks: List entries cross the plugin protocol with
// DirEntry.Link and the kind a link leads to, a dangling one too.
func TestEntriesKeepLinks(t *testing.T) {
	es := []vfs.DirEntry{
		{Path: "/a", Kind: vfs.KindFile}, {Path: "/d", Kind: vfs.KindDir}, {Path: "/dl", Kind: vfs.KindDir, Link: true},
		{Path: "/fl", Kind: vfs.KindFile, Link: true}, {Path: "/gone", Kind: vfs.KindMissing, Link: true},
	}
	got, perr := unpackEntries(packEntries(es, nil), nil)
	assert.Nil(t, perr)
	assert.Equal(t, es, got)
}
