package local_test

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

// escapeMarker is in every file outside the root and in no name or
// content the fuzzer can put inside it: seeing it through the API means
// something outside was read.
const escapeMarker = "ESCAPED"

// fuzzBytes hands out the fuzzer's bytes, zeros once they run out.
type fuzzBytes []byte

func (b *fuzzBytes) next() int {
	if len(*b) == 0 {
		return 0
	}
	c := (*b)[0]
	*b = (*b)[1:]
	return int(c)
}

func (b *fuzzBytes) pick(options []string) string { return options[b.next()%len(options)] }

// fuzzNames are the path components the fuzzer builds paths from: host
// setup uses only the plain ones; the API also gets "..", "." and "".
var (
	fuzzPlain = []string{"a", "b", "d", "e", "l1", "l2", "l3", ".julyfs-tmp-0000000000000001"}
	fuzzAny   = append(append([]string(nil), fuzzPlain...), "..", "..", ".", "")
	fuzzGlobs = []string{"**", "*", "**/*", "a/**", "../*", "*/*", "l1/**", "{a,l1}/*"}
)

// path is a host-side name under the root (1 to 3 plain components).
func (b *fuzzBytes) hostPath() string {
	n := 1 + b.next()%3
	parts := make([]string, n)
	for i := range parts {
		parts[i] = b.pick(fuzzPlain)
	}
	return strings.Join(parts, "/")
}

// apiPath is a path for the API: components that may climb, sometimes
// relative, sometimes with a trailing slash.
func (b *fuzzBytes) apiPath() string {
	n := b.next() % 5
	parts := make([]string, n)
	for i := range parts {
		parts[i] = b.pick(fuzzAny)
	}
	p := strings.Join(parts, "/")
	switch b.next() % 4 {
	case 0:
		return p
	case 1:
		return p + "/"
	}
	return "/" + p
}

// linkTarget is a symlink target: inside, outside, relative, absolute
// (through the root's real host path, its parent, a sibling sharing its
// name as a prefix).
func (b *fuzzBytes) linkTarget(real, base string) string {
	targets := []string{
		"a", "d", "d/e", "..", "../..", "../outside", "../outside/secret.txt", "../rootx/secret.txt",
		"../root/a", "l1", "d/../a", "../../root", ".", "nothing",
		real, real + "/a", real + "/d", real + "/..", real + "x", real + "x/secret.txt",
		base + "/outside", base + "/outside/secret.txt", base + "/outside/odir", real + "/l1", real + "/d/../../outside",
	}
	return b.pick(targets)
}

// snapshot describes everything under base but the root: names, kinds,
// modes, contents and link targets.
func snapshot(t *testing.T, base, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			out[p] = "error " + err.Error()
			return nil
		}
		if p == root {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			out[p] = "lstat " + err.Error()
			return nil
		}
		desc := fi.Mode().String()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			// Owners and link counts: SetOwner and Link must not reach
			// outside either.
			desc += fmt.Sprintf(" %d:%d n%d", st.Uid, st.Gid, st.Nlink)
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			desc += " -> " + target
		case fi.Mode().IsRegular():
			data, _ := os.ReadFile(p)
			desc += " " + string(data)
		}
		out[p] = desc
		return nil
	})
	return out
}

// FuzzEscape builds a random tree of files, directories and relative and
// absolute links (some pointing out of the root), then makes random calls
// through the vfs API, also swapping entries for links on the host between
// calls, and asserts that nothing outside the root was read (no outside
// content or name comes back) or changed (a snapshot of everything beside
// the root is the same after).
func FuzzEscape(f *testing.F) {
	for _, seed := range []string{
		"",
		"\x04\x02\x00\x01\x03\x04\x01\x02\x03\x00\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10",
		"\x08\x02\x04\x11\x02\x05\x12\x02\x06\x13\x01\x00\x01\x10\x06\x02\x05\x00\x01\x06\x02\x04\x00\x01\x09\x02\x04\x05\x06\x07",
		"\x10\x02\x03\x15\x02\x04\x16\x02\x05\x17\x00\x02\x01\x01\x03\x20\x06\x03\x04\x01\x06\x01\x09\x03\x04\x00\x03\x05\x00\x01",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b := fuzzBytes(data)
		base := t.TempDir()
		root := filepath.Join(base, "root")
		for dir, files := range map[string]map[string]string{
			"outside":      {"secret.txt": escapeMarker + " outside\n", "odir/ESCAPEDname": escapeMarker + "\n"},
			"rootx":        {"secret.txt": escapeMarker + " sibling\n"},
			"root":         {"a": "inside a\n", "d/e": "inside e\n"},
			"outside/odir": {"more.txt": escapeMarker + " more\n"},
		} {
			for name, content := range files {
				p := filepath.Join(base, dir, name)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
			}
		}
		real, err := filepath.EvalSymlinks(root)
		require.NoError(t, err)
		realBase := filepath.Dir(real)
		host, err := os.OpenRoot(root) // host-side setup can never escape either
		require.NoError(t, err)
		defer host.Close()
		for range b.next() % 12 {
			p := b.hostPath()
			switch b.next() % 3 {
			case 0:
				host.MkdirAll(p, 0o755)
			case 1:
				host.WriteFile(p, []byte("inside "+p+"\n"), 0o644)
			case 2:
				host.Symlink(b.linkTarget(real, realBase), p)
			}
		}
		before := snapshot(t, base, root)

		fsys, err := local.New(root)
		require.NoError(t, err)
		defer fsys.Close()
		ctx := context.Background()
		leak := func(what, got string) {
			t.Helper()
			require.NotContains(t, got, escapeMarker, "%s returned content or a name from outside the root", what)
		}
		for range b.next() % 24 {
			p := b.apiPath()
			switch op := b.next() % 23; op {
			case 0:
				st, _ := fsys.Stat(ctx, p)
				leak("Stat("+p+")", st.Path)
			case 1:
				got, _ := fsys.Read(ctx, p)
				leak("Read("+p+")", string(got))
			case 2:
				buf := make([]byte, 64)
				n, _ := fsys.ReadAt(ctx, p, buf, int64(b.next()%4))
				leak("ReadAt("+p+")", string(buf[:max(n, 0)]))
			case 3:
				for e := range fsys.List(ctx, p) {
					leak("List("+p+")", e.Path)
				}
			case 4:
				pat := b.pick(fuzzGlobs)
				for e := range fsys.Glob(ctx, pat, p) {
					leak("Glob("+pat+", "+p+")", e.Path)
				}
			case 5:
				for h := range fsys.Grep(ctx, vfs.GrepQuery{Pattern: "in|ESC|side|.", Path: p}) {
					leak("Grep("+p+")", h.Path+":"+h.Line)
				}
			case 6:
				fsys.Write(ctx, p, []byte("written\n"))
			case 7:
				fsys.WriteIf(ctx, p, []byte("cas\n"), vfs.Precondition{IfNoneMatch: b.next()%2 == 0})
			case 8:
				fsys.Delete(ctx, p)
			case 9:
				fsys.Rename(ctx, p, b.apiPath())
			case 10:
				fsys.MakeDir(ctx, p)
			case 11:
				fsys.RemoveDir(ctx, p)
			case 12:
				s, err := fsys.Stage(ctx, p, true)
				if err != nil {
					continue
				}
				buf := make([]byte, 128)
				n, _ := s.ReadAt(buf, 0)
				leak("Stage("+p+", keep)", string(buf[:max(n, 0)]))
				s.WriteAt([]byte("staged\n"), 0)
				if b.next()%2 == 0 {
					s.Commit(ctx)
				} else {
					s.Abort()
				}
			case 13:
				r, err := vfs.OpenFile(ctx, fsys, p)
				if err != nil {
					continue
				}
				got, _ := io.ReadAll(io.NewSectionReader(r, 0, 1<<16))
				r.Close()
				leak("OpenFile("+p+")", string(got))
			case 14: // the host changes between calls: an entry becomes a link
				hp := b.hostPath()
				host.RemoveAll(hp)
				host.Symlink(b.linkTarget(real, realBase), hp)
			case 15:
				fsys.Sweep(ctx)
			case 16:
				fsys.Symlink(ctx, b.linkTarget(real, realBase), p)
			case 17:
				target, _ := fsys.Readlink(ctx, p)
				leak("Readlink("+p+")", target)
			case 18:
				fsys.SetMode(ctx, p, fs.FileMode(b.next()%8)<<6|0o7)
			case 19:
				fsys.SetModTime(ctx, p, time.Unix(int64(b.next()), 0))
			case 20: // as root a real give-away; otherwise EPERM, still confined
				fsys.SetOwner(ctx, p, 65534+b.next()%2, 65534)
			case 21:
				fsys.SetLinkOwner(ctx, p, 65534, 65534+b.next()%2)
			case 22:
				fsys.Link(ctx, p, b.apiPath())
			}
		}
		assert.Equal(t, before, snapshot(t, base, root), "outside the root changed")

	})
}
