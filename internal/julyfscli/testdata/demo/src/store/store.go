// Package store keeps notes in memory.
package store

import "sync"

// Store is a bounded list of notes, safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	limit int
	notes []string
}

// New returns a store that keeps at most limit notes.
func New(limit int) *Store { return &Store{limit: limit} }

// Add appends a note, dropping the oldest when the store is full.
func (s *Store) Add(note string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, note)
	if len(s.notes) > s.limit {
		s.notes = s.notes[1:] // TODO: a ring buffer would not reallocate
	}
}

// All returns a copy of the notes, oldest first.
func (s *Store) All() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.notes...)
}
