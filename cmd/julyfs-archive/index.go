package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/julyfs/julyfs/vfs"
)

// The index of an archive: one record per file and directory (the
// directories the archive implies included), sorted by parent directory
// then name, so a directory's children are one run of records and a path
// is found by binary search; then the paths. It is the same bytes in
// memory and in the cache file, which is mapped, not parsed: a command on
// an archive of a million entries whose index is cached reads a few
// pages of it.
//
//	header (headerSize bytes): magic, version, format, record count,
//	  archive size and mtime (the cache key, checked again), the
//	  decompressed size of a tar.gz
//	records (recordSize bytes each): path offset and length, parent
//	  length, kind, method, crc32, size, compressed size, data offset,
//	  mtime
//	paths
const (
	indexMagic   = "JFSAIDX\x01"
	indexVersion = 1
	headerSize   = 64
	recordSize   = 56
)

// Formats.
const (
	fmtZip = 1
	fmtTar = 2
	fmtTgz = 3
)

var formatNames = map[string]byte{"zip": fmtZip, "tar": fmtTar, "tar.gz": fmtTgz, "tgz": fmtTgz}

// entry is one record while an index is built.
type entry struct {
	path   string
	kind   vfs.EntryKind
	method uint16
	crc    uint32
	size   int64 // uncompressed
	csize  int64 // compressed (zip), else size
	off    int64 // zip, tar: offset of the data in the file; tar.gz: in the decompressed stream
	mtime  int64 // Unix nanoseconds, 0: none
}

// key orders records: parent directory, then name.
func key(p string) (parent, name string) {
	i := strings.LastIndexByte(p, '/')
	if i == 0 {
		return "/", p[1:]
	}
	return p[:i], p[i+1:]
}

func compareEntries(a, b entry) int {
	pa, na := key(a.path)
	pb, nb := key(b.path)
	return cmp.Or(strings.Compare(pa, pb), strings.Compare(na, nb))
}

// errTooMany is the refusal of an archive with more entries than allowed.
func errTooMany(max int) error {
	return fmt.Errorf("the archive has more than %d entries, over this mount's max-entries=%d (raise it with ?max-entries=N)", max, max)
}

// build indexes the archive f (size bytes) of format.
func build(f *os.File, size int64, format byte, lim limits) (entries []entry, unpacked int64, err error) {
	switch format {
	case fmtZip:
		entries, err = zipEntries(f, size, lim)
	case fmtTar:
		entries, err = tarEntries(bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 256<<10), lim, nil)
	case fmtTgz:
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 256<<10)); err != nil {
			return nil, 0, err
		}
		c := &counter{r: zr, limit: lim.expansionLimit(size)}
		entries, err = tarEntries(bufio.NewReaderSize(c, 256<<10), lim, c)
		if err == nil {
			_, err = io.Copy(io.Discard, c) // the rest of the stream counts too
		}
		unpacked = c.n
	}
	if err != nil {
		return nil, 0, err
	}
	entries = withDirs(entries)
	if len(entries) > lim.maxEntries {
		return nil, 0, errTooMany(lim.maxEntries)
	}
	return entries, unpacked, nil
}

// counter counts the bytes read through it and fails past limit (the
// expansion a mount allows a tar.gz).
type counter struct {
	r     io.Reader
	n     int64
	limit int64 // 0: none
}

// errExpands is the error of a stream that expands past its limit.
var errExpands = errors.New("expands past the limit")

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.limit > 0 && c.n > c.limit {
		return n, errExpands
	}
	return n, err
}

// zipCount reads the entry count a zip's end of central directory
// declares (zip64's when the classic record says 0xffff), so an archive
// with too many entries is refused before its directory is parsed; ok is
// false when no record is found (zip.NewReader then says what is wrong).
func zipCount(f *os.File, size int64) (n uint64, ok bool) {
	tail := make([]byte, min(size, 22+65535))
	if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil {
		return 0, false
	}
	i := bytes.LastIndex(tail, []byte("PK\x05\x06"))
	if i < 0 || i+22 > len(tail) {
		return 0, false
	}
	le := binary.LittleEndian
	n = uint64(le.Uint16(tail[i+10:]))
	if n != 0xffff {
		return n, true
	}
	if i < 20 || string(tail[i-20:i-16]) != "PK\x06\x07" {
		return n, true
	}
	var rec [40]byte
	if _, err := f.ReadAt(rec[:], int64(le.Uint64(tail[i-20+8:]))); err != nil || string(rec[:4]) != "PK\x06\x06" {
		return n, true
	}
	return le.Uint64(rec[32:]), true
}

func zipEntries(f *os.File, size int64, lim limits) ([]entry, error) {
	if n, ok := zipCount(f, size); ok && n > uint64(lim.maxEntries) {
		return nil, errTooMany(lim.maxEntries)
	}
	r, err := zip.NewReader(f, size)
	if err != nil {
		return nil, err
	}
	if len(r.File) > lim.maxEntries {
		return nil, errTooMany(lim.maxEntries)
	}
	entries := make([]entry, 0, len(r.File))
	for _, zf := range r.File {
		e := entry{path: vfs.Clean(zf.Name), kind: vfs.KindFile, method: zf.Method, crc: zf.CRC32,
			size: int64(zf.UncompressedSize64), csize: int64(zf.CompressedSize64)}
		if !zf.Modified.IsZero() {
			e.mtime = zf.Modified.UnixNano()
		}
		if strings.HasSuffix(zf.Name, "/") {
			e.kind, e.size, e.csize = vfs.KindDir, 0, 0
		} else {
			if e.size < 0 || e.csize < 0 {
				return nil, fmt.Errorf("%s: sizes out of range", zf.Name)
			}
			if zf.Flags&1 != 0 {
				e.method = methodEncrypted
			}
			if e.off, err = zf.DataOffset(); err != nil {
				return nil, fmt.Errorf("%s: %v", zf.Name, err)
			}
			if e.off+e.csize > size {
				return nil, fmt.Errorf("%s: data past the end of the file", zf.Name)
			}
		}
		if e.path != "/" {
			entries = append(entries, e)
		}
	}
	return entries, nil
}

// methodEncrypted marks an encrypted zip entry, which is listed but not read.
const methodEncrypted = 0xffff

// tarEntries indexes the tar stream br.
func tarEntries(br *bufio.Reader, lim limits, gz *counter) ([]entry, error) {
	pos := &posReader{r: br}
	tr := tar.NewReader(pos)
	var entries []entry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return entries, nil
		}
		if err != nil {
			return nil, err
		}
		e := entry{path: vfs.Clean(h.Name), off: pos.n, size: h.Size, csize: h.Size}
		if !h.ModTime.IsZero() {
			e.mtime = h.ModTime.UnixNano()
		}
		switch h.Typeflag {
		case tar.TypeDir:
			e.kind, e.size, e.csize = vfs.KindDir, 0, 0
		case tar.TypeReg, tar.TypeRegA:
			e.kind = vfs.KindFile
		default:
			continue // links, devices, sparse files: not served
		}
		if e.path == "/" {
			continue
		}
		if len(entries) >= lim.maxEntries {
			return nil, errTooMany(lim.maxEntries)
		}
		entries = append(entries, e)
		if e.kind == vfs.KindFile {
			// Read the data through (checks it is there; a tar.gz has
			// to inflate it anyway).
			if _, err := io.Copy(io.Discard, tr); err != nil {
				return nil, fmt.Errorf("%s: %w", h.Name, err)
			}
		}
	}
}

// posReader counts the bytes tar takes, so an entry's data offset is
// known when its header has been read.
type posReader struct {
	r io.Reader
	n int64
}

func (p *posReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	return n, err
}

// withDirs sorts entries, drops repeated paths (the first wins) and adds
// the directories the paths imply.
func withDirs(entries []entry) []entry {
	have := make(map[string]bool, len(entries))
	out := entries[:0]
	for _, e := range entries {
		if !have[e.path] {
			have[e.path] = true
			out = append(out, e)
		}
	}
	for _, e := range out {
		for d := vfs.Parent(e.path); d != "/" && !have[d]; d = vfs.Parent(d) {
			have[d] = true
			out = append(out, entry{path: d, kind: vfs.KindDir})
		}
	}
	slices.SortFunc(out, compareEntries)
	return out
}

// encode lays entries out as an index.
func encode(entries []entry, format byte, archSize, archMtime, unpacked int64) []byte {
	names := 0
	for _, e := range entries {
		names += len(e.path)
	}
	buf := make([]byte, headerSize+recordSize*len(entries), headerSize+recordSize*len(entries)+names)
	copy(buf, indexMagic)
	le := binary.LittleEndian
	le.PutUint32(buf[8:], indexVersion)
	buf[12] = format
	le.PutUint64(buf[16:], uint64(len(entries)))
	le.PutUint64(buf[24:], uint64(archSize))
	le.PutUint64(buf[32:], uint64(archMtime))
	le.PutUint64(buf[40:], uint64(unpacked))
	nameOff := 0
	for i, e := range entries {
		r := buf[headerSize+i*recordSize:]
		parent, _ := key(e.path)
		le.PutUint64(r[0:], uint64(nameOff))
		le.PutUint32(r[8:], uint32(len(e.path)))
		le.PutUint32(r[12:], uint32(len(parent)))
		r[16] = byte(e.kind)
		le.PutUint16(r[18:], e.method)
		le.PutUint32(r[20:], e.crc)
		le.PutUint64(r[24:], uint64(e.size))
		le.PutUint64(r[32:], uint64(e.csize))
		le.PutUint64(r[40:], uint64(e.off))
		le.PutUint64(r[48:], uint64(e.mtime))
		nameOff += len(e.path)
	}
	for _, e := range entries {
		buf = append(buf, e.path...)
	}
	return buf
}

// index is an encoded index, in memory or mapped from the cache.
type index struct {
	data     []byte
	n        int
	format   byte
	unpacked int64
	names    []byte
}

var errCorrupt = errors.New("the cached index is damaged")

// decode checks the header of an index for an archive of size and mtime.
func decode(data []byte, size, mtime int64) (*index, error) {
	le := binary.LittleEndian
	if len(data) < headerSize || string(data[:8]) != indexMagic || le.Uint32(data[8:]) != indexVersion {
		return nil, errCorrupt
	}
	n := le.Uint64(data[16:])
	if n > uint64(len(data)-headerSize)/recordSize {
		return nil, errCorrupt
	}
	if int64(le.Uint64(data[24:])) != size || int64(le.Uint64(data[32:])) != mtime {
		return nil, errCorrupt // another version of the archive
	}
	ix := &index{data: data, n: int(n), format: data[12], unpacked: int64(le.Uint64(data[40:]))}
	ix.names = data[headerSize+recordSize*ix.n:]
	return ix, nil
}

// record is one decoded record.
type record struct {
	path string
	entry
	parentLen int
}

// at returns record i; ok is false for a damaged record.
func (ix *index) at(i int) (record, bool) {
	le := binary.LittleEndian
	r := ix.data[headerSize+i*recordSize : headerSize+(i+1)*recordSize]
	off, n, pl := le.Uint64(r[0:]), uint64(le.Uint32(r[8:])), int(le.Uint32(r[12:]))
	if off > uint64(len(ix.names)) || n > uint64(len(ix.names))-off || uint64(pl) > n || n < 2 {
		return record{}, false
	}
	p := string(ix.names[off : off+n])
	rec := record{path: p, parentLen: pl, entry: entry{
		path: p, kind: vfs.EntryKind(r[16]), method: le.Uint16(r[18:]), crc: le.Uint32(r[20:]),
		size: int64(le.Uint64(r[24:])), csize: int64(le.Uint64(r[32:])), off: int64(le.Uint64(r[40:])), mtime: int64(le.Uint64(r[48:])),
	}}
	if rec.size < 0 || rec.csize < 0 || rec.off < 0 || (rec.kind != vfs.KindFile && rec.kind != vfs.KindDir) {
		return record{}, false
	}
	return rec, true
}

// keyAt returns the parent and name of record i without copying.
func (ix *index) keyAt(i int) (parent, name []byte, ok bool) {
	le := binary.LittleEndian
	r := ix.data[headerSize+i*recordSize:]
	off, n, pl := le.Uint64(r[0:]), uint64(le.Uint32(r[8:])), uint64(le.Uint32(r[12:]))
	if off > uint64(len(ix.names)) || n > uint64(len(ix.names))-off || pl > n || n < 2 {
		return nil, nil, false
	}
	p := ix.names[off : off+n]
	if pl == 1 {
		return p[:1], p[1:], true
	}
	return p[:pl], p[pl+1:], true
}

// search returns the first record not before (parent, name).
func (ix *index) search(parent, name string) (int, error) {
	bad := false
	bp, bn := []byte(parent), []byte(name)
	lo, hi := 0, ix.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		p, n, ok := ix.keyAt(mid)
		if !ok {
			bad = true
			break
		}
		if c := cmp.Or(bytes.Compare(p, bp), bytes.Compare(n, bn)); c < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if bad {
		return 0, errCorrupt
	}
	return lo, nil
}
