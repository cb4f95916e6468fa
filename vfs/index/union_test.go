package index_test

import (
	"slices"
	"testing"

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
	if err != nil {
		t.Fatal(err)
	}

	under := search(t, u, vfs.SearchQuery{Query: "header", Path: "/repo"})
	if got, want := paths(under), []string{"/repo/net/http/header.go", "/repo/net/http/server.go"}; !slices.Equal(got, want) {
		t.Errorf("Search(header under /repo) = %v, want %v", got, want)
	}
	direct := search(t, repo, vfs.SearchQuery{Query: "header"})
	for i := range direct {
		if under[i].Score != direct[i].Score || under[i].LineNumber != direct[i].LineNumber || under[i].Snippet != direct[i].Snippet {
			t.Errorf("union hit %+v differs from the mount's %+v beyond the prefix", under[i], direct[i])
		}
	}

	all := search(t, u, vfs.SearchQuery{Query: "header"})
	if len(all) != 3 {
		t.Fatalf("Search(header at /) = %v, want the 3 indexed hits", all)
	}
	if !slices.IsSortedFunc(all, vfs.CompareSearchResults) {
		t.Errorf("Search(header at /) not by score then path: %+v", all)
	}
	top := search(t, u, vfs.SearchQuery{Query: "header", MaxResults: 2})
	if !slices.Equal(top, all[:2]) {
		t.Errorf("Search(header at /, max 2) = %+v, want %+v", top, all[:2])
	}

	// A write through the union reaches the mount's index.
	if err := u.Write(t.Context(), "/notes/new.md", []byte("a quokka\n")); err != nil {
		t.Fatal(err)
	}
	if got := paths(search(t, u, vfs.SearchQuery{Query: "quokka"})); !slices.Equal(got, []string{"/notes/new.md"}) {
		t.Errorf("Search(quokka) after a union write = %v", got)
	}
}
