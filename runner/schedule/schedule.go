package schedule

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"gopkg.in/yaml.v3"
)

// Dir is the directory of an agent's schedules, in the agent directory.
const Dir = "schedules"

// The bounds Load applies to an agent's schedules.
const (
	// MaxScheduleFileBytes is the largest schedule file Load reads.
	MaxScheduleFileBytes = 64 << 10
	// MaxSchedules is the most schedule files an agent may have.
	MaxSchedules = 1000
)

// Schedule is one schedules/*.md file: a cron line and a prompt.
type Schedule struct {
	// ID is the file name without .md ("heartbeat").
	ID string
	// File is the path relative to the agent directory
	// ("schedules/heartbeat.md").
	File string
	// Cron is the 5-field cron expression, evaluated in UTC.
	Cron string
	// Prompt is the body after the frontmatter, trimmed: the first
	// message of the task session each firing starts.
	Prompt string

	spec cron.Schedule
}

// Next returns the next n fire times strictly after after, in UTC.
func (s Schedule) Next(after time.Time, n int) []time.Time {
	sp := s.spec
	if sp == nil {
		var err error
		if sp, err = ParseCron(s.Cron); err != nil {
			return nil
		}
	}
	out := make([]time.Time, 0, n)
	t := after.UTC()
	for range n {
		t = sp.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out
}

// next returns the first fire time strictly after t (zero: never).
func (s Schedule) next(t time.Time) time.Time {
	if ts := s.Next(t, 1); len(ts) == 1 {
		return ts[0]
	}
	return time.Time{}
}

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// ParseCron parses a standard 5-field cron expression (minute hour
// day-of-month month day-of-week), evaluated in UTC. Descriptors (@daily)
// and time-zone prefixes (TZ=, CRON_TZ=) are refused: every expression
// is UTC.
func ParseCron(expr string) (cron.Schedule, error) {
	e := strings.TrimSpace(expr)
	if e == "" {
		return nil, errors.New("empty expression: want 5 fields (minute hour day-of-month month day-of-week)")
	}
	if strings.HasPrefix(e, "TZ=") || strings.HasPrefix(e, "CRON_TZ=") {
		return nil, errors.New("time zones are not supported: cron expressions are evaluated in UTC")
	}
	if strings.HasPrefix(e, "@") {
		return nil, errors.New("descriptors such as @daily are not supported: want 5 fields (minute hour day-of-month month day-of-week)")
	}
	sp, err := cronParser.Parse(e)
	if err != nil {
		return nil, err
	}
	if ss, ok := sp.(*cron.SpecSchedule); ok {
		ss.Location = time.UTC
	}
	return sp, nil
}

// FileError is a problem with one schedule file, at a line (1-based).
type FileError struct {
	File string // relative to the agent directory: schedules/x.md
	Line int
	Msg  string
}

func (e *FileError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// Load reads the schedules of the agent in agentDir: every
// schedules/*.md, sorted by id. No schedules directory is no schedules.
// It reports every problem at once, each a *FileError naming file:line
// (joined with errors.Join): a file without frontmatter or whose
// frontmatter is not closed, a frontmatter without cron: or with another
// field, a bad cron line (`schedules/x.md:2: bad cron "…": …`), an empty
// body, a name that is not an id, a file over MaxScheduleFileBytes; and
// more than MaxSchedules files.
func Load(agentDir string) ([]Schedule, error) {
	dir := filepath.Join(agentDir, Dir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the schedules: %w", err)
	}
	var out []Schedule
	var errs []error
	n := 0
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		n++
		if n > MaxSchedules {
			errs = append(errs, fmt.Errorf("%s: more than %d schedules (MaxSchedules): merge some", Dir, MaxSchedules))
			break
		}
		rel := Dir + "/" + e.Name()
		s, err := loadFile(filepath.Join(dir, e.Name()), rel)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Schedule) int { return strings.Compare(a.ID, b.ID) })
	return out, errors.Join(errs...)
}

func loadFile(path, rel string) (Schedule, error) {
	id := strings.TrimSuffix(filepath.Base(rel), ".md")
	if !idPattern.MatchString(id) {
		return Schedule{}, &FileError{rel, 1, fmt.Sprintf("bad schedule name %q: the name (without .md) is the schedule id: letters, digits, '.', '_' and '-', starting with a letter or digit, at most 100", id)}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return Schedule{}, err
	}
	if fi.Size() > MaxScheduleFileBytes {
		return Schedule{}, &FileError{rel, 1, fmt.Sprintf("file is %d bytes, over the %d-byte bound (MaxScheduleFileBytes): keep the prompt short and read the rest from files", fi.Size(), MaxScheduleFileBytes)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Schedule{}, err
	}
	s, err := Parse(rel, data)
	if err != nil {
		return Schedule{}, err
	}
	s.ID = id
	return s, nil
}

// Parse parses one schedule file's content; file names it in errors.
func Parse(file string, data []byte) (Schedule, error) {
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], " \t\n") != "---" {
		return Schedule{}, &FileError{file, 1, `no frontmatter: a schedule file starts with a "---" line, then cron: "…", then a "---" line and the prompt`}
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t\n") == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return Schedule{}, &FileError{file, 1, `frontmatter is not closed: no "---" line after the opening one`}
	}
	front := strings.Join(lines[1:end], "")
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(front), &doc); err != nil {
		line := 2
		var te *yaml.TypeError
		msg := err.Error()
		if !errors.As(err, &te) {
			if m := yamlLine.FindStringSubmatch(msg); m != nil {
				var l int
				fmt.Sscan(m[1], &l)
				line = l + 1
			}
		}
		return Schedule{}, &FileError{file, line, "bad frontmatter: " + strings.TrimPrefix(msg, "yaml: ")}
	}
	s := Schedule{File: file}
	cronLine := 0
	if len(doc.Content) == 1 {
		m := doc.Content[0]
		if m.Kind != yaml.MappingNode {
			return Schedule{}, &FileError{file, m.Line + 1, `bad frontmatter: want fields (cron: "…")`}
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			if k.Value != "cron" {
				return Schedule{}, &FileError{file, k.Line + 1, fmt.Sprintf("unknown field %q: a schedule's frontmatter has cron: only", k.Value)}
			}
			if v.Kind != yaml.ScalarNode {
				return Schedule{}, &FileError{file, v.Line + 1, `cron: want a string such as "0 9 * * 1-5"`}
			}
			s.Cron, cronLine = v.Value, k.Line+1
		}
	}
	if cronLine == 0 {
		return Schedule{}, &FileError{file, 1, `no cron: in the frontmatter (want cron: "0 9 * * 1-5", 5 fields, UTC)`}
	}
	sp, err := ParseCron(s.Cron)
	if err != nil {
		return Schedule{}, &FileError{file, cronLine, fmt.Sprintf("bad cron %q: %v", s.Cron, err)}
	}
	if sp.Next(time.Now().UTC()).IsZero() {
		return Schedule{}, &FileError{file, cronLine, fmt.Sprintf("bad cron %q: it never fires (no matching date)", s.Cron)}
	}
	s.spec = sp
	s.Prompt = strings.TrimSpace(strings.Join(lines[end+1:], ""))
	if s.Prompt == "" {
		return Schedule{}, &FileError{file, end + 2, "empty body: the text after the frontmatter is the prompt of each firing"}
	}
	return s, nil
}

var yamlLine = regexp.MustCompile(`line (\d+)`)
