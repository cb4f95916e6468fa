package fusemount

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// The passthrough tests: on a local: mount the kernel reads and writes
// host descriptors itself (passthrough.go); what programs see must be what
// they see without it.

// passthroughModes are the two ways a local: mount runs: with
// passthrough (the default, where the kernel allows it) and without.
var passthroughModes = map[string]Options{"default": {}, "no-passthrough": {NoPassthrough: true}}

// checkPassthrough asserts that s handed the kernel descriptors when it
// runs with passthrough (the kernel allows it: root on Linux 6.9+), and
// never when it runs without.
func checkPassthrough(t *testing.T, s *Server, opts Options) {
	t.Helper()
	if opts.NoPassthrough || !s.m.pt.Load() {
		assert.Zero(t, s.m.ptFds.Load(), "descriptors handed to the kernel without passthrough")
		return
	}
	assert.NotZero(t, s.m.ptFds.Load(), "no descriptor handed to the kernel: passthrough was not used")
}

// TestPassthroughSameBytes: fio writes and verifies (crc32c) files
// through a local: mount, sequentially and at random, with passthrough
// and without; the host holds what was written.
func TestPassthroughSameBytes(t *testing.T) {
	requireFUSE(t)
	requireTool(t, "fio")
	for name, opts := range passthroughModes {
		t.Run(name, func(t *testing.T) {
			root, s := localMount(t, nil, opts)
			env := "M=" + s.Dir()
			for _, rw := range []string{"write", "randwrite"} {
				out := sh(t, `fio --name=`+rw+` --directory="$M" --rw=`+rw+` --bs=4k --size=32M --verify=crc32c --do_verify=1 --output-format=terse --terse-version=3`, env)
				if f := strings.Split(strings.TrimSpace(out), ";"); len(f) < 5 || f[4] != "0" {
					assert.Failf(t, "fio failed", "fio %s: %s", rw, out)
				}
				fi, err := os.Stat(filepath.Join(root, rw+".0.0"))
				if assert.NoError(t, err) {
					assert.Equal(t, int64(32<<20), fi.Size(), "fio's %s file on the host", rw)
				}
			}
			// Bytes written with one program read back with another,
			// through the mount and on the host.
			src := filepath.Join(t.TempDir(), "src")
			data := make([]byte, 3<<20+123)
			rand.Read(data)
			require.NoError(t, os.WriteFile(src, data, 0o644))
			sh(t, `cp "$SRC" "$M/copy" && cat "$M/copy" > "$SRC.back" && cat "$SRC" >> "$M/copy"`, env, "SRC="+src)
			back, err := os.ReadFile(src + ".back")
			require.NoError(t, err)
			assert.True(t, bytes.Equal(data, back), "the copy read back through the mount")
			onHost, err := os.ReadFile(filepath.Join(root, "copy"))
			require.NoError(t, err)
			assert.True(t, bytes.Equal(append(data, data...), onHost), "the copy and its append on the host")
			checkPassthrough(t, s, opts)
		})
	}
}

// TestPassthroughExecAfterClose: an executable written through the mount
// runs right after its writer closed it (no ETXTBSY), also when it is
// rewritten between runs.
func TestPassthroughExecAfterClose(t *testing.T) {
	requireFUSE(t)
	for name, opts := range passthroughModes {
		t.Run(name, func(t *testing.T) {
			_, s := localMount(t, nil, opts)
			out := sh(t, `for i in 1 2 3 4 5 6 7 8 9 10; do
  cp /bin/echo "$M/e$i" && "$M/e$i" new$i
  printf '#!/bin/sh\necho script%s\n' $i > "$M/s" && chmod +x "$M/s" && "$M/s"
  cp /bin/echo "$M/same" && "$M/same" same$i
done`, "M="+s.Dir())
			var want strings.Builder
			for i := 1; i <= 10; i++ {
				fmt.Fprintf(&want, "new%d\nscript%d\nsame%d\n", i, i, i)
			}
			assert.Equal(t, want.String(), out)
			checkPassthrough(t, s, opts)
		})
	}
}

// mmapChild writes a file of JULYFS_N pages through a shared writable
// mapping (the file created, sized with ftruncate, written, synced and
// closed), reopens it read-only, maps it again and checks what it wrote.
func mmapChild(file string, pages int) int {
	size := pages * os.Getpagesize()
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i*7 + i/4096)
	}
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	if err := f.Truncate(int64(size)); err != nil {
		fmt.Println("truncate:", err)
		return 1
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		fmt.Println("mmap:", err)
		return 1
	}
	copy(b, want)
	if err := syscall.Munmap(b); err != nil {
		fmt.Println("munmap:", err)
		return 1
	}
	if err := f.Close(); err != nil {
		fmt.Println("close:", err)
		return 1
	}
	f, err = os.Open(file)
	if err != nil {
		fmt.Println("reopen:", err)
		return 1
	}
	defer f.Close()
	b, err = syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		fmt.Println("mmap read-only:", err)
		return 1
	}
	defer syscall.Munmap(b)
	if !bytes.Equal(b, want) {
		fmt.Println("mapped back: other bytes")
		return 1
	}
	fmt.Println("ok")
	return 0
}

// TestPassthroughMmap: a file written through a shared mapping is on the
// host whole after close, and maps back the same, with passthrough and
// without.
func TestPassthroughMmap(t *testing.T) {
	requireFUSE(t)
	for name, opts := range passthroughModes {
		t.Run(name, func(t *testing.T) {
			root, s := localMount(t, map[string]string{"m": "old\n"}, opts)
			for _, f := range []string{"m", "new"} { // over an existing file, and a new one
				cmd, stdin, out := helper(t, "mmap", "JULYFS_FILE="+filepath.Join(s.Dir(), f), "JULYFS_N=64")
				stdin.Close()
				assert.Equal(t, "ok", readLine(t, out), "mmap of %s", f)
				assert.NoError(t, cmd.Wait())
				onHost, err := os.ReadFile(filepath.Join(root, f))
				require.NoError(t, err)
				require.Len(t, onHost, 64*os.Getpagesize())
				for i, c := range onHost {
					if c != byte(i*7+i/4096) {
						require.Failf(t, "wrong byte on the host", "%s on the host: byte %d is %d", f, i, c)
					}
				}
			}
			checkPassthrough(t, s, opts)
		})
	}
}

// TestPassthroughFailedWriteKeepsOldFile: on a disk with room enough for
// the writer to pass through, a cp larger than the disk fails (the kernel
// returns ENOSPC, which the daemon never sees) and the old file stays:
// the commit finds the disk full and refuses.
func TestPassthroughFailedWriteKeepsOldFile(t *testing.T) {
	root := smallDisk(t, 96<<20)
	host := filepath.Join(root, "old.txt")
	require.NoError(t, os.WriteFile(host, []byte("old\n"), 0o644))
	big := filepath.Join(t.TempDir(), "big")
	require.NoError(t, os.WriteFile(big, bytes.Repeat([]byte("B"), 128<<20), 0o644))
	fsys, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	s := mountT(t, fsys, Options{Passthrough: true})
	env := []string{"M=" + s.Dir(), "BIG=" + big}

	_, errOut, err := shErr(t, `cp "$BIG" "$M/old.txt"`, env...)
	assert.Error(t, err, "cp of 128 MiB onto a 96 MiB disk")
	assert.Contains(t, errOut, "No space left on device")
	got, err := os.ReadFile(host)
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(got), "host file after a failed cp")
	assert.Equal(t, "old\n", sh(t, `cat "$M/old.txt"`, env...), "the file through the mount")
	checkPassthrough(t, s, Options{Passthrough: true})

	// Nothing is left taking the space: a write of 32 MiB goes through.
	sh(t, `head -c 32M "$BIG" > "$M/old.txt"`, env...)
	fi, err := os.Stat(host)
	require.NoError(t, err)
	assert.Equal(t, int64(32<<20), fi.Size())
}

// watchWrites counts the writes fsys reports at path (vfs.ChangeWrite).
func watchWrites(t *testing.T, fsys vfs.FileSystem, path string) func() int {
	t.Helper()
	var mu sync.Mutex
	n := 0
	cancel, ok := vfs.Watch(fsys, func(c vfs.Change) {
		if c.Path == path && c.Op == vfs.ChangeWrite {
			mu.Lock()
			n++
			mu.Unlock()
		}
	})
	require.True(t, ok)
	t.Cleanup(cancel)
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// skipNoKernelPassthrough skips the test where the mount s could not pass
// through (not root, a kernel before 6.9).
func skipNoKernelPassthrough(t *testing.T, s *Server) {
	t.Helper()
	if !s.m.pt.Load() {
		t.Skip("passthrough unavailable here: " + fuseReason())
	}
}

// TestPassthroughDefault: a local: tree mounted with no options passes
// through (the kernel reads a large file and writes a new one itself);
// NoPassthrough and JULYFS_PASSTHROUGH=off turn it off; a tree without
// host descriptors (temp:) and a union, which do not ask for it, get no
// passthrough, silently.
func TestPassthroughDefault(t *testing.T) {
	requireFUSE(t)
	big := strings.Repeat("0123456789abcdef", 1<<17) // 2 MiB: above WholeFileLimit
	script := `cat "$M/big" | wc -c; printf new > "$M/new"; cat "$M/new"; echo`
	t.Run("default", func(t *testing.T) {
		_, s := localMount(t, map[string]string{"big": big}, Options{})
		skipNoKernelPassthrough(t, s)
		assert.Equal(t, "2097152\nnew\n", sh(t, script, "M="+s.Dir()))
		assert.NotZero(t, s.m.ptFds.Load(), "the default mount handed the kernel no descriptor")
	})
	for name, opts := range map[string]Options{"NoPassthrough": {NoPassthrough: true}, "JULYFS_PASSTHROUGH=off": {}} {
		t.Run(name, func(t *testing.T) {
			if opts == (Options{}) {
				t.Setenv("JULYFS_PASSTHROUGH", "off")
			}
			_, s := localMount(t, map[string]string{"big": big}, opts)
			assert.Equal(t, "2097152\nnew\n", sh(t, script, "M="+s.Dir()))
			assert.False(t, s.m.pt.Load(), "passthrough on")
			assert.Zero(t, s.m.ptFds.Load(), "descriptors handed to the kernel")
		})
	}
	t.Run("temp", func(t *testing.T) {
		s := mountT(t, temp.MustNew(map[string]string{"/big": big}), Options{})
		assert.Equal(t, "2097152\nnew\n", sh(t, script, "M="+s.Dir()))
		assert.False(t, s.m.pt.Load(), "passthrough on for temp:")
		assert.Zero(t, s.m.ptFds.Load())
	})
	t.Run("union", func(t *testing.T) {
		root := hostDir(t, map[string]string{"big": big})
		repo, err := local.New(root)
		require.NoError(t, err)
		t.Cleanup(func() { repo.Close() })
		u, err := union.New([]union.Mount{{Prefix: "/", FS: repo}, {Prefix: "/notes", FS: temp.MustNew(nil)}})
		require.NoError(t, err)
		s := mountT(t, u, Options{})
		assert.Equal(t, "2097152\nnew\n", sh(t, script, "M="+s.Dir()))
		assert.False(t, s.m.pt.Load(), "passthrough on for a union without Passthrough")
		assert.Zero(t, s.m.ptFds.Load())
	})
}

// TestPassthroughWriterSharesReader: a writer opening a file that a
// reader has open in passthrough (a file above WholeFileLimit) shares the
// reader's host file and writes it in place: the append succeeds at once,
// the open reader reads it, the host file keeps its inode, and the tree's
// watchers hear of the write at close.
func TestPassthroughWriterSharesReader(t *testing.T) {
	requireFUSE(t)
	big := strings.Repeat("x", 2<<20-4) + "one\n"
	root, s := localMount(t, map[string]string{"f": big}, Options{})
	skipNoKernelPassthrough(t, s)
	writes := watchWrites(t, s.m.fsys, "/f")
	host := filepath.Join(root, "f")
	ino := hostIno(t, host)
	out := sh(t, `exec 3<"$M/f"; echo two >> "$M/f" && echo appended; printf three >> "$M/f"; tail -c 13 <&3; echo; exec 3<&-; tail -c 13 "$M/f"`, "M="+s.Dir())
	assert.Equal(t, "appended\none\ntwo\nthree\none\ntwo\nthree", out)
	assert.Equal(t, ino, hostIno(t, host), "written in place: same host inode")
	got, err := os.ReadFile(host)
	require.NoError(t, err)
	assert.Equal(t, big+"two\nthree", string(got))
	assert.Equal(t, int64(2), s.m.ptShared.Load(), "writers that shared the reader's host file")
	assert.GreaterOrEqual(t, writes(), 2, "writes reported to the tree's watchers")
}

// TestPassthroughTailFollowsAppends: tail -f of a log through the mount
// while appends go through the mount too: every append succeeds and tail
// prints it.
func TestPassthroughTailFollowsAppends(t *testing.T) {
	requireFUSE(t)
	for name, opts := range passthroughModes {
		t.Run(name, func(t *testing.T) {
			root, s := localMount(t, map[string]string{"log": strings.Repeat("old line\n", 300000)}, opts)
			if !opts.NoPassthrough {
				skipNoKernelPassthrough(t, s)
			}
			out := sh(t, `tail -n 0 -s 0.1 -f "$M/log" > "$OUT" & tp=$!
sleep 0.3
for i in 1 2 3; do echo "appended $i" >> "$M/log" || echo "append $i failed"; done
for i in $(seq 100); do grep -q 'appended 3' "$OUT" && break; sleep 0.1; done
kill $tp; wait $tp 2>/dev/null || true; cat "$OUT"`, "M="+s.Dir(), "OUT="+filepath.Join(t.TempDir(), "out"))
			assert.Equal(t, "appended 1\nappended 2\nappended 3\n", out)
			got, err := os.ReadFile(filepath.Join(root, "log"))
			require.NoError(t, err)
			assert.True(t, strings.HasSuffix(string(got), "old line\nappended 1\nappended 2\nappended 3\n"), "the log on the host")
		})
	}
}

// TestPassthroughWriterAfterCommit: a writer's staging committed while a
// reader still has it open (the reader opened during the write) is the
// host file: a writer arriving then writes it in place, checked and
// reported, and the reader reads it.
func TestPassthroughWriterAfterCommit(t *testing.T) {
	requireFUSE(t)
	root, s := localMount(t, map[string]string{"f": "old\n"}, Options{})
	skipNoKernelPassthrough(t, s)
	writes := watchWrites(t, s.m.fsys, "/f")
	host := filepath.Join(root, "f")
	before := hostIno(t, host)
	out := sh(t, `exec 3>>"$M/f"; exec 4<"$M/f"; echo a >&3; exec 3>&-
echo b >> "$M/f" && echo appended; cat <&4; exec 4<&-; cat "$M/f"`, "M="+s.Dir())
	assert.Equal(t, "appended\nold\na\nb\nold\na\nb\n", out)
	after := hostIno(t, host)
	assert.NotEqual(t, before, after, "the first writer's staging was renamed into place")
	got, err := os.ReadFile(host)
	require.NoError(t, err)
	assert.Equal(t, "old\na\nb\n", string(got))
	assert.Equal(t, int64(1), s.m.ptShared.Load(), "writers that shared the committed staging")
	assert.GreaterOrEqual(t, writes(), 2, "the commit and the write in place reported")

	// Once every handle is gone, the next writer stages again.
	sh(t, `echo c >> "$M/f"`, "M="+s.Dir())
	assert.NotEqual(t, after, hostIno(t, host), "a writer with no handle open stages")
	got, err = os.ReadFile(host)
	require.NoError(t, err)
	assert.Equal(t, "old\na\nb\nc\n", string(got))
}

// TestPassthroughExecutableReaderCached: a reader of a large executable
// does not pass through (its host file open for writing could not be
// executed on the host), so the host can run it while the mount has it
// open, and a writer meanwhile stages as without passthrough.
func TestPassthroughExecutableReaderCached(t *testing.T) {
	requireFUSE(t)
	root, s := localMount(t, nil, Options{})
	skipNoKernelPassthrough(t, s)
	exe := filepath.Join(root, "exe")
	require.NoError(t, os.WriteFile(exe, append([]byte("#!/bin/sh\necho ran\nexit 0\n"), bytes.Repeat([]byte("#"), 2<<20)...), 0o755))
	before := s.m.ptFds.Load()
	out := sh(t, `exec 3<"$M/exe"; "$EXE"; echo '# more' >> "$M/exe" && echo appended; exec 3<&-`, "M="+s.Dir(), "EXE="+exe)
	assert.Equal(t, "ran\nappended\n", out)
	assert.Equal(t, before, s.m.ptFds.Load(), "a reader of an executable passed through")
}

// TestPassthroughSmallFileReaderShares: a reader of a file up to
// WholeFileLimit does not pass through (it is read whole and kept in the
// kernel's pages), so a writer while it is open does not wait: it writes
// through the daemon, and the reader then reads the file as committed, as
// on a local disk.
func TestPassthroughSmallFileReaderShares(t *testing.T) {
	requireFUSE(t)
	root, s := localMount(t, map[string]string{"f": "one\n"}, Options{Passthrough: true})
	if !s.m.pt.Load() {
		t.Skip("passthrough unavailable here: " + fuseReason())
	}
	before := s.m.ptFds.Load()
	out := sh(t, `exec 3<"$M/f"; echo two >> "$M/f" && echo appended; cat <&3; exec 3<&-; cat "$M/f"`, "M="+s.Dir())
	assert.Equal(t, "appended\none\ntwo\none\ntwo\n", out)
	assert.Equal(t, before, s.m.ptFds.Load(), "descriptors passed through")
	got, err := os.ReadFile(filepath.Join(root, "f"))
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\n", string(got))
}

// TestPassthroughUnion: a tree of several mounts (a local: mount at /, a
// temp: one at /notes) passes through for the local: files, also after
// files of the temp: mount (no descriptors) were read and written first.
func TestPassthroughUnion(t *testing.T) {
	requireFUSE(t)
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "f"), []byte("host\n"), 0o644))
	repo, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { repo.Close() })
	notes := temp.MustNew(map[string]string{"/n": "note\n"})
	u, err := union.New([]union.Mount{{Prefix: "/", FS: repo}, {Prefix: "/notes", FS: notes}})
	require.NoError(t, err)
	s := mountT(t, u, Options{Passthrough: true, WholeFileLimit: -1})
	if !s.m.pt.Load() {
		t.Skip("passthrough unavailable here: " + fuseReason())
	}
	env := "M=" + s.Dir()

	assert.Equal(t, "note\n", sh(t, `cat "$M/notes/n"; echo more >> "$M/notes/n"; cat "$M/notes/n" > /dev/null`, env))
	got, err := notes.Read(t.Context(), "/n")
	require.NoError(t, err)
	assert.Equal(t, "note\nmore\n", string(got), "the temp: file written through the mount")
	before := s.m.ptFds.Load()

	assert.Equal(t, "host\n", sh(t, `cat "$M/f"`, env))
	afterRead := s.m.ptFds.Load()
	assert.Greater(t, afterRead, before, "a reader of a local: file in a union did not pass through")
	sh(t, `echo appended >> "$M/f"; printf new > "$M/g"`, env)
	assert.Greater(t, s.m.ptFds.Load(), afterRead, "a writer of a local: file in a union did not pass through")
	for name, want := range map[string]string{"f": "host\nappended\n", "g": "new"} {
		data, err := os.ReadFile(filepath.Join(root, name))
		require.NoError(t, err)
		assert.Equal(t, want, string(data), "%s on the host", name)
	}
	assert.Equal(t, "host\nappended\nnew", sh(t, `cat "$M/f" "$M/g"`, env))
}

// TestPassthroughInPlace: with WriteInPlace, a writer opening an existing
// file without O_TRUNC writes the host file itself (same inode, no
// staging); fio verifies what it wrote; ftruncate and fallocate act on
// the host file; a reader opening meanwhile shares it (no ETXTBSY); a
// rewrite with O_TRUNC still stages and renames into place.
func TestPassthroughInPlace(t *testing.T) {
	requireFUSE(t)
	requireTool(t, "fio")
	root, s := localMount(t, map[string]string{"f": "0123456789\n"}, Options{Passthrough: true, WriteInPlace: true})
	if !s.m.pt.Load() {
		t.Skip("passthrough unavailable here: " + fuseReason())
	}
	env := "M=" + s.Dir()
	host := filepath.Join(root, "f")
	ino := hostIno(t, host)

	out := sh(t, `printf XY | dd of="$M/f" bs=1 seek=2 conv=notrunc status=none
exec 3<>"$M/f"; cat "$M/f"; printf Z >&3; exec 3>&-
truncate -s 6 "$M/f"; cat "$M/f"; echo
fallocate -l 64K "$M/f"; stat -c %s "$M/f"`, env)
	assert.Equal(t, "01XY456789\nZ1XY45\n65536\n", out)
	assert.Equal(t, ino, hostIno(t, host), "the file written in place keeps its inode")
	data, err := os.ReadFile(host)
	require.NoError(t, err)
	require.Len(t, data, 65536)
	assert.Equal(t, "Z1XY45", string(data[:6]), "the host file written in place")
	assert.Equal(t, make([]byte, 65536-6), data[6:], "fallocate's new space reads as zeros")

	// fio lays its file out, then reopens it O_RDWR and writes it in place.
	fout := sh(t, `fio --name=w --directory="$M" --rw=write --bs=64k --size=16M --verify=crc32c --do_verify=1 --output-format=terse --terse-version=3`, env)
	if f := strings.Split(strings.TrimSpace(fout), ";"); len(f) < 5 || f[4] != "0" {
		assert.Failf(t, "fio failed", "fio: %s", fout)
	}

	sh(t, `echo new > "$M/f"`, env)
	assert.NotEqual(t, ino, hostIno(t, host), "a rewrite with O_TRUNC is staged and renamed into place")
	data, err = os.ReadFile(host)
	require.NoError(t, err)
	assert.Equal(t, "new\n", string(data))
	checkPassthrough(t, s, Options{Passthrough: true})
}

// TestPassthroughWriterReplacedFile: while a reader passes through to a
// large file, the file is replaced at its path (a Write through the API
// renames a new file over it). The reader's node holds the replaced
// host file, which a writer must not write (a lost update) and the
// kernel lets no open of that node leave: a writer opening the name
// gets ESTALE from it, the kernel looks the name up again and opens a
// node of the new file. The append lands on the API's version at once,
// and the reader keeps reading the file it opened, as on disk.
func TestPassthroughWriterReplacedFile(t *testing.T) {
	requireFUSE(t)
	old := strings.Repeat("x", 2<<20)
	root, s := localMount(t, map[string]string{"f": old}, Options{})
	skipNoKernelPassthrough(t, s)
	reader := exec.Command("sh", "-c", `exec 3<"$0/f"; echo open; read _; cat <&3 | wc -c`, s.Dir())
	stdout, err := reader.StdoutPipe()
	require.NoError(t, err)
	stdin, err := reader.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, reader.Start())
	t.Cleanup(func() {
		reader.Process.Kill()
		reader.Wait()
	})
	out := bufio.NewReader(stdout)
	require.Equal(t, "open", readLine(t, out))
	require.NoError(t, s.m.fsys.Write(t.Context(), "/f", []byte("api\n")))
	start := time.Now()
	assert.Equal(t, "api\ntwo\n", sh(t, `echo two >> "$M/f"; cat "$M/f"`, "M="+s.Dir()))
	assert.Less(t, time.Since(start), ptWait, "the writer waited for the reader")
	got, err := os.ReadFile(filepath.Join(root, "f"))
	require.NoError(t, err)
	assert.Equal(t, "api\ntwo\n", string(got), "the API's version and the append on the host")
	fmt.Fprintln(stdin, "go")
	assert.Equal(t, strconv.Itoa(len(old)), strings.TrimSpace(readLine(t, out)), "the reader read the file it opened")
	require.NoError(t, reader.Wait())
}

// TestPassthroughSharedWritersRefusedTogether: two writers sharing the
// host file in place (a committed staging a reader still holds) both
// write, and the file is then replaced through the API: the first close
// finds the name holding another file (EIO), and so does the second,
// whose write that check covered, since the file's size had moved (the
// writes of the handles are not told apart: the kernel made them).
func TestPassthroughSharedWritersRefusedTogether(t *testing.T) {
	requireFUSE(t)
	root, s := localMount(t, map[string]string{"f": "old\n"}, Options{})
	skipNoKernelPassthrough(t, s)
	w2, w3 := sharedWriters(t, s)
	require.NoError(t, s.m.fsys.Write(t.Context(), "/f", []byte("api\n")))

	assert.ErrorIs(t, w2.Close(), syscall.EIO, "the file was replaced under the writer")
	assert.ErrorIs(t, w3.Close(), syscall.EIO, "so it was under the other writer")
	got, err := os.ReadFile(filepath.Join(root, "f"))
	require.NoError(t, err)
	assert.Equal(t, "api\n", string(got))
}

// sharedWriters opens two writers of /f (which holds "old\n") that share
// its host file in place: a writer appends "a\n" and closes while a
// reader stays open (the committed staging is the host file), and once
// its release is done (it checks what is written meanwhile), the two
// writers open and append "b\n" and "c\n".
func sharedWriters(t *testing.T, s *Server) (w2, w3 *os.File) {
	t.Helper()
	name := filepath.Join(s.Dir(), "f")
	w1, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	r, err := os.Open(name)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	_, err = w1.WriteString("a\n")
	require.NoError(t, err)
	require.NoError(t, w1.Close(), "the staging is committed; the reader holds it")
	waitWritersReleased(t, s, "f")

	w2, err = os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	t.Cleanup(func() { w2.Close() })
	w3, err = os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	t.Cleanup(func() { w3.Close() })
	require.Equal(t, int64(2), s.m.ptShared.Load(), "both writers share the committed file")
	_, err = w2.WriteString("b\n")
	require.NoError(t, err)
	_, err = w3.WriteString("c\n")
	require.NoError(t, err)
	return w2, w3
}

// uncheckable is a local: tree whose checks of writes in place cannot be
// made (not a conflict: as when the process has no descriptor left).
type uncheckable struct{ *local.FS }

func (u uncheckable) WroteInPlace(ctx context.Context, p string, f *os.File, since vfs.FileInfo) (vfs.FileInfo, bool, error) {
	st, err := f.Stat()
	if err == nil && st.Size() == since.Size && st.ModTime().Equal(since.ModTime) {
		return since, false, nil // nothing written since: nothing to check (as local's)
	}
	return vfs.FileInfo{}, false, &os.PathError{Op: "open", Path: p, Err: syscall.EMFILE}
}

// TestPassthroughSharedWritersCheckFails: when the check of writers
// sharing a file in place cannot be made, each writer's close reports
// it; none takes the writes for checked because another writer's close
// tried.
func TestPassthroughSharedWritersCheckFails(t *testing.T) {
	requireFUSE(t)
	root := hostDir(t, map[string]string{"f": "old\n"})
	fsys, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	s := mountT(t, uncheckable{fsys}, Options{Passthrough: true})
	skipNoKernelPassthrough(t, s)
	w2, w3 := sharedWriters(t, s)

	assert.Error(t, w2.Close(), "the check could not be made")
	assert.Error(t, w3.Close(), "nor could it for the other writer, whose writes are the same file's")
}

// TestCreatedInPlaceReplaced: a file created through the mount (written
// in place, by the kernel with passthrough or by the daemon without) is
// held open for writing while its name is replaced: through the API (a
// compare-and-swap commit renames a new file over it) or by a program's
// rename on the host. The name then opens the file now there, for
// reading and for writing, and a truncate(2) of the name truncates that
// file; the held handle keeps writing its own file, as on a local disk.
// Another writer of that file (opened through the descriptor's link)
// gets EIO at its close, since its writes are not in the tree; the
// creator's close sends no FLUSH and succeeds.
func TestCreatedInPlaceReplaced(t *testing.T) {
	requireFUSE(t)
	for mode, opts := range passthroughModes {
		for _, by := range []string{"api", "host"} {
			t.Run(mode+"/"+by, func(t *testing.T) {
				root, s := localMount(t, nil, opts)
				env := "M=" + s.Dir()
				host := filepath.Join(root, "f")
				w, err := os.OpenFile(filepath.Join(s.Dir(), "f"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
				require.NoError(t, err)
				t.Cleanup(func() { w.Close() })
				_, err = w.WriteString("mine\n")
				require.NoError(t, err)
				mine := hostIno(t, host)

				switch by {
				case "api":
					fi, err := s.m.fsys.Stat(t.Context(), "/f")
					require.NoError(t, err)
					_, err = s.m.fsys.(*local.FS).WriteIf(t.Context(), "/f", []byte("theirs\n"), vfs.Precondition{IfMatch: fi.ETag})
					require.NoError(t, err)
				case "host":
					tmp := filepath.Join(root, ".f.tmp")
					require.NoError(t, os.WriteFile(tmp, []byte("theirs\n"), 0o644))
					require.NoError(t, os.Rename(tmp, host))
				}
				require.NotEqual(t, mine, hostIno(t, host), "the name holds another file")

				// A descriptor's link (/proc/self/fd/N) still opens the
				// held file, as on a local disk, before and after the name
				// is looked up again.
				own := fmt.Sprintf("/proc/self/fd/%d", w.Fd())
				got, err := os.ReadFile(own)
				require.NoError(t, err, "reopening the held descriptor")
				assert.Equal(t, "mine\n", string(got))

				// The kernel still has the name at the created file's node
				// (a file replaced by a file keeps its dentry).
				sh(t, `perl -e 'truncate($ARGV[0], 3) or die "truncate: $!\\n"' "$M/f"`, env) // truncate(2): no open
				got, err = os.ReadFile(host)
				require.NoError(t, err)
				assert.Equal(t, "the", string(got), "truncate(2) of the name truncates the file there")
				assert.Equal(t, "the", sh(t, `cat "$M/f"`, env), "a reader opening the name")
				sh(t, `echo irs >> "$M/f"`, env)
				got, err = os.ReadFile(host)
				require.NoError(t, err)
				assert.Equal(t, "theirs\n", string(got), "a writer opening the name appends to the file there")

				got, err = os.ReadFile(own)
				require.NoError(t, err, "reopening the held descriptor after the name was looked up again")
				assert.Equal(t, "mine\n", string(got))

				_, err = w.WriteString("after\n")
				require.NoError(t, err, "the held handle writes its own file")
				assert.Equal(t, "mine\nafter\n", heldHostFile(t, host), "the held handle's file, which the truncate left alone")
				// A writer opened on the held file (through the
				// descriptor's link) is told at its close that its writes
				// are not in the tree; the creator's own close sends no
				// FLUSH (FOPEN_NOFLUSH) and succeeds, as on a local disk.
				w2, err := os.OpenFile(own, os.O_WRONLY|os.O_APPEND, 0)
				require.NoError(t, err, "reopening the held descriptor for writing")
				_, err = w2.WriteString("again\n")
				require.NoError(t, err)
				assert.ErrorIs(t, w2.Close(), syscall.EIO, "the second writer's writes are not in the tree")
				assert.Equal(t, "mine\nafter\nagain\n", heldHostFile(t, host), "the held file has both writers' writes")
				assert.NoError(t, w.Close(), "the creator's close")
				got, err = os.ReadFile(host)
				require.NoError(t, err)
				assert.Equal(t, "theirs\n", string(got), "the file at the name after the held handle's close")
				checkPassthrough(t, s, opts)
			})
		}
	}
}

// heldHostFile is the content of the host file that was at host, now
// replaced (unlinked), as a descriptor the daemon (this process) holds
// on it reads.
func heldHostFile(t *testing.T, host string) string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	for _, fd := range fds {
		p := filepath.Join("/proc/self/fd", fd.Name())
		if target, err := os.Readlink(p); err == nil && target == host+" (deleted)" {
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			return string(data)
		}
	}
	require.Failf(t, "no descriptor on the replaced file", "%s (deleted)", host)
	return ""
}
