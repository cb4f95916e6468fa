package vfs

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync"

	"github.com/gobwas/glob"
)

// Pattern is a compiled glob in the contract's dialect: gobwas/glob v1.1's
// Compiler with '/' as the separator and Globstar on, so '*' and '?' stay
// within a segment, '**' crosses directories (and "**/" also matches zero
// of them: "**/*.go" matches "a.go"), '{a,b}' alternates and '[...]' is a
// class.
type Pattern struct {
	src   string
	g     *glob.Pattern
	lit   string // leading literal segments, joined with '/'
	segs  int    // number of segments
	deep  bool   // contains "**": no depth limit
	exact bool   // fully literal
	// For a pattern "L/**/X" (L literal, maybe empty; X one segment
	// without "**"), base is X alone and under is "L/" (or ""): a path
	// matches when it lies under L and its last segment matches X. Nil
	// otherwise.
	base  *glob.Pattern
	under string

	// The pattern split into segments, for Below: built on first use.
	splitOnce sync.Once
	split     []segment
	splitOK   bool
}

// segment is one '/'-separated segment of a pattern, compiled alone.
type segment struct {
	src  string
	star bool          // the whole segment is "**": zero or more segments
	g    *glob.Pattern // nil when star
}

var globCompiler = glob.Compiler{Separators: []rune{'/'}, Globstar: true}

// Limits on a glob pattern, so that a hostile pattern cannot cost more
// than a walk: MaxPatternBytes on its length as given, MaxPatternSegments
// on its '/'-separated segments once runs of "**" segments count as one.
const (
	MaxPatternBytes    = 8192
	MaxPatternSegments = 256
)

// normalizePattern rewrites a glob pattern to an equivalent one that is
// cheaper to match: each run of consecutive "**" segments becomes one
// ("a/**/**/b" is "a/**/b": "**/" already matches zero or more
// directories). Only separators outside "{...}" and "[...]" split
// segments; everything else, leading slashes included, is kept as is.
// It is linear in the pattern's length.
func normalizePattern(pattern string) string {
	segs := splitSegments(pattern)
	out := segs[:0]
	for i, s := range segs {
		if s == "**" && i > 0 && segs[i-1] == "**" {
			continue
		}
		out = append(out, s)
	}
	if len(out) == len(segs) {
		return pattern
	}
	return strings.Join(out, "/")
}

// splitSegments splits a pattern at the separators outside braces and
// classes and not escaped.
func splitSegments(pattern string) []string {
	var segs []string
	depth, start, class := 0, 0, false
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\':
			i++
		case class:
			if c == ']' {
				class = false
			}
		case c == '[':
			class = true
		case c == '{':
			depth++
		case c == '}':
			depth--
		case c == '/' && depth == 0:
			segs = append(segs, pattern[start:i])
			start = i + 1
		}
	}
	return append(segs, pattern[start:])
}

// checkPatternSize refuses a pattern over the limits, with a message that
// says which (the pattern itself is shortened in it).
func checkPatternSize(pattern, normalized string) error {
	short := pattern
	if len(short) > 64 {
		short = short[:64] + "..."
	}
	switch {
	case len(pattern) > MaxPatternBytes:
		return &PathError{Kind: KindInvalidGlobPattern, Pattern: fmt.Sprintf("%s (%d bytes; at most %d)", short, len(pattern), MaxPatternBytes)}
	case strings.Count(normalized, "/")+1 > MaxPatternSegments:
		if n := len(splitSegments(normalized)); n > MaxPatternSegments {
			return &PathError{Kind: KindInvalidGlobPattern, Pattern: fmt.Sprintf("%s (%d segments; at most %d)", short, n, MaxPatternSegments)}
		}
	}
	return nil
}

// CompilePattern compiles a relative glob pattern (leading slashes are
// ignored). Runs of consecutive "**" segments count as one ("a/**/**/b"
// is "a/**/b": "**/" already matches zero or more directories). A
// malformed pattern fails with "invalid glob pattern: <pattern>"; one
// longer than MaxPatternBytes or with more than MaxPatternSegments
// segments fails with "invalid glob pattern: <start of pattern>... (N
// bytes; at most M)" (or segments).
func CompilePattern(pattern string) (*Pattern, error) {
	p := &Pattern{src: pattern}
	norm := normalizePattern(pattern)
	if err := checkPatternSize(pattern, norm); err != nil {
		return nil, err
	}
	rel := strings.TrimLeft(norm, "/")
	g, err := globCompiler.Compile(rel)
	if err != nil {
		return nil, InvalidGlobPattern(pattern, err)
	}
	p.g = g
	segs := strings.Split(rel, "/")
	p.segs = len(segs)
	var lit []string
	for _, s := range segs {
		if hasMeta(s) {
			break
		}
		lit = append(lit, s)
	}
	p.exact = len(lit) == len(segs)
	p.lit = strings.Join(lit, "/")
	p.deep = strings.Contains(rel, "**")
	if n := len(lit); n+2 == len(segs) && segs[n] == "**" && !strings.Contains(segs[n+1], "**") {
		if bg, err := globCompiler.Compile(segs[n+1]); err == nil {
			p.base = bg
			if n > 0 {
				p.under = p.lit + "/"
			}
		}
	}
	return p, nil
}

// String returns the source pattern.
func (p *Pattern) String() string { return p.src }

// Match reports whether rel, a path relative to the glob's dir without a
// leading slash, matches.
func (p *Pattern) Match(rel string) bool {
	if p.base != nil {
		return strings.HasPrefix(rel, p.under) && p.base.Match(rel[strings.LastIndexByte(rel, '/')+1:])
	}
	return p.g.Match(rel)
}

// LiteralPrefix returns the leading segments that hold no glob syntax, so a
// walk can start there ("src/**/*.go" gives "src").
func (p *Pattern) LiteralPrefix() string { return p.lit }

// MaxDepth returns how many segments a match can have; 0 when unlimited.
func (p *Pattern) MaxDepth() int {
	if p.deep {
		return 0
	}
	return p.segs
}

// IsLiteral reports whether the pattern names one path exactly.
func (p *Pattern) IsLiteral() bool { return p.exact }

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[]{}\`) }

// Below returns the patterns that paths under the directory rel must
// match, relative to rel, for rel/path to match p: how a composer
// rewrites a pattern for a tree mounted at rel ("repo/**/*.go" is
// "**/*.go" below "repo"). rel is '/'-separated, relative to the
// pattern's base, and has at least one segment. An empty result means
// nothing under rel can match; the result holds neither duplicates nor
// the empty pattern (which would only match rel itself). ok is false when
// p cannot be matched a segment at a time: a separator inside "{...}" or
// escaped, an empty segment, a "**" that is not a whole segment, or a
// class that can match "/" (a negated one, say); the caller then walks
// and matches whole paths with Match. Runs of "**" segments count as one
// (see [CompilePattern]), and the work is bounded by (segments+1) *
// (segments of rel+1) steps, however many "**" the pattern repeats.
func (p *Pattern) Below(rel string) (patterns []string, ok bool) {
	p.splitOnce.Do(p.compileSegments)
	if !p.splitOK {
		return nil, false
	}
	out, _ := deriveSteps(p.split, strings.Split(rel, "/"))
	return out, true
}

// compileSegments splits the pattern into compiled segments for Below
// (splitOK false when it cannot be matched a segment at a time).
func (p *Pattern) compileSegments() {
	rel := strings.TrimLeft(normalizePattern(p.src), "/")
	var srcs []string
	depth, start, class := 0, 0, -1
	for i := 0; i < len(rel); i++ {
		c := rel[i]
		switch {
		case c == '\\':
			if i+1 < len(rel) && rel[i+1] == '/' {
				return
			}
			i++
		case class >= 0:
			switch c {
			case '/':
				return
			case ']':
				g, err := globCompiler.Compile(rel[class : i+1])
				if err != nil || g.Match("/") {
					return
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
				return
			}
			srcs = append(srcs, rel[start:i])
			start = i + 1
		}
	}
	if class >= 0 || depth != 0 {
		return
	}
	srcs = append(srcs, rel[start:])
	var segs []segment
	for _, s := range srcs {
		if s == "" {
			// A rewritten pattern would lose it to the leading-slash
			// trim; the walk keeps the exact meaning.
			return
		}
		if s == "**" {
			segs = append(segs, segment{src: s, star: true})
			continue
		}
		if strings.Contains(s, "**") {
			return
		}
		g, err := globCompiler.Compile(s)
		if err != nil {
			return
		}
		segs = append(segs, segment{src: s, g: g})
	}
	p.split, p.splitOK = segs, true
}

// deriveSteps is Below over the segments segs and the segments of rel,
// also returning how many steps it took (at most (len(segs)+1) *
// (len(rel)+1)), for the test that proves the bound.
func deriveSteps(segs []segment, rel []string) (out []string, steps int) {
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
	walk(segs, rel)
	return out, steps
}

// Glob is the shared implementation of FileSystem.Glob for any tree: it
// compiles pattern, walks from the pattern's literal prefix under dir (as
// deep as the pattern can match), and yields matches in path order. An
// absolute pattern is matched against paths relative to "/" and then kept
// only under dir.
func Glob(ctx context.Context, fsys FileSystem, pattern, dir string) iter.Seq2[DirEntry, error] {
	return GlobWalk(ctx, fsys.Stat, func(ctx context.Context, dir string, maxDepth int) iter.Seq2[DirEntry, error] {
		return Walk(ctx, fsys.List, dir, maxDepth)
	}, pattern, dir)
}

// StatFunc is FileSystem.Stat as a function.
type StatFunc func(ctx context.Context, path string) (FileInfo, error)

// WalkFunc yields every entry strictly under dir in path order, at most
// maxDepth levels deep (0 or less: unlimited), as [Walk] does.
type WalkFunc func(ctx context.Context, dir string, maxDepth int) iter.Seq2[DirEntry, error]

// GlobWalk is Glob over a stat and a walk function, for adapters whose own
// walk is faster than [Walk] over their List (one that keeps directory
// handles open, say). walk must yield what Walk over the tree's List would.
func GlobWalk(ctx context.Context, stat StatFunc, walk WalkFunc, pattern, dir string) iter.Seq2[DirEntry, error] {
	return func(yield func(DirEntry, error) bool) {
		dir = Clean(dir)
		base := dir
		if strings.HasPrefix(pattern, "/") {
			base = "/"
		}
		p, err := CompilePattern(pattern)
		if err != nil {
			yield(DirEntry{}, err)
			return
		}
		under := func(path string) bool { return HasPrefix(path, dir) && path != dir }
		if p.IsLiteral() {
			target := Join(base, p.LiteralPrefix())
			if !under(target) {
				return
			}
			info, err := stat(ctx, target)
			if err != nil {
				yield(DirEntry{}, err)
				return
			}
			if info.Kind != KindMissing {
				yield(DirEntry{Path: target, Kind: info.Kind}, nil)
			}
			return
		}
		start := Join(base, p.LiteralPrefix())
		depth := 0
		if md := p.MaxDepth(); md > 0 {
			depth = md - len(Split(Clean(p.LiteralPrefix())))
		}
		for e, err := range walk(ctx, start, depth) {
			if err != nil {
				yield(DirEntry{}, err)
				return
			}
			rel, _ := Rel(e.Path, base)
			if p.Match(rel) && under(e.Path) {
				if !yield(e, nil) {
					return
				}
			}
		}
	}
}
