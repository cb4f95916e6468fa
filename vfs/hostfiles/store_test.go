package hostfiles_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/julyfs/julyfs/vfs/hostfiles"
)

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"/notes/today.md": "/notes/today.md",
		"/naïve.md":       "/naïve.md",
		"/a\nb":           `"/a\nb"`,
		"/esc\x1b[31m":    `"/esc\x1b[31m"`,
		"/bad\xff":        `"/bad\xff"`,
	} {
		assert.Equal(t, want, hostfiles.Printable(in), "Printable(%q)", in)
	}
}

func TestKeys(t *testing.T) {
	assert.Equal(t, []string{"/a", "/a/b"}, hostfiles.Ancestors("/a/b/c"))
	assert.Empty(t, hostfiles.Ancestors("/a"))
	lo, hi := hostfiles.DirRange("/a")
	assert.Equal(t, [2]string{"/a/", "/a0"}, [2]string{lo, hi})
	for _, k := range []string{"/", "", "a", "/a/", "/a/../b", "/a\x00b", "/\xff"} {
		assert.Error(t, hostfiles.ValidKey(k), "ValidKey(%q)", k)
	}
	assert.NoError(t, hostfiles.ValidKey("/a b/ü.md"))
}
