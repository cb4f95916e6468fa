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
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("%s: not a reminder: %v", path, err)
	}
	id := strings.TrimSuffix(filepath.Base(path), ".json")
	if rec.ID != id || !ValidReminderID(id) {
		return rec, fmt.Errorf("%s: not a reminder: its id %q does not match its file name", path, rec.ID)
	}
	return rec, nil
}

// ReadReminders reads the reminders kept under stateRoot directly, with
// no Reminders open (july reminders does, with or without a server
// running): the records by id, and a problem for each file that is not a
// reminder. A record Reminders would drop on open (done) is listed as is.
func ReadReminders(stateRoot string) ([]Reminder, []error, error) {
	return readReminders(filepath.Join(stateRoot, RemindersDir))
}

// CancelStored removes reminder id's file under stateRoot directly. A
// server holding the reminder notices before its next firing (it checks
// the file first) and drops it. An unknown id is ErrUnknownReminder.
func CancelStored(stateRoot, id string) error {
	if !ValidReminderID(id) {
		return unknownReminder(id)
	}
	path := filepath.Join(stateRoot, RemindersDir, id+".json")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return unknownReminder(id)
	}
	return removeDurably(path)
}
