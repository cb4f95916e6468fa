package union

import (
	"strings"

	"github.com/gobwas/glob"

	"github.com/julyfs/julyfs/vfs"
)

// segCompiler compiles one segment of a glob pattern in the contract's
// dialect (see vfs.CompilePattern).
var segCompiler = glob.Compiler{Separators: []rune{'/'}, Globstar: true}

// segPattern is a glob pattern split at its separators, so that it can be
// matched one path segment at a time: how a union routes a pattern that
// names mounts ("repo/**/*.go" from "/") and rewrites it for the child
// ("**/*.go" at the child's root).
type segPattern struct {
	segs []segment
}

type segment struct {
	src  string
	star bool          // the whole segment is "**": zero or more segments
	g    *glob.Pattern // nil when star
}

// splitPattern splits a (compiled, valid) glob pattern into segments. ok is
// false when the pattern cannot be matched segment by segment: a separator
// inside "{...}" or escaped, an empty segment, a "**" that is not a whole
// segment (it crosses separators from within a segment), or a character
// class that can match "/" (a negated class, say). The caller then falls back to walking.
//
// The pattern is normalized first (vfs.NormalizePattern: runs of "**"
// segments collapse), so a pattern of thousands of "**/" costs as much as
// one.
func splitPattern(pattern string) (sp segPattern, ok bool) {
	rel := strings.TrimLeft(vfs.NormalizePattern(pattern), "/")
	var srcs []string
	depth, start, class := 0, 0, -1
	for i := 0; i < len(rel); i++ {
		c := rel[i]
		switch {
		case c == '\\':
			if i+1 < len(rel) && rel[i+1] == '/' {
				return segPattern{}, false
			}
			i++
		case class >= 0:
			switch c {
			case '/':
				return segPattern{}, false
			case ']':
				g, err := segCompiler.Compile(rel[class : i+1])
				if err != nil || g.Match("/") {
					return segPattern{}, false
				}
				class = -1
			}
		case c == '[':
			class = i
		case c == '{':
			depth++
		case c == '}':
			depth--
		case c == '/':
			if depth > 0 {
				return segPattern{}, false
			}
			srcs = append(srcs, rel[start:i])
			start = i + 1
		}
	}
	if class >= 0 || depth != 0 {
		return segPattern{}, false
	}
	srcs = append(srcs, rel[start:])
	for _, s := range srcs {
		if s == "" {
			// A rewritten pattern would lose it to the leading-slash
			// trim; the walk keeps the exact meaning.
			return segPattern{}, false
		}
		if s == "**" {
			sp.segs = append(sp.segs, segment{src: s, star: true})
			continue
		}
		if strings.Contains(s, "**") {
			return segPattern{}, false
		}
		g, err := segCompiler.Compile(s)
		if err != nil {
			return segPattern{}, false
		}
		sp.segs = append(sp.segs, segment{src: s, g: g})
	}
	return sp, true
}

// derive returns the patterns that paths below the directory rel (a
// slash-separated path relative to the pattern's base, at least one
// segment) must match, relative to that directory, for rel/child to match
// the whole pattern. An empty result means no path below rel can match.
// The empty pattern is never returned: it would only match rel itself.
// The result holds no duplicates.
func (sp segPattern) derive(rel []string) []string {
	out, _ := sp.deriveSteps(rel)
	return out
}

// deriveSteps is derive, also returning how many steps it took (at most
// (segments+1) * (len(rel)+1)), for the test that proves the bound.
func (sp segPattern) deriveSteps(rel []string) (out []string, steps int) {
	seen := map[string]bool{}
	// Each (pattern suffix, rel suffix) pair is walked once: without this
	// the branches of consecutive or repeated "**" multiply.
	type state struct{ segs, rel int }
	visited := map[state]bool{}
	var walk func(segs []segment, rel []string)
	walk = func(segs []segment, rel []string) {
		st := state{len(segs), len(rel)}
		if visited[st] {
			return
		}
		visited[st] = true
		steps++
		if len(rel) == 0 {
			if len(segs) == 0 {
				return
			}
			srcs := make([]string, len(segs))
			for i, s := range segs {
				srcs[i] = s.src
			}
			q := strings.Join(srcs, "/")
			if !seen[q] {
				seen[q] = true
				out = append(out, q)
			}
			return
		}
		if len(segs) == 0 {
			return
		}
		if segs[0].star {
			walk(segs, rel[1:]) // "**" takes rel[0] and may take more
			walk(segs[1:], rel) // "**" matches no segment
			return
		}
		if segs[0].g.Match(rel[0]) {
			walk(segs[1:], rel[1:])
		}
	}
	walk(sp.segs, rel)
	return out, steps
}
