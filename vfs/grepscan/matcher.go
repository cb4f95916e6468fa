package grepscan

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"strings"
)

// Matcher finds the lines of a buffer that match a grep pattern. It
// never runs the regexp once per line: a literal every match must contain
// (found with regexp/syntax) is located with a byte scan, or, for a
// literal-free pattern, the regexp runs over the whole remaining buffer;
// only the line around a candidate is then checked, and not even that when
// the pattern is nothing but its literals.
//
// Case-insensitive literals are found without lowering the buffer: the scan
// looks for both cases of the literal's rarest byte and compares the bytes
// around each hit with ASCII folding. Letters whose Unicode folding leaves
// ASCII ('k' folds with the Kelvin sign, 's' with the long s) and non-ASCII
// runes are never part of the searched literal, so the prefilter cannot
// miss a line the regexp would match.
type Matcher struct {
	re      *regexp.Regexp
	lits    []litFinder // one of these occurs in every matching line; none: no prefilter
	litOnly bool        // a line matches exactly when it holds one of lits
	// asciiLits are lits with 'k' and 's' kept, folded as ASCII: exact for
	// a buffer holding neither the Kelvin sign nor the long s. Nil when
	// no literal lost a 'k' or an 's'.
	asciiLits []litFinder
	asciiOnly bool
	dfa       *lineDFA // decides lines without the regexp; nil when too large
}

// Compile compiles a grep pattern (Go RE2 syntax, matched per line). A
// pattern that does not compile fails with the regexp package's error;
// vfs reports it as "invalid grep pattern: <pattern>".
func Compile(pattern string, caseInsensitive bool) (*Matcher, error) {
	flags := "(?m)"
	if caseInsensitive {
		flags = "(?mi)"
	}
	re, err := regexp.Compile(flags + pattern)
	if err != nil {
		return nil, err
	}
	m := &Matcher{re: re}
	parseFlags := syntax.Perl
	if caseInsensitive {
		parseFlags |= syntax.FoldCase
	}
	ast, err := syntax.Parse(pattern, parseFlags)
	if err != nil {
		return m, nil
	}
	ast = ast.Simplify()
	m.dfa = newLineDFA(ast)
	lits := requiredLiterals(ast)
	if len(lits) == 0 || len(lits) > 8 {
		return m, nil
	}
	for _, l := range lits {
		if strings.Contains(l.s, "\n") {
			return m, nil // no line holds it; the DFA or the regexp says no per line
		}
	}
	set := isLiteralSet(ast)
	m.lits, m.litOnly = litFinders(lits, set, unsafeFold)
	if ascii, only := litFinders(lits, set, nonASCII); len(ascii) > 0 && (len(m.lits) == 0 || only != m.litOnly || minLitLen(ascii) > minLitLen(m.lits)) {
		m.asciiLits, m.asciiOnly = ascii, only
	}
	return m, nil
}

// matchLine decides a candidate line with the DFA cache dc when there is
// one (and it has room), else with the regexp.
func (m *Matcher) matchLine(dc *dfaCache, line []byte) bool {
	if dc != nil {
		if match, ok := dc.matchLine(line); ok {
			return match
		}
	}
	return m.re.Match(line)
}

// Scan calls fn for each matching line of data in order, with its 1-based
// line number and the line without its "\n" (a trailing "\r" is kept).
// It stops when fn returns false. The line aliases data.
func (m *Matcher) eachLine(data []byte, fn func(lineNumber int, line []byte) bool) {
	lits, litOnly := m.lits, m.litOnly
	if m.asciiLits != nil && !hasOddFold(data) {
		lits, litOnly = m.asciiLits, m.asciiOnly
	}
	var stackState [8][3]int // per literal: next occurrence, cached byte positions
	state := stackState[:0]
	if len(lits) > len(stackState) {
		state = make([][3]int, 0, len(lits))
	}
	for range lits {
		state = append(state, [3]int{-1, -1, -1})
	}
	var dc *dfaCache
	if m.dfa != nil && !litOnly {
		dc = m.dfa.get()
		defer m.dfa.put(dc)
	}
	lineNo, counted := 1, 0
	pos := 0
	if dc != nil && len(lits) == 0 {
		if spans, ok := dc.matchLines(data); ok {
			for k := 0; k < len(spans); k += 2 {
				start, end := spans[k], spans[k+1]
				lineNo += bytes.Count(data[counted:start], []byte{'\n'})
				counted = start
				if !fn(lineNo, data[start:end]) {
					return
				}
			}
			return
		}
		dc = nil // too many states: the regexp decides
	}
	for pos < len(data) {
		var cand int
		if len(lits) > 0 {
			cand = none
			for i := range lits {
				st := &state[i]
				if st[0] == none {
					continue
				}
				if st[0] < pos {
					st[0] = lits[i].index(data, pos, (*[2]int)(st[1:]))
				}
				cand = min(cand, st[0])
			}
			if cand == none {
				return
			}
		} else {
			loc := m.re.FindIndex(data[pos:])
			if loc == nil {
				return
			}
			cand = pos + loc[0]
			if cand == len(data) && data[cand-1] == '\n' {
				return // the empty "line" after the final newline is none
			}
		}
		start := bytes.LastIndexByte(data[pos:cand], '\n') + 1 + pos
		end := bytes.IndexByte(data[cand:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += cand
		}
		line := data[start:end]
		if litOnly || m.matchLine(dc, line) {
			lineNo += bytes.Count(data[counted:start], []byte{'\n'})
			counted = start
			if !fn(lineNo, line) {
				return
			}
		}
		pos = end + 1
	}
}

// hasNUL reports whether data holds a NUL byte anywhere: grep's test for a
// binary file. ripgrep stops searching a file at its first NUL and reports
// nothing from the buffer holding it, so for a file that fits its first
// buffer the two agree; grep skipping the file whole is the simpler rule.
func hasNUL(data []byte) bool { return bytes.IndexByte(data, 0) >= 0 }
