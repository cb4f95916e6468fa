package vfs_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
)

func TestDisplayPath(t *testing.T) {
	for in, want := range map[string]string{
		"/a/b.txt":                       "/a/b.txt",
		"/é ü/日本.md":                     "/é ü/日本.md",
		"/x.txt\nsecret.txt:1:root:FAKE": `"/x.txt\nsecret.txt:1:root:FAKE"`,
		"/bad\xff.txt":                   `"/bad\xff.txt"`,
		"/tab\there":                     `"/tab\there"`,
		"/cr\r":                          `"/cr\r"`,
		"/del\x7f":                       `"/del\x7f"`,
		"/bidi\u202etxt.exe":             `"/bidi\u202etxt.exe"`,
		"/c1\u0085":                      `"/c1\u0085"`,
		`/"quoted"`:                      `/"quoted"`,
		"/ufffd\ufffd.txt":               "/ufffd\ufffd.txt",
	} {
		got := vfs.DisplayPath(in)
		assert.Equal(t, want, got, "%q", in)
		assert.Equal(t, in, vfs.ParseDisplayPath(got), "round trip of %q", in)
	}
	assert.Equal(t, `"unterminated`, vfs.ParseDisplayPath(`"unterminated`))
	assert.Equal(t, `"`, vfs.ParseDisplayPath(`"`))
}

// FuzzDisplayPath: any string round-trips, and a displayed path is one
// line of valid UTF-8.
func FuzzDisplayPath(f *testing.F) {
	for _, s := range []string{"/a", "/a\nb", "/\xff", `"/x"`, "/\u2028", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		d := vfs.DisplayPath(p)
		if len(p) > 0 && p[0] == '/' || p == "" {
			require.Equal(t, p, vfs.ParseDisplayPath(d), "ParseDisplayPath(DisplayPath(%q))", p)
		}
		for _, r := range d {
			if r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xfffd && !containsFFFD(p) {
				require.Failf(t, "control rune in DisplayPath", "DisplayPath(%q) = %q holds %U", p, d, r)
			}
		}
	})
}

func containsFFFD(s string) bool {
	for _, r := range s {
		if r == 0xfffd {
			return true
		}
	}
	return false
}
