package plugins

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/julyfs/julyfs/vfs"
)

// The host checks every answer of a plugin against the contract before
// passing it on (the plugin is another program, maybe buggy, maybe
// hostile): the paths of List, Glob, Grep and Search must be clean and
// absolute and lie under what was asked (List's its immediate children),
// listings sorted by path and unique, grep hits in path then line order,
// search results in score then path order, kinds known, sizes and line
// numbers not negative, a Stat must describe the path asked for, a Read
// must send what it announced. The first answer that breaks a rule ends
// the call with one [*Error] naming the plugin and the rule
// ([ErrContract]); nothing of the bad answer reaches the caller.

// ErrContract is the cause of an error about an answer of the plugin that
// breaks the filesystem contract (for errors.Is).
var ErrContract = errors.New("broke the filesystem contract")

// violation says how an answer broke the contract.
type violation struct{ what string }

func (v *violation) Error() string        { return ErrContract.Error() + ": " + v.what }
func (v *violation) Is(target error) bool { return target == ErrContract }

func violatef(format string, args ...any) error {
	return &violation{what: fmt.Sprintf(format, args...)}
}

// quote renders a path of an answer for a message: quoted, so control
// characters and "/../" stay visible, and cut when long.
func quote(p string) string {
	if len(p) > 200 {
		p = p[:200] + "..."
	}
	return strconv.Quote(p)
}

// cleanPath checks that p is a clean absolute path.
func cleanPath(p string) error {
	if p == "" || p[0] != '/' || vfs.Clean(p) != p {
		return violatef("answered the path %s, which is not clean and absolute", quote(p))
	}
	return nil
}

// under reports whether clean p is scope or lies under it.
func under(p, scope string) bool { return vfs.HasPrefix(p, scope) }

// entryCheck checks the entries of one List or Glob stream.
type entryCheck struct {
	scope    string // the listed directory, or Glob's dir (clean)
	children bool   // List: each entry is an immediate child of scope
	last     string
	seen     bool
}

func newListCheck(prefix string) *entryCheck {
	return &entryCheck{scope: vfs.Clean(prefix), children: true}
}

func newGlobCheck(dir string) *entryCheck { return &entryCheck{scope: vfs.Clean(dir)} }

func (k *entryCheck) check(e vfs.DirEntry) error {
	if err := cleanPath(e.Path); err != nil {
		return err
	}
	switch {
	case k.children && (e.Path == "/" || vfs.Parent(e.Path) != k.scope):
		return violatef("listed %s, which is not a child of %s", quote(e.Path), quote(k.scope))
	case !k.children && (e.Path == k.scope || !under(e.Path, k.scope)):
		return violatef("answered %s, which is not under %s", quote(e.Path), quote(k.scope))
	}
	if e.Kind != vfs.KindFile && e.Kind != vfs.KindDir && (e.Kind != vfs.KindMissing || !e.Link) {
		return violatef("answered %s of kind %d, which is no kind of entry", quote(e.Path), e.Kind)
	}
	if k.seen {
		switch {
		case e.Path == k.last:
			return violatef("answered %s twice", quote(e.Path))
		case e.Path < k.last:
			return violatef("answered %s after %s: not sorted by path", quote(e.Path), quote(k.last))
		}
	}
	k.last, k.seen = e.Path, true
	return nil
}

// grepCheck checks the hits of one Grep stream.
type grepCheck struct {
	scope string
	last  vfs.GrepResult
	seen  bool
}

func newGrepCheck(q vfs.GrepQuery) *grepCheck { return &grepCheck{scope: vfs.Clean(q.Path)} }

func (k *grepCheck) check(h vfs.GrepResult) error {
	if err := cleanPath(h.Path); err != nil {
		return err
	}
	switch {
	case !under(h.Path, k.scope):
		return violatef("found a line in %s, which is not under %s", quote(h.Path), quote(k.scope))
	case h.LineNumber < 1:
		return violatef("found a line of %s at line number %d (lines count from 1)", quote(h.Path), h.LineNumber)
	case h.LineBytes < 0:
		return violatef("found a line of %s %d bytes long", quote(h.Path), h.LineBytes)
	case k.seen && vfs.CompareGrepResults(h, k.last) <= 0:
		return violatef("found %s:%d after %s:%d: not sorted by path then line", quote(h.Path), h.LineNumber, quote(k.last.Path), k.last.LineNumber)
	}
	k.last, k.seen = vfs.GrepResult{Path: h.Path, LineNumber: h.LineNumber}, true
	return nil
}

// searchCheck checks the results of one Search stream.
type searchCheck struct {
	scope string
	last  vfs.SearchResult
	seen  bool
}

func newSearchCheck(q vfs.SearchQuery) *searchCheck { return &searchCheck{scope: vfs.Clean(q.Path)} }

func (k *searchCheck) check(r vfs.SearchResult) error {
	if err := cleanPath(r.Path); err != nil {
		return err
	}
	switch {
	case !under(r.Path, k.scope):
		return violatef("found %s, which is not under %s", quote(r.Path), quote(k.scope))
	case r.LineNumber < 0:
		return violatef("found %s at line number %d", quote(r.Path), r.LineNumber)
	case r.Score != r.Score: // NaN orders nowhere
		return violatef("found %s with score NaN", quote(r.Path))
	case k.seen && vfs.CompareSearchResults(r, k.last) <= 0:
		return violatef("found %s (score %g) after %s (score %g): not by score descending, then path", quote(r.Path), r.Score, quote(k.last.Path), k.last.Score)
	}
	k.last, k.seen = vfs.SearchResult{Path: r.Path, Score: r.Score}, true
	return nil
}

// checkStat checks a Stat of asked (clean).
func checkStat(asked string, info vfs.FileInfo) error {
	switch {
	case info.Path != asked:
		return violatef("answered a Stat of %s with one of %s", quote(asked), quote(info.Path))
	case info.Kind > vfs.KindDir:
		return violatef("answered a Stat of %s with kind %d, which is no kind of entry", quote(asked), info.Kind)
	case info.Size < 0:
		return violatef("answered a Stat of %s with the size %d", quote(asked), info.Size)
	}
	return nil
}

// checkSize checks the size a Read announced.
func checkSize(path string, size int64) error {
	if size < 0 {
		return violatef("announced the size %d for %s", size, quote(path))
	}
	return nil
}
