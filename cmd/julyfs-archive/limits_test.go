package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs"
)

// bombLine is line i of a zip bomb's entry: the same line again and
// again, with a numbered one every 100000 lines for grep to find.
func bombLine(i int) string {
	if i%100000 == 0 {
		return fmt.Sprintf("marker %09d\n", i)
	}
	return "the same line again and again, as a bomb has it.\n"
}

// writeBomb writes a zip of one entry, /big.log, of at least size bytes of
// repeated lines, streaming it (the test holds no more than a buffer).
func writeBomb(t *testing.T, path string, size int64) (sum []byte, n int64) {
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	zw := zip.NewWriter(f)
	w, err := zw.Create("big.log")
	require.NoError(t, err)
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(w, h), 1<<20)
	for i := 0; n < size; i++ {
		k, _ := bw.WriteString(bombLine(i))
		n += int64(k)
	}
	require.NoError(t, bw.Flush())
	require.NoError(t, zw.Close())
	return h.Sum(nil), n
}

func openPlugin(t *testing.T, args map[string]string) plugins.FS {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	fsys, err := plugins.OpenConfig(ctx, plugins.Config{Path: pluginBin, Args: args, Logger: hclog.NewNullLogger()})
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	return fsys
}

// peakRSS is the peak resident size of process pid (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// TestZipBomb: a small zip whose entry expands a thousandfold is refused
// by max-ratio (and by max-entry-size), naming the limit; with the
// limits raised it is streamed: read by range and grepped with the
// plugin's peak RSS far below the entry's size.
func TestZipBomb(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to measure the plugin")
	}
	const size = 128 << 20
	path := filepath.Join(t.TempDir(), "bomb.zip")
	sum, n := writeBomb(t, path, size)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Less(t, fi.Size()*200, n, "the zip expands more than 200 times")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	def := openPlugin(t, map[string]string{"file": path, "cache": "off"})
	_, err = vfs.ReadAt(ctx, def, "/big.log", make([]byte, 10), 0)
	assert.ErrorContains(t, err, "/big.log: the entry expands ")
	assert.ErrorContains(t, err, ", over this mount's max-ratio=200 (raise it with ?max-ratio=N, 0 for no limit)")
	sized := openPlugin(t, map[string]string{"file": path, "cache": "off", "max-ratio": "0", "max-entry-size": "64M"})
	_, err = vfs.ReadAt(ctx, sized, "/big.log", make([]byte, 10), 0)
	assert.ErrorContains(t, err, fmt.Sprintf("the entry is %d bytes, over this mount's max-entry-size=67108864 (raise it with ?max-entry-size=BYTES)", n))

	fsys := openPlugin(t, map[string]string{"file": path, "cache": "off", "max-ratio": "0"})
	_, err = fsys.Read(ctx, "/big.log")
	assert.ErrorContains(t, err, "over this mount's max-read=67108864 for a whole read")
	r, err := vfs.OpenFile(ctx, fsys, "/big.log")
	require.NoError(t, err)
	h := sha256.New()
	buf := make([]byte, 1<<20)
	for off := int64(0); ; {
		k, err := r.ReadAt(buf, off)
		h.Write(buf[:k])
		off += int64(k)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	assert.Equal(t, sum, h.Sum(nil), "the entry read by range")
	var hits []vfs.GrepResult
	for hit, err := range fsys.Grep(ctx, vfs.GrepQuery{Pattern: "^marker 002000000$", MaxLineBytes: 200}) {
		require.NoError(t, err)
		hits = append(hits, hit)
	}
	require.Len(t, hits, 1)
	assert.Equal(t, 2000001, hits[0].LineNumber)
	pid := plugins.Unwrap(fsys).Pid()
	require.NotZero(t, pid)
	assert.Less(t, peakRSS(t, pid), int64(size/4), "the plugin's peak RSS after reading and grepping a %d MiB entry", size>>20)
}

// TestZipEntryPastDeclaredSize: an entry whose deflate stream holds more
// than its declared size is refused when read, not passed on.
func TestZipEntryPastDeclaredSize(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	var raw bytes.Buffer
	fw, err := flate.NewWriter(&raw, flate.BestCompression)
	require.NoError(t, err)
	fw.Write(data)
	require.NoError(t, fw.Close())
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "liar.txt", Method: zip.Deflate, CompressedSize64: uint64(raw.Len()), UncompressedSize64: 100, CRC32: crc32.ChecksumIEEE(data[:100])})
	require.NoError(t, err)
	w.Write(raw.Bytes())
	require.NoError(t, zw.Close())
	path := filepath.Join(t.TempDir(), "liar.zip")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	fsys, err := openArchive(path, "")
	require.NoError(t, err)
	_, err = fsys.Read(t.Context(), "/liar.txt")
	assert.EqualError(t, err, "/liar.txt: the entry expands past its declared size")
}

// writeTar writes a tar of n small files in d dirs.
func writeTar(t *testing.T, path string, n int) {
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	tw := tar.NewWriter(bw)
	for i := range n {
		data := []byte(strconv.Itoa(i) + "\n")
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("d%03d/f%07d.txt", i%100, i), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}))
		_, err := tw.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, bw.Flush())
}

// TestTarIndexCache: the index of a tar is kept in the cache directory
// and used by the next open of the unchanged archive (here proved by
// overwriting the archive's headers while keeping its size and mtime,
// which the cache key is made of: the cached index still answers); a
// damaged cached index is rebuilt; max-entries refuses a larger archive.
func TestTarIndexCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "many.tar")
	const n = 20000
	writeTar(t, path, n)
	cache := filepath.Join(dir, "cache")
	ctx := t.Context()
	count := func(fsys vfs.FileSystem) int {
		total := 0
		for e, err := range vfs.Walk(ctx, fsys.List, "/", 0) {
			require.NoError(t, err)
			if e.Kind == vfs.KindFile {
				total++
			}
		}
		return total
	}
	fsys, err := openArchiveFS(path, "", cache, defaultLimits)
	require.NoError(t, err)
	assert.Equal(t, n, count(fsys))
	data, err := fsys.Read(ctx, "/d042/f0012342.txt")
	require.NoError(t, err)
	assert.Equal(t, "12342\n", string(data))
	fsys.Close()
	idx, err := filepath.Glob(filepath.Join(cache, "*.idx"))
	require.NoError(t, err)
	require.Len(t, idx, 1, "one cached index")

	// Same size and mtime, headers gone: only the cache knows the entries.
	fi, err := os.Stat(path)
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(make([]byte, 512), 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.Chtimes(path, fi.ModTime(), fi.ModTime()))
	fsys, err = openArchiveFS(path, "", cache, defaultLimits)
	require.NoError(t, err)
	assert.Equal(t, n, count(fsys), "answered from the cached index")
	fsys.Close()

	// A damaged index is ignored and the archive indexed again.
	writeTar(t, path, n)
	require.NoError(t, os.Chtimes(path, fi.ModTime(), fi.ModTime()))
	require.NoError(t, os.WriteFile(idx[0], []byte("garbage"), 0o644))
	fsys, err = openArchiveFS(path, "", cache, defaultLimits)
	require.NoError(t, err)
	assert.Equal(t, n, count(fsys))
	fsys.Close()

	lim := defaultLimits
	lim.maxEntries = 1000
	_, err = openArchiveFS(path, "", cache, lim)
	assert.ErrorContains(t, err, "the archive has more than 1000 entries, over this mount's max-entries=1000 (raise it with ?max-entries=N)")
	_, err = openArchiveFS(path, "", "", lim)
	assert.ErrorContains(t, err, "over this mount's max-entries=1000")
}

// TestTgzBomb: a tar.gz that expands past max-ratio is refused at the
// mount, naming the limit.
func TestTgzBomb(t *testing.T) {
	big := bytes.Repeat([]byte("a"), 8<<20)
	path := filepath.Join(t.TempDir(), "bomb.tar.gz")
	require.NoError(t, os.WriteFile(path, gz(t, tarOf(t, map[string][]byte{"big.txt": big})), 0o644))
	_, err := openArchive(path, "")
	assert.ErrorContains(t, err, "over this mount's max-ratio=200 (raise it with ?max-ratio=N, 0 for no limit)")
	lim := defaultLimits
	lim.maxRatio = 0
	fsys, err := openArchiveFS(path, "", "", lim)
	require.NoError(t, err)
	data, err := fsys.Read(t.Context(), "/big.txt")
	require.NoError(t, err)
	assert.Equal(t, big, data)
}

// TestZipMaxEntries: a zip declaring more entries than max-entries is
// refused before its directory is read.
func TestZipMaxEntries(t *testing.T) {
	files := map[string][]byte{}
	for i := range 50 {
		files[fmt.Sprintf("f%02d.txt", i)] = []byte("x")
	}
	path := filepath.Join(t.TempDir(), "many.zip")
	require.NoError(t, os.WriteFile(path, zipOf(t, files), 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(t, err)
	n, ok := zipCount(f, fi.Size())
	assert.True(t, ok)
	assert.Equal(t, uint64(50), n)
	lim := defaultLimits
	lim.maxEntries = 10
	_, err = openArchiveFS(path, "", "", lim)
	assert.ErrorContains(t, err, "the archive has more than 10 entries, over this mount's max-entries=10 (raise it with ?max-entries=N)")
	lim.maxEntries = 50
	fsys, err := openArchiveFS(path, "", "", lim)
	require.NoError(t, err)
	fsys.Close()
}
