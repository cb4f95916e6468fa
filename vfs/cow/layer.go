package cow

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// The layer directory:
//
//	blobs/ab/abcd…   file contents, named by SHA-256, read-only, never changed
//	tmp/             stagings and blobs being written (emptied at Open)
//	head.json        {"gen": N, "entries": […]}: the layer at the last Compact or Reset
//	journal.ndjson   {"gen": N}, then one line per change since: batches of ops
//
// A change is appended to the journal (one write(2) of one line) before it
// is made in memory, so a process killed at any point reopens to every
// change it reported done; a torn last line is a change that was never
// reported and is dropped. head.json is replaced atomically (temporary
// file, fsync, rename, fsync of the directory) and names a new
// generation; a journal of another generation is stale and ignored, so a
// crash between writing head.json and starting the new journal loses
// nothing.

const (
	headFile    = "head.json"
	journalFile = "journal.ndjson"
	blobsDir    = "blobs"
	tmpDir      = "tmp"
)

// head is the contents of head.json.
type head struct {
	Gen     int64   `json:"gen"`
	Entries []Entry `json:"entries"`
}

type journalLine struct {
	Gen int64 `json:"gen,omitempty"`
	Ops []op  `json:"ops,omitempty"`
}

// blobStore is the layer's content-addressed store.
type blobStore struct {
	dir string // the layer directory
	mu  sync.Mutex
	// unsynced are blobs written since the last sync: what a checkpoint
	// must make durable before its manifest names them.
	unsynced map[string]bool
}

// BlobPath returns the path of the blob named hash in the layer directory
// dir.
func BlobPath(dir, hash string) string {
	return filepath.Join(dir, blobsDir, hash[:2], hash)
}

func (b *blobStore) path(hash string) string { return BlobPath(b.dir, hash) }

// put stores data and returns its hash.
func (b *blobStore) put(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	if _, err := os.Lstat(b.path(h)); err == nil {
		return h, nil
	}
	f, err := os.CreateTemp(filepath.Join(b.dir, tmpDir), "blob-")
	if err != nil {
		return "", err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", werr
	}
	return h, b.publish(f.Name(), h)
}

// publish moves the file at tmp into the store as hash.
func (b *blobStore) publish(tmp, h string) error {
	if err := os.Chmod(tmp, 0o444); err != nil {
		os.Remove(tmp)
		return err
	}
	dst := b.path(h)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	b.mu.Lock()
	if b.unsynced == nil {
		b.unsynced = map[string]bool{}
	}
	b.unsynced[h] = true
	b.mu.Unlock()
	return nil
}

// sync makes every blob written since the last sync durable.
func (b *blobStore) sync() error {
	b.mu.Lock()
	pending := b.unsynced
	b.unsynced = nil
	b.mu.Unlock()
	dirs := map[string]bool{}
	for h := range pending {
		if err := fdatasyncPath(b.path(h)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			b.mu.Lock()
			if b.unsynced == nil {
				b.unsynced = map[string]bool{}
			}
			for h := range pending {
				b.unsynced[h] = true
			}
			b.mu.Unlock()
			return err
		}
		dirs[filepath.Dir(b.path(h))] = true
	}
	for d := range dirs {
		if err := fsyncPath(d); err != nil {
			return err
		}
	}
	return nil
}

// fdatasyncPath flushes the file at p's data (and the size, not its
// times): what a blob needs to survive a crash.
func fdatasyncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Fdatasync(int(f.Fd()))
}

func fsyncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// WriteFileAtomic writes data to path through a temporary file beside it,
// fsynced and renamed into place, then fsyncs the directory: a reader (or
// a reopen after a crash) sees the old file or the new, never a part.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
		return werr
	}
	return fsyncPath(dir)
}

func journalPath(dir string) string { return filepath.Join(dir, journalFile) }

// readHead reads the layer's head.json; a layer without one is empty, at
// generation 0.
func readHead(dir string) (head, error) {
	data, err := os.ReadFile(filepath.Join(dir, headFile))
	if errors.Is(err, fs.ErrNotExist) {
		return head{}, nil
	}
	if err != nil {
		return head{}, err
	}
	var h head
	if err := json.Unmarshal(data, &h); err != nil {
		return head{}, fmt.Errorf("%s: %w", filepath.Join(dir, headFile), err)
	}
	for _, e := range h.Entries {
		if msg := validEntry(e); msg != "" {
			return head{}, fmt.Errorf("%s: %s", filepath.Join(dir, headFile), msg)
		}
	}
	return h, nil
}

// writeHead replaces head.json and starts an empty journal of its
// generation.
func writeHead(dir string, h head) error {
	if h.Entries == nil {
		h.Entries = []Entry{}
	}
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(filepath.Join(dir, headFile), data); err != nil {
		return err
	}
	line, _ := json.Marshal(journalLine{Gen: h.Gen})
	return WriteFileAtomic(filepath.Join(dir, journalFile), append(line, '\n'))
}

// readJournal returns the op batches of the journal of generation gen; a
// journal of another generation, or none, has none. A torn last line is
// dropped; a bad line before the last is an error.
func readJournal(dir string, gen int64) ([][]op, error) {
	p := filepath.Join(dir, journalFile)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	lines := bytes.Split(data, []byte("\n"))
	// The last piece is "" after a final newline, else a torn line: a
	// change never reported done.
	lines = lines[:len(lines)-1]
	var batches [][]op
	for i, line := range lines {
		var jl journalLine
		if err := json.Unmarshal(line, &jl); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", p, i+1, err)
		}
		if i == 0 {
			if jl.Gen != gen {
				return nil, nil // stale: head.json was replaced after it
			}
			continue
		}
		batches = append(batches, jl.Ops)
	}
	return batches, nil
}
