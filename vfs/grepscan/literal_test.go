package grepscan

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// randomRegexp builds a random pattern from a small grammar rich in
// literals, case folding, repetition and alternation.
func randomRegexp(r *rand.Rand, depth int) string {
	atoms := []string{"a", "b", "ab", "k", "s", "K", "S", "\u00e9", "TODO", "x", "[ab]", ".", `\d`, "^", "$", `\b`, "(?i:k)", "(?i:ab)"}
	if depth <= 0 {
		return atoms[r.IntN(len(atoms))]
	}
	switch r.IntN(7) {
	case 0:
		return randomRegexp(r, depth-1) + randomRegexp(r, depth-1)
	case 1:
		return randomRegexp(r, depth-1) + "|" + randomRegexp(r, depth-1)
	case 2:
		return "(" + randomRegexp(r, depth-1) + ")" + []string{"*", "+", "?", "{2}", "{1,3}", "{0,2}"}[r.IntN(6)]
	case 3:
		return "(?:" + randomRegexp(r, depth-1) + ")"
	case 4:
		return randomRegexp(r, depth-1) + randomRegexp(r, depth-1) + randomRegexp(r, depth-1)
	}
	return atoms[r.IntN(len(atoms))]
}

func randomLine(r *rand.Rand) string {
	alphabet := []string{"a", "b", "A", "B", "k", "K", "s", "S", "\u212a", "\u017f", "\u00e9", "\u00c9", "x", "1", " ", "TODO", "todo", "ab"}
	var b strings.Builder
	for range r.IntN(12) {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// containsLit reports whether line holds l, folding case (by Unicode
// rules, as the regexp does) when l is folded.
func containsLit(line string, l reqLit) bool {
	if !l.fold {
		return strings.Contains(line, l.s)
	}
	return regexp.MustCompile("(?i)" + regexp.QuoteMeta(l.s)).MatchString(line)
}

// TestRequiredLiteralsProperty: whenever a line matches a pattern, it
// holds one of the pattern's required literals. The prefilter relies on
// exactly this.
func TestRequiredLiteralsProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		pattern := randomRegexp(r, 1+r.IntN(3))
		for _, fold := range []bool{false, true} {
			flags := syntax.Perl
			prefix := "(?m)"
			if fold {
				flags |= syntax.FoldCase
				prefix = "(?mi)"
			}
			ast, err := syntax.Parse(pattern, flags)
			require.NoError(t, err, "Parse(%q)", pattern)
			lits := requiredLiterals(ast.Simplify())
			if len(lits) == 0 {
				continue
			}
			re := regexp.MustCompile(prefix + pattern)
			for range 40 {
				line := randomLine(r)
				if !re.MatchString(line) {
					continue
				}
				found := false
				for _, l := range lits {
					found = found || containsLit(line, l)
				}
				require.True(t, found, "%q (fold %v) matches %q, which holds none of its required literals %+v", pattern, fold, line, lits)

			}
		}
	}
}
