package schedule

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MaxReminderFileBytes bounds a reminder file read from disk.
const MaxReminderFileBytes = 1 << 20

// Store keeps what the scheduler and the reminders must not forget:
// each schedule's last fire, and the reminders. [DiskStore] keeps them
// in files under the state root (the default); package
// runner/sessions/pgstore keeps them in PostgreSQL, shared by several
// servers. Its methods are safe for concurrent use.
type Store interface {
	// Name says where the state is, for messages.
	Name() string
	// Lock makes the calling process the one that fires what (the
	// "schedules" or the "reminders"), until release is called: an error
	// wrapping ErrFiredElsewhere when another process is. A shared store
	// returns a nil release and no error: every process fires, and the
	// claims (ClaimTick, ClaimReminder) make each firing happen once.
	Lock(what string) (release func(), err error)

	// Schedule returns schedule id's state (zero but for the id when it
	// has none).
	Schedule(id string) (ScheduleState, error)
	// SaveSchedule keeps st, but never moves the stored LastTick back.
	SaveSchedule(st ScheduleState) error
	// ClaimTick keeps st, whose LastTick is a tick about to fire, when
	// the stored LastTick is before it: false (nothing written) when
	// another process has claimed that tick or a later one.
	ClaimTick(st ScheduleState) (bool, error)

	// Reminders returns every reminder, by id, and a problem for each
	// stored record that is not a reminder.
	Reminders() ([]Reminder, []error, error)
	// Reminder returns reminder id; found is false when there is none.
	Reminder(id string) (rec Reminder, found bool, err error)
	// PutReminder keeps rec (made or replaced) durably.
	PutReminder(rec Reminder) error
	// ClaimReminder replaces the reminder cur with upd when what is
	// stored is still cur (the same fire count and next fire): false
	// (nothing written) when another process fired or changed it, or it
	// is gone.
	ClaimReminder(cur, upd Reminder) (bool, error)
	// RemoveReminder removes reminder id; a missing one is not an error.
	RemoveReminder(id string) error
}

// DiskStore returns the Store of the files under stateRoot:
// schedules/<id>.json and reminders/<id>.json, each written atomically
// and fsynced, and an flock (schedules/.lock, reminders/.lock) that
// makes one process fire them.
func DiskStore(stateRoot string) Store { return diskStore{root: stateRoot} }

type diskStore struct{ root string }

func (d diskStore) Name() string { return d.root }

func (d diskStore) schedulePath(id string) string {
	return filepath.Join(d.root, SchedulesDir, id+".json")
}

func (d diskStore) remindersDir() string { return filepath.Join(d.root, RemindersDir) }

func (d diskStore) reminderPath(id string) string {
	return filepath.Join(d.remindersDir(), id+".json")
}

func (d diskStore) Lock(what string) (func(), error) {
	f, err := lockFile(filepath.Join(d.root, what, ".lock"), what)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil // closing drops the flock
}

func (d diskStore) Schedule(id string) (ScheduleState, error) {
	st := ScheduleState{ScheduleID: id}
	path := d.schedulePath(id)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &st); err != nil {
			return st, fmt.Errorf("schedule %s: reading its last fire %s: %v (remove the file to forget it)", id, path, err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return st, fmt.Errorf("schedule %s: %w", id, err)
	}
	st.ScheduleID = id
	return st, nil
}

// SaveSchedule writes the file: one process fires (the lock), so what it
// holds is never behind the file.
func (d diskStore) SaveSchedule(st ScheduleState) error {
	return writeJSON(d.schedulePath(st.ScheduleID), st)
}

func (d diskStore) ClaimTick(st ScheduleState) (bool, error) {
	if err := writeJSON(d.schedulePath(st.ScheduleID), st); err != nil {
		return false, err
	}
	return true, nil
}

func (d diskStore) Reminders() ([]Reminder, []error, error) {
	return readReminders(d.remindersDir())
}

func (d diskStore) Reminder(id string) (Reminder, bool, error) {
	rec, err := readReminder(d.reminderPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return Reminder{}, false, nil
	}
	return rec, err == nil, err
}

func (d diskStore) PutReminder(rec Reminder) error { return writeJSON(d.reminderPath(rec.ID), rec) }

// ClaimReminder writes the file: one process fires (the lock). A file
// removed meanwhile (july reminders --cancel) is not claimed.
func (d diskStore) ClaimReminder(cur, upd Reminder) (bool, error) {
	if _, err := os.Stat(d.reminderPath(cur.ID)); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return true, writeJSON(d.reminderPath(upd.ID), upd)
}

func (d diskStore) RemoveReminder(id string) error { return removeDurably(d.reminderPath(id)) }

// readReminders reads every reminder file in dir: the records, by id,
// and a problem for each file that is not one.
func readReminders(dir string) ([]Reminder, []error, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading the reminders: %w", err)
	}
	var out []Reminder
	var problems []error
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		path := filepath.Join(dir, name)
		rec, err := readReminder(path)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		out = append(out, rec)
	}
	slices.SortFunc(out, func(a, b Reminder) int { return strings.Compare(a.ID, b.ID) })
	return out, problems, nil
}

func readReminder(path string) (Reminder, error) {
	var rec Reminder
	fi, err := os.Stat(path)
	if err != nil {
		return rec, err
	}
	if fi.Size() > MaxReminderFileBytes {
		return rec, fmt.Errorf("%s: %d bytes, over the %d-byte bound of a reminder file", path, fi.Size(), MaxReminderFileBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return rec, err
	}
	return decodeReminder(data, strings.TrimSuffix(filepath.Base(path), ".json"), path)
}

// decodeReminder decodes a stored reminder whose id is id; where names
// it in errors.
func decodeReminder(data []byte, id, where string) (Reminder, error) {
	var rec Reminder
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("%s: not a reminder: %v", where, err)
	}
	if rec.ID != id || !ValidReminderID(id) {
		return rec, fmt.Errorf("%s: not a reminder: its id %q does not match its file name", where, rec.ID)
	}
	return rec, nil
}

// ReadReminders reads the reminders kept in store directly, with no
// Reminders open (july reminders does, with or without a server
// running): the records by id, and a problem for each that is not a
// reminder. A record Reminders would drop on open (done) is listed as is.
func ReadReminders(store Store) ([]Reminder, []error, error) {
	return store.Reminders()
}

// CancelStored removes reminder id from store directly. A server
// holding the reminder notices before its next firing (it checks the
// store first) and drops it. An unknown id is ErrUnknownReminder.
func CancelStored(store Store, id string) error {
	if !ValidReminderID(id) {
		return unknownReminder(id)
	}
	if _, found, err := store.Reminder(id); err != nil {
		return err
	} else if !found {
		return unknownReminder(id)
	}
	return store.RemoveReminder(id)
}
