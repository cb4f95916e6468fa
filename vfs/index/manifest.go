package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/julyfs/julyfs/vfs"
)

// The manifest file (manifestFile in the index directory) is a copy of the
// manifest the index's documents hold (every path with its size, mtime,
// etag and state), plus the modification time of every directory the tree
// had at the last Sync. It exists to make the freshness check of a
// one-shot command cheap: reading it costs milliseconds where reading the
// manifest back from the index's stored fields costs a pass over every
// document, and the directory times say which directories can hold new
// files (see [FS.quickScan]).
//
// It is a cache, never the truth: it is written after a Sync, once
// everything it describes is persisted in the index, and a missing,
// damaged or foreign one is ignored (the manifest is then read from the
// index and the tree walked whole). A manifest older than the index (the
// process wrote through the FS afterwards, or stopped before writing it)
// is safe: every file it lists is stat'ed and compared, so a file changed
// since is read again; files it does not list are looked for in every
// directory whose time changed since it was written, which is every
// directory a file was created in or renamed into since.
const (
	manifestFile  = "julyfs-manifest"
	manifestMagic = "julyfs-manifest 1\n"
)

// manifest is the state of the tree the index holds.
type manifest struct {
	// dirs maps each directory of the tree ("/" included, skipped ones
	// left out) to its modification time in UnixNano as stat'ed before it
	// was listed; 0 when unknown or too recent to trust (see racy), which
	// makes the next quick scan list it.
	dirs map[string]int64
	// files maps each file the index has a document for to its entry,
	// but for the files of the directories in blobs.
	files map[string]entry
	// blobs holds the file records of directories not decoded, as read
	// from the manifest file: a quick scan decodes only the directories it
	// lists (or all of them when it stats every file), and writes the
	// others back as they were.
	blobs map[string]rawDir
	// nfiles is the number of files of a manifest read from its file.
	nfiles int
}

// rawDir is the encoded file records of one directory.
type rawDir struct {
	n int
	b []byte
}

func newManifest() *manifest {
	return &manifest{dirs: map[string]int64{}, files: map[string]entry{}, blobs: map[string]rawDir{}}
}

// racyWindow: a directory whose modification time is this close to the
// start of the scan that recorded it may change again within the same
// timestamp tick (Linux stamps directories with a coarse clock, ticks of
// up to 10 ms) without its time changing, so it is recorded as unknown
// and listed again at the next quick scan, as git treats "racily clean"
// index entries.
const racyWindow = 2 * time.Second

// dirTime is the time to record for a directory with modification time
// mt, stat'ed during a scan that started at start.
func dirTime(mt time.Time, start time.Time) int64 {
	if mt.IsZero() || !mt.Before(start.Add(-racyWindow)) {
		return 0
	}
	return mt.UnixNano()
}

// The file: manifestMagic, the number of directories, then per directory
// its path, time, number of files and the length of its file records
// followed by them (per file: its base name, size, mtime, state byte and
// etag), and a CRC-32 (IEEE) of everything before it. Strings are a
// uvarint length and the bytes; numbers varints. Directories are read
// first and their file records only when needed: a check that finds no
// directory changed never decodes a file.

// readManifest reads the manifest file of dir, its directories only; ok
// is false when there is none or it cannot be used.
func readManifest(dir string) (*manifest, bool) {
	raw, err := os.ReadFile(filepath.Join(dir, manifestFile))
	if err != nil || len(raw) < len(manifestMagic)+4 || string(raw[:len(manifestMagic)]) != manifestMagic {
		return nil, false
	}
	body, sum := raw[:len(raw)-4], binary.LittleEndian.Uint32(raw[len(raw)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, false
	}
	r := &manifestReader{b: body[len(manifestMagic):]}
	nd := r.uvarint()
	if nd > uint64(len(r.b)) {
		return nil, false
	}
	m := &manifest{dirs: make(map[string]int64, nd), files: map[string]entry{}, blobs: make(map[string]rawDir, nd)}
	for range nd {
		d := r.str()
		m.dirs[d] = r.varint()
		nf := int(r.uvarint())
		n := r.uvarint()
		if n > uint64(len(r.b)) || r.err {
			return nil, false
		}
		m.nfiles += nf
		m.blobs[d] = rawDir{n: nf, b: r.b[:n]}
		r.b = r.b[n:]
	}
	if r.err || len(r.b) != 0 {
		return nil, false
	}
	return m, true
}

// parseDir decodes the file records of directory d (when not decoded
// yet) into m.files and returns its files' paths; ok is false when they
// are damaged.
func (m *manifest) parseDir(d string) (paths []string, ok bool) {
	raw, found := m.blobs[d]
	if !found {
		return nil, true
	}
	delete(m.blobs, d)
	r := &manifestReader{b: raw.b}
	for len(r.b) > 0 && !r.err {
		p := vfs.Join(d, r.str())
		var e entry
		e.size = r.varint()
		e.mtime = r.varint()
		e.state = r.byte()
		e.etag = r.str()
		m.files[p] = e
		paths = append(paths, p)
	}
	return paths, !r.err && len(paths) == raw.n
}

type manifestReader struct {
	b   []byte
	err bool
}

func (r *manifestReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *manifestReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *manifestReader) byte() byte {
	if len(r.b) == 0 {
		r.err = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *manifestReader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err, r.b = true, nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// writeManifest replaces the manifest file of dir with m, written to a
// temporary file and renamed.
func writeManifest(dir string, m *manifest) error {
	byDir := map[string][]string{}
	for p := range m.files {
		d := vfs.Parent(p)
		byDir[d] = append(byDir[d], p)
	}
	dirs := maps.Clone(m.dirs)
	for d := range byDir {
		if _, ok := dirs[d]; !ok {
			dirs[d] = 0 // not from a walk: list it next time
		}
	}
	for d := range m.blobs {
		if _, ok := dirs[d]; !ok {
			dirs[d] = 0
		}
	}
	var out []byte
	out = append(out, manifestMagic...)
	str := func(b []byte, s string) []byte {
		b = binary.AppendUvarint(b, uint64(len(s)))
		return append(b, s...)
	}
	var blob []byte
	out = binary.AppendUvarint(out, uint64(len(dirs)))
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		if raw, ok := m.blobs[d]; ok && len(byDir[d]) == 0 {
			out = str(out, d)
			out = binary.AppendVarint(out, dirs[d])
			out = binary.AppendUvarint(out, uint64(raw.n))
			out = binary.AppendUvarint(out, uint64(len(raw.b)))
			out = append(out, raw.b...)
			continue
		}
		files := byDir[d]
		slices.Sort(files)
		blob = blob[:0]
		for _, p := range files {
			e := m.files[p]
			blob = str(blob, vfs.Base(p))
			blob = binary.AppendVarint(blob, e.size)
			blob = binary.AppendVarint(blob, e.mtime)
			blob = append(blob, e.state)
			blob = str(blob, e.etag)
		}
		out = str(out, d)
		out = binary.AppendVarint(out, dirs[d])
		out = binary.AppendUvarint(out, uint64(len(files)))
		out = binary.AppendUvarint(out, uint64(len(blob)))
		out = append(out, blob...)
	}
	out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
	path := filepath.Join(dir, manifestFile)
	tmpPath := path + ".tmp"
	if err := writeFileSync(tmpPath, out); err != nil {
		os.Remove(tmpPath)
		return err
	}
	return os.Rename(tmpPath, path)
}

func writeFileSync(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// removeManifest removes the manifest file of dir.
func removeManifest(dir string) error {
	err := os.Remove(filepath.Join(dir, manifestFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}
