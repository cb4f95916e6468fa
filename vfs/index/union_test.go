package index_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// An indexed mount serves Search under its prefix; Search at "/" merges
// the mounts' results by score then path; an unindexed mount adds nothing.
func TestUnionOfIndexedMounts(t *testing.T) {
	repo := open(t, temp.MustNew(map[string]string{
		"/net/http/header.go": "package http\n// Header holds HTTP header fields.\n",
		"/net/http/server.go": "package http\n// The server reads each request header.\n",
	}), "", index.Options{})
	notes := open(t, temp.MustNew(map[string]string{
		"/header.md": "# Header notes\nheader header header\n",
		"/other.md":  "nothing here\n",
	}), "", index.Options{})
	plain := temp.MustNew(map[string]string{"/header.txt": "header\n"})
	u, err := union.New([]union.Mount{{Prefix: "/repo", FS: repo}, {Prefix: "/notes", FS: notes}, {Prefix: "/plain", FS: plain}})
	require.NoError(t, err)

	under := search(t, u, vfs.SearchQuery{Query: "header", Path: "/repo"})
	assert.Equal(t, []string{"/repo/net/http/header.go", "/repo/net/http/server.go"}, paths(under), "Search(header under /repo)")
	direct := search(t, repo, vfs.SearchQuery{Query: "header"})
	for i := range direct {
		assert.Equal(t, direct[i].Score, under[i].Score, "union hit %+v differs from the mount's %+v beyond the prefix", under[i], direct[i])
		assert.Equal(t, direct[i].LineNumber, under[i].LineNumber, "union hit %+v differs from the mount's %+v beyond the prefix", under[i], direct[i])
		assert.Equal(t, direct[i].Snippet, under[i].Snippet, "union hit %+v differs from the mount's %+v beyond the prefix", under[i], direct[i])
	}

	all := search(t, u, vfs.SearchQuery{Query: "header"})
	require.Len(t, all, 3, "Search(header at /), want the 3 indexed hits")
	assert.True(t, slices.IsSortedFunc(all, vfs.CompareSearchResults), "Search(header at /) not by score then path: %+v", all)
	top := search(t, u, vfs.SearchQuery{Query: "header", MaxResults: 2})
	assert.Equal(t, all[:2], top, "Search(header at /, max 2)")

	// A write through the union reaches the mount's index.
	require.NoError(t, u.Write(t.Context(), "/notes/new.md", []byte("a quokka\n")))
	assert.Equal(t, []string{"/notes/new.md"}, paths(search(t, u, vfs.SearchQuery{Query: "quokka"})), "Search(quokka) after a union write")
}
