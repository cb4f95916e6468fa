package pgstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/julyfs/julyfs/runner/schedule"
)

// State is the schedule.Store of one agent's (scope's) last fires and
// reminders in the database: shared, so every server fires and the
// claims decide.
type State struct {
	db    *DB
	scope string
}

var _ schedule.Store = (*State)(nil)

// Schedule returns the schedule.Store of scope (an agent's name).
func (db *DB) Schedule(scope string) *State { return &State{db: db, scope: scope} }

// Name names the database and the scope.
func (s *State) Name() string { return s.db.name + " (agent " + s.scope + ")" }

// Lock returns no release: the store is shared.
func (s *State) Lock(string) (func(), error) { return nil, nil }

// tick is t as a column value: NULL for the zero time.
func tick(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

// Schedule reads schedule id's state; the last_tick column is the last
// tick (a save never moves it back).
func (s *State) Schedule(id string) (schedule.ScheduleState, error) {
	ctx, cancel := s.db.ctx()
	defer cancel()
	st := schedule.ScheduleState{ScheduleID: id}
	var data []byte
	var last *time.Time
	err := s.db.pool.QueryRow(ctx, `SELECT state, last_tick FROM july_schedules WHERE scope = $1 AND id = $2`, s.scope, id).Scan(&data, &last)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return st, nil
	case err != nil:
		return st, s.db.fail("reading schedule "+id, err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("schedule %s: its state in %s is not JSON: %v", id, s.Name(), err)
	}
	st.ScheduleID, st.LastTick = id, time.Time{}
	if last != nil {
		st.LastTick = last.UTC()
	}
	return st, nil
}

// SaveSchedule keeps st; the stored last tick stays when it is later.
func (s *State) SaveSchedule(st schedule.ScheduleState) error {
	ctx, cancel := s.db.ctx()
	defer cancel()
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	_, err = s.db.pool.Exec(ctx, `INSERT INTO july_schedules (scope, id, last_tick, state) VALUES ($1, $2, $3, $4)
		ON CONFLICT (scope, id) DO UPDATE SET state = EXCLUDED.state,
			last_tick = GREATEST(july_schedules.last_tick, EXCLUDED.last_tick)`, s.scope, st.ScheduleID, tick(st.LastTick), data)
	return s.db.fail("saving schedule "+st.ScheduleID, err)
}

// ClaimTick keeps st when its LastTick is after the stored one: the one
// statement that changes the row claims the tick.
func (s *State) ClaimTick(st schedule.ScheduleState) (bool, error) {
	ctx, cancel := s.db.ctx()
	defer cancel()
	data, err := json.Marshal(st)
	if err != nil {
		return false, err
	}
	tag, err := s.db.pool.Exec(ctx, `INSERT INTO july_schedules (scope, id, last_tick, state) VALUES ($1, $2, $3, $4)
		ON CONFLICT (scope, id) DO UPDATE SET state = EXCLUDED.state, last_tick = EXCLUDED.last_tick
		WHERE july_schedules.last_tick IS NULL OR july_schedules.last_tick < EXCLUDED.last_tick`,
		s.scope, st.ScheduleID, tick(st.LastTick), data)
	if err != nil {
		return false, s.db.fail("claiming a tick of schedule "+st.ScheduleID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Reminders reads the scope's reminders, by id.
func (s *State) Reminders() ([]schedule.Reminder, []error, error) {
	ctx, cancel := s.db.ctx()
	defer cancel()
	rows, err := s.db.pool.Query(ctx, `SELECT id, rec FROM july_reminders WHERE scope = $1 ORDER BY id`, s.scope)
	if err != nil {
		return nil, nil, s.db.fail("reading the reminders", err)
	}
	defer rows.Close()
	var out []schedule.Reminder
	var problems []error
	for rows.Next() {
		var id string
		var data []byte
		if err := rows.Scan(&id, &data); err != nil {
			return nil, nil, s.db.fail("reading the reminders", err)
		}
		var rec schedule.Reminder
		if err := json.Unmarshal(data, &rec); err != nil || rec.ID != id {
			problems = append(problems, fmt.Errorf("%s: reminder %s: not a reminder record", s.Name(), id))
			continue
		}
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, s.db.fail("reading the reminders", err)
	}
	return out, problems, nil
}

// Reminder reads reminder id.
func (s *State) Reminder(id string) (schedule.Reminder, bool, error) {
	ctx, cancel := s.db.ctx()
	defer cancel()
	var data []byte
	err := s.db.pool.QueryRow(ctx, `SELECT rec FROM july_reminders WHERE scope = $1 AND id = $2`, s.scope, id).Scan(&data)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return schedule.Reminder{}, false, nil
	case err != nil:
		return schedule.Reminder{}, false, s.db.fail("reading reminder "+id, err)
	}
	var rec schedule.Reminder
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, false, fmt.Errorf("%s: reminder %s: not a reminder record: %v", s.Name(), id, err)
	}
	return rec, true, nil
}

// PutReminder inserts or replaces rec.
func (s *State) PutReminder(rec schedule.Reminder) error {
	ctx, cancel := s.db.ctx()
	defer cancel()
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = s.db.pool.Exec(ctx, `INSERT INTO july_reminders (id, scope, fire_count, next_fire, disarmed, rec) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO UPDATE SET fire_count = EXCLUDED.fire_count, next_fire = EXCLUDED.next_fire,
			disarmed = EXCLUDED.disarmed, rec = EXCLUDED.rec`,
		rec.ID, s.scope, rec.FireCount, tick(rec.NextFire), rec.Disarmed, data)
	return s.db.fail("keeping reminder "+rec.ID, err)
}

// ClaimReminder replaces cur with upd when the row is still at cur's
// firing.
func (s *State) ClaimReminder(cur, upd schedule.Reminder) (bool, error) {
	ctx, cancel := s.db.ctx()
	defer cancel()
	data, err := json.Marshal(upd)
	if err != nil {
		return false, err
	}
	tag, err := s.db.pool.Exec(ctx, `UPDATE july_reminders SET fire_count = $4, next_fire = $5, disarmed = $6, rec = $7
		WHERE scope = $1 AND id = $2 AND fire_count = $3 AND next_fire IS NOT DISTINCT FROM $8 AND disarmed = $9`,
		s.scope, cur.ID, cur.FireCount, upd.FireCount, tick(upd.NextFire), upd.Disarmed, data, tick(cur.NextFire), cur.Disarmed)
	if err != nil {
		return false, s.db.fail("claiming a firing of reminder "+cur.ID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// RemoveReminder deletes reminder id.
func (s *State) RemoveReminder(id string) error {
	ctx, cancel := s.db.ctx()
	defer cancel()
	_, err := s.db.pool.Exec(ctx, `DELETE FROM july_reminders WHERE scope = $1 AND id = $2`, s.scope, id)
	return s.db.fail("removing reminder "+id, err)
}
