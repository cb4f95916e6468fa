package vfs

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// DisplayPath returns p as it should be printed to a person or a model,
// one path per line: p itself when it is valid UTF-8 of printable
// characters (strconv.IsPrint: letters, marks, numbers, punctuation,
// symbols and the ASCII space), else its Go-quoted form
// (strconv.Quote: "/a\nb.txt", "/bad\xff.txt"), so a name with a newline,
// another control character, a bidi override or invalid UTF-8 cannot
// forge an output line or be mangled into another name.
//
// A printed path that needs no quoting starts with '/' (or is relative);
// a quoted one starts with '"', so the two never collide, and
// [ParseDisplayPath] turns either back into p.
func DisplayPath(p string) string {
	if needsQuote(p) {
		return strconv.Quote(p)
	}
	return p
}

// needsQuote reports invalid UTF-8 or a rune that is not printable.
func needsQuote(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || !strconv.IsPrint(r) {
			return true
		}
		i += n
	}
	return false
}

// ParseDisplayPath undoes [DisplayPath]: an argument that starts with '"'
// and is a valid Go-quoted string is unquoted; anything else is returned
// as it is. (A file whose name really starts and ends with '"' is named
// with a leading slash: /"x".)
func ParseDisplayPath(s string) string {
	if len(s) >= 2 && strings.HasPrefix(s, `"`) && strings.HasSuffix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}
