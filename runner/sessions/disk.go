package sessions

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// disk is the Backend of New: STATE/sessions/<id>/ with session.json,
// events.ndjson (appended and fsynced) and lock (an flock).
type disk struct {
	dir string // STATE/sessions
}

var _ Backend = (*disk)(nil)

func (d *disk) Name() string { return d.dir }

func (d *disk) Dir() string { return d.dir }

func (d *disk) sessionDir(id string) string { return filepath.Join(d.dir, id) }

func (d *disk) Create(id string, meta []byte) (Journal, error) {
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return nil, fmt.Errorf("state root %s is not writable: %w", filepath.Dir(d.dir), unwrapPath(err))
	}
	dir := d.sessionDir(id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("state root %s is not writable: %w", filepath.Dir(d.dir), unwrapPath(err))
	}
	j, err := openJournal(dir, id)
	if err != nil {
		return nil, err
	}
	if err := j.WriteMeta(meta); err != nil {
		j.Close()
		return nil, fmt.Errorf("session %s: writing %s: %w", id, MetaFile, err)
	}
	if err := syncDir(dir); err != nil {
		j.Close()
		return nil, err
	}
	return j, nil
}

func (d *disk) Hold(id string) (Journal, error) {
	dir, err := d.existing(id)
	if err != nil {
		return nil, err
	}
	return openJournal(dir, id)
}

func (d *disk) Load(id string) (Stored, error) {
	dir, err := d.existing(id)
	if err != nil {
		return Stored{}, err
	}
	file := filepath.Join(dir, EventsFile)
	data, err := os.ReadFile(file)
	if err != nil {
		return Stored{}, fmt.Errorf("session %s: %w", id, err)
	}
	meta, merr := readMetaFile(dir)
	return Stored{Meta: meta, MetaErr: merr, Events: data, Source: file}, nil
}

func (d *disk) List() ([]Listing, error) {
	entries, err := os.ReadDir(d.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Listing
	for _, e := range entries {
		if !e.IsDir() || !ValidID(e.Name()) {
			continue
		}
		// The content and the staleness come from one opening of
		// session.json: a session.json replaced in between would pair
		// old content with a newer file's verdict.
		meta, merr, stale := readMetaStale(filepath.Join(d.dir, e.Name()))
		out = append(out, Listing{ID: e.Name(), Meta: meta, MetaErr: merr, Stale: stale})
	}
	return out, nil
}

// Stale compares the modification times of events.ndjson and
// session.json: events written after session.json make it stale. Equal
// times are common (a turn's last event and session.json written within
// one tick of the filesystem's clock, 4 ms on ext4), so a tie is decided
// by the size the events file had when session.json was written, which
// WriteMeta records on it (the extended attribute eventsSizeAttr): stale
// when the size moved, or when there is no record (a filesystem without
// user extended attributes, an older july), as if nothing were known.
func (d *disk) Stale(id string) bool {
	dir := d.sessionDir(id)
	f, err := os.Open(filepath.Join(dir, MetaFile))
	if err != nil {
		return true
	}
	defer f.Close()
	return staleFrom(dir, f)
}

// staleFrom is Stale of the session in dir whose session.json is open as
// f.
func staleFrom(dir string, f *os.File) bool {
	mi, err := f.Stat()
	if err != nil {
		return true
	}
	ei, err := os.Stat(filepath.Join(dir, EventsFile))
	switch {
	case err != nil:
		return false
	case ei.ModTime().Before(mi.ModTime()):
		return false
	case ei.ModTime().After(mi.ModTime()):
		return true
	}
	size, ok := recordedEventsSize(f)
	return !ok || size != ei.Size()
}

// readMetaStale reads session.json in dir (nil and no error when it is
// missing) and says, from that same file, whether it is stale.
func readMetaStale(dir string) (meta []byte, merr error, stale bool) {
	f, err := os.Open(filepath.Join(dir, MetaFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil, true
	case err != nil:
		return nil, unwrapPath(err), true
	}
	defer f.Close()
	meta, err = io.ReadAll(f)
	if err != nil {
		return nil, unwrapPath(err), true
	}
	return meta, nil, staleFrom(dir, f)
}

// LogSize is the size of events.ndjson, which only grows (a cut drops a
// torn last line only).
func (d *disk) LogSize(id string) (int64, error) {
	fi, err := os.Stat(filepath.Join(d.sessionDir(id), EventsFile))
	if err != nil {
		return 0, fmt.Errorf("session %s: %w", id, unwrapPath(err))
	}
	return fi.Size(), nil
}

// eventsSizeAttr is the extended attribute of session.json that holds,
// in decimal, the size of events.ndjson when session.json was written.
const eventsSizeAttr = "user.july.events-size"

// recordedEventsSize reads eventsSizeAttr of f.
func recordedEventsSize(f *os.File) (int64, bool) {
	var buf [24]byte
	n, err := unix.Fgetxattr(int(f.Fd()), eventsSizeAttr, buf[:])
	if err != nil {
		return 0, false
	}
	size, err := strconv.ParseInt(string(buf[:n]), 10, 64)
	return size, err == nil
}

// existing returns the directory of session id, or ErrUnknown.
func (d *disk) existing(id string) (string, error) {
	dir := d.sessionDir(id)
	if _, err := os.Stat(filepath.Join(dir, EventsFile)); err != nil {
		return "", UnknownError(id, d.dir)
	}
	return dir, nil
}

// readMetaFile reads session.json: nil and no error when it is missing.
func readMetaFile(dir string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(dir, MetaFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, unwrapPath(err)
	}
	return data, nil
}

// diskJournal holds a session on disk: the flock on its lock file and its
// events file open for appending.
type diskJournal struct {
	dir, id string
	lock    *os.File
	f       *os.File
	// writeTemp writes session.json's temporary file; tests make it fail.
	writeTemp func(f *os.File, data []byte) error
}

// openJournal takes the session's lock and opens its events file for
// appending.
func openJournal(dir, id string) (*diskJournal, error) {
	lock, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, unwrapPath(err))
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, InUseError(id)
		}
		return nil, fmt.Errorf("session %s: locking: %w", id, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, EventsFile), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("session %s: %w", id, unwrapPath(err))
	}
	return &diskJournal{dir: dir, id: id, lock: lock, f: f}, nil
}

func (j *diskJournal) Append(_ int64, line []byte) error {
	if _, err := j.f.Write(line); err != nil {
		return err
	}
	return j.f.Sync()
}

func (j *diskJournal) Cut(size int64) error { return j.f.Truncate(size) }

// WriteMeta replaces session.json atomically (write, fsync, rename).
func (j *diskJournal) WriteMeta(data []byte) error {
	tmp := filepath.Join(j.dir, MetaFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return unwrapPath(err)
	}
	write := j.writeTemp
	if write == nil {
		write = func(f *os.File, data []byte) error { _, err := f.Write(data); return err }
	}
	err = write(f, data)
	if err == nil {
		// The events' size now, for Stale (best effort: without it a
		// tie of times reads the events). The journal holds the lock:
		// nothing else appends.
		if ei, serr := j.f.Stat(); serr == nil {
			unix.Fsetxattr(int(f.Fd()), eventsSizeAttr, strconv.AppendInt(nil, ei.Size(), 10), 0)
		}
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(j.dir, MetaFile))
	}
	if err != nil {
		os.Remove(tmp)
		return unwrapPath(err)
	}
	return nil
}

func (j *diskJournal) Close() error {
	err := j.f.Close()
	if cerr := j.lock.Close(); err == nil { // closing drops the flock
		err = cerr
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}
