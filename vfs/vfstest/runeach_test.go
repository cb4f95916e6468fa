package vfstest_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

func TestRunEachReference(t *testing.T) {
	var results []vfstest.Result
	vfstest.RunEach(t.Context(), func(files map[string][]byte) (vfs.FileSystem, error) {
		return vfstest.NewReference(files), nil
	}, vfstest.Options{}, vfstest.EachOptions{Run: regexp.MustCompile(`^List/`)}, func(r vfstest.Result) {
		results = append(results, r)
	})
	require.NotEmpty(t, results)
	for _, r := range results {
		assert.True(t, strings.HasPrefix(r.Name, "List/"), r.Name)
		assert.Empty(t, r.Failures, r.Name)
		assert.Equal(t, "ok   "+r.Name, r.String())
	}
}

// hangingStat never answers Stat until released.
type hangingStat struct {
	vfs.FileSystem
	release chan struct{}
}

func (h hangingStat) Stat(context.Context, string) (vfs.FileInfo, error) {
	<-h.release
	return vfs.FileInfo{}, nil
}

func TestRunEachBoundsAHungCheck(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var results []vfstest.Result
	vfstest.RunEach(t.Context(), func(files map[string][]byte) (vfs.FileSystem, error) {
		return hangingStat{vfstest.NewReference(files), release}, nil
	}, vfstest.Options{}, vfstest.EachOptions{Run: regexp.MustCompile(`^Stat/`), Timeout: 100 * time.Millisecond}, func(r vfstest.Result) {
		results = append(results, r)
	})
	require.NotEmpty(t, results)
	for _, r := range results {
		require.NotEmpty(t, r.Failures, r.Name)
		assert.Contains(t, r.Failures[len(r.Failures)-1], "no answer within 100ms (abandoned)")
		assert.True(t, strings.HasPrefix(r.String(), "FAIL "+r.Name+": "), r.String())
	}
}
