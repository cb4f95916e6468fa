package index_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
	"github.com/julyfs/julyfs/vfs/index/relevance"
	"github.com/julyfs/julyfs/vfs/local"
)

// relevanceFile is the relevance set over $(go env GOROOT)/src.
const relevanceFile = "../../testdata/relevance/go-src.txt"

// fullTreeEnv, when set to 1, makes TestRelevance index all of
// GOROOT/src instead of the directories holding the expected files.
const fullTreeEnv = "JULYFS_INDEX_FULL"

// goSrc is the index over GOROOT/src shared by the tests of one test
// binary (building it is the expensive part).
var goSrc struct {
	once    sync.Once
	fs      *index.FS
	queries []relevance.Query
	err     error
	dir     string
}

func TestMain(m *testing.M) {
	if os.Getenv(followerEnv) != "" {
		runFollower() // a second process of TestAskFollower
		return
	}
	code := m.Run()
	if goSrc.fs != nil {
		goSrc.fs.Close()
	}
	if goSrc.dir != "" {
		os.RemoveAll(goSrc.dir)
	}
	os.Exit(code)
}

// keepOnly returns a SkipDir that keeps only the directories in dirs
// (slash-separated, relative), their ancestors and what is under them.
func keepOnly(dirs []string) func(string) bool {
	return func(p string) bool {
		for _, d := range dirs {
			d = "/" + d
			if vfs.HasPrefix(p, d) || vfs.HasPrefix(d, p) {
				return index.DefaultSkipDir(p)
			}
		}
		return true
	}
}

func goSrcIndex(t *testing.T) (*index.FS, []relevance.Query) {
	t.Helper()
	if testing.Short() {
		t.Skip("indexes GOROOT/src; skipped with -short")
	}
	goSrc.once.Do(func() {
		goSrc.queries, goSrc.err = relevance.Load(relevanceFile)
		if goSrc.err != nil {
			return
		}
		tree, err := local.New(filepath.Join(runtime.GOROOT(), "src"))
		if err != nil {
			goSrc.err = err
			return
		}
		opts := index.Options{}
		if os.Getenv(fullTreeEnv) != "1" {
			opts.SkipDir = keepOnly(relevance.Dirs(goSrc.queries))
		}
		goSrc.dir, goSrc.err = os.MkdirTemp("", "julyfs-index-test-")
		if goSrc.err != nil {
			return
		}
		goSrc.fs, goSrc.err = index.Open(context.Background(), tree, filepath.Join(goSrc.dir, "idx"), opts)
	})
	require.NoError(t, goSrc.err)
	return goSrc.fs, goSrc.queries
}

// TestRelevance reports recall@10 and MRR of the relevance set and fails
// under recall@10 0.8.
func TestRelevance(t *testing.T) {
	f, queries := goSrcIndex(t)
	t.Logf("index: %v", f.Stats())
	rep, err := relevance.Evaluate(t.Context(), f, "/", queries, 10)
	require.NoError(t, err)
	for line := range strings.SplitSeq(rep.String(), "\n") {
		t.Log(line)
	}
	assert.GreaterOrEqual(t, rep.Recall, 0.8, "recall@10 = %.3f, want >= 0.8", rep.Recall)
	// Within its package, the file defining an identifier is among the
	// first, with the line.
	var found bool
	for r, err := range f.Search(t.Context(), vfs.SearchQuery{Query: "ReadMIMEHeader", Path: "/net/textproto", MaxResults: 3}) {
		require.NoError(t, err)
		if r.Path == "/net/textproto/reader.go" {
			found = true
			assert.NotZero(t, r.LineNumber, "Search(ReadMIMEHeader) hit %+v lacks the line", r)
			assert.Contains(t, r.Snippet, "ReadMIMEHeader", "Search(ReadMIMEHeader) hit %+v lacks the line", r)
		}
	}
	assert.True(t, found, "Search(ReadMIMEHeader in /net/textproto) misses reader.go in the top 3")
}

func TestRelevanceScope(t *testing.T) {
	f, _ := goSrcIndex(t)
	var got []string
	for r, err := range f.Search(t.Context(), vfs.SearchQuery{Query: "header", Path: "/net/http", MaxResults: 50}) {
		require.NoError(t, err)
		assert.True(t, vfs.HasPrefix(r.Path, "/net/http"), "Search(header in /net/http) yielded %s", r.Path)
		got = append(got, r.Path)
	}
	assert.Contains(t, got, "/net/http/header.go", "Search(header in /net/http), want header.go")
}
