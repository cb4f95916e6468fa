package schedule

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	s, err := Parse("schedules/daily.md", []byte("---\ncron: \"0 9 * * 1-5\"\n---\n\nPull open incidents.\n"))
	require.NoError(t, err)
	assert.Equal(t, "0 9 * * 1-5", s.Cron)
	assert.Equal(t, "Pull open incidents.", s.Prompt)

	crlf, err := Parse("schedules/w.md", []byte("---\r\ncron: '*/5 * * * *'\r\n---\r\nHi\r\n"))
	require.NoError(t, err)
	assert.Equal(t, "*/5 * * * *", crlf.Cron)
	assert.Equal(t, "Hi", crlf.Prompt)
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, content, want string }{
		{"no frontmatter", "Just a prompt.\n", `schedules/x.md:1: no frontmatter: `},
		{"empty file", "", `schedules/x.md:1: no frontmatter: `},
		{"not closed", "---\ncron: \"* * * * *\"\nprompt\n", `schedules/x.md:1: frontmatter is not closed`},
		{"no cron", "---\n---\nprompt\n", `schedules/x.md:1: no cron: in the frontmatter`},
		{"unknown field", "---\ncron: \"* * * * *\"\nevery: 5m\n---\nprompt\n", `schedules/x.md:3: unknown field "every"`},
		{"bad cron", "---\ncron: \"61 * * * *\"\n---\nprompt\n", `schedules/x.md:2: bad cron "61 * * * *": `},
		{"bad cron, later line", "---\n# the cadence\ncron: \"* * *\"\n---\nprompt\n", `schedules/x.md:3: bad cron "* * *": expected exactly 5 fields`},
		{"six fields", "---\ncron: \"0 0 9 * * *\"\n---\nprompt\n", `schedules/x.md:2: bad cron "0 0 9 * * *": expected exactly 5 fields`},
		{"descriptor", "---\ncron: \"@daily\"\n---\nprompt\n", `schedules/x.md:2: bad cron "@daily": descriptors`},
		{"time zone", "---\ncron: \"TZ=Europe/Paris 0 9 * * *\"\n---\nprompt\n", `schedules/x.md:2: bad cron "TZ=Europe/Paris 0 9 * * *": time zones are not supported`},
		{"cron not a string", "---\ncron: [1, 2]\n---\nprompt\n", `schedules/x.md:2: cron: want a string`},
		{"bad yaml", "---\ncron: \"* * * * *\n---\nprompt\n", `schedules/x.md:`},
		{"never fires", "---\ncron: \"0 0 30 2 *\"\n---\nprompt\n", `schedules/x.md:2: bad cron "0 0 30 2 *": it never fires`},
		{"step zero", "---\ncron: \"*/0 * * * *\"\n---\nprompt\n", `schedules/x.md:2: bad cron "*/0 * * * *": `},
		{"empty body", "---\ncron: \"* * * * *\"\n---\n\n  \n", `schedules/x.md:4: empty body`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("schedules/x.md", []byte(tc.content))
			require.Error(t, err)
			var fe *FileError
			require.True(t, errors.As(err, &fe), "%T", err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, "schedules/x.md", fe.File)
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	none, err := Load(dir)
	require.NoError(t, err)
	assert.Empty(t, none)

	writeSchedule(t, dir, "weekly.md", "---\ncron: \"0 8 * * 1\"\n---\nWeekly report.\n")
	writeSchedule(t, dir, "heartbeat.md", "---\ncron: \"*/30 * * * *\"\n---\nCheck in.\n")
	writeSchedule(t, dir, "README.txt", "not a schedule")
	got, err := Load(dir)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, []string{"heartbeat", "weekly"}, []string{got[0].ID, got[1].ID})
	assert.Equal(t, "schedules/heartbeat.md", got[0].File)

	writeSchedule(t, dir, "bad.md", "---\ncron: \"0 25 * * *\"\n---\nx\n")
	writeSchedule(t, dir, "empty.md", "---\ncron: \"0 1 * * *\"\n---\n")
	writeSchedule(t, dir, "bad name.md", "---\ncron: \"0 1 * * *\"\n---\nx\n")
	got, err = Load(dir)
	require.Error(t, err)
	assert.Len(t, got, 2, "the good schedules are still returned")
	msg := err.Error()
	assert.Contains(t, msg, `schedules/bad.md:2: bad cron "0 25 * * *": `)
	assert.Contains(t, msg, `schedules/empty.md:4: empty body`)
	assert.Contains(t, msg, `schedules/bad name.md:1: bad schedule name "bad name"`)
}

func TestNextAcrossDaysAndMonths(t *testing.T) {
	for _, tc := range []struct {
		cron, after string
		want        []string
	}{
		{"30 23 * * *", "2026-01-31T23:45:00Z", []string{"2026-02-01T23:30:00Z", "2026-02-02T23:30:00Z", "2026-02-03T23:30:00Z"}},
		{"0 0 1 * *", "2026-01-31T10:00:00Z", []string{"2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z"}},
		{"0 0 31 * *", "2026-01-31T00:00:00Z", []string{"2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z"}},
		{"0 9 * * 1-5", "2026-12-04T09:00:00Z", []string{"2026-12-07T09:00:00Z", "2026-12-08T09:00:00Z", "2026-12-09T09:00:00Z"}}, // Friday -> Monday
		{"0 0 29 2 *", "2026-03-01T00:00:00Z", []string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z", "2036-02-29T00:00:00Z"}},
		{"59 23 31 12 *", "2026-12-31T23:59:00Z", []string{"2027-12-31T23:59:00Z", "2028-12-31T23:59:00Z", "2029-12-31T23:59:00Z"}},
		{"*/20 * * * *", "2026-03-29T00:59:59Z", []string{"2026-03-29T01:00:00Z", "2026-03-29T01:20:00Z", "2026-03-29T01:40:00Z"}}, // a European DST night: UTC has none
	} {
		s := mustSchedule(t, "x", tc.cron, "p")
		assert.Equal(t, utcs(tc.want...), s.Next(utc(tc.after), 3), "Next(%q, %s)", tc.cron, tc.after)
	}
	// A time in another zone is read as the instant it is: the answer is UTC.
	paris, err := time.LoadLocation("Europe/Paris")
	if err == nil {
		s := mustSchedule(t, "x", "0 9 * * *", "p")
		got := s.Next(time.Date(2026, 7, 1, 10, 30, 0, 0, paris), 1) // 08:30 UTC
		assert.Equal(t, utcs("2026-07-01T09:00:00Z"), got)
	}
}

func TestLatestTick(t *testing.T) {
	s := mustSchedule(t, "x", "*/5 * * * *", "p")
	assert.Equal(t, utc("2026-05-01T11:00:00Z"), latestTick(s, utc("2026-05-01T10:02:00Z"), utc("2026-05-01T11:02:00Z")))
	assert.True(t, latestTick(s, utc("2026-05-01T10:05:00Z"), utc("2026-05-01T10:09:59Z")).IsZero())
	assert.Equal(t, utc("2026-05-01T10:10:00Z"), latestTick(s, utc("2026-05-01T10:05:00Z"), utc("2026-05-01T10:10:00Z")))
	// A year down: one tick, the latest.
	assert.Equal(t, utc("2027-05-01T10:00:00Z"), latestTick(s, utc("2026-05-01T10:02:00Z"), utc("2027-05-01T10:04:00Z")))
	yearly := mustSchedule(t, "y", "0 0 1 1 *", "p")
	assert.Equal(t, utc("2029-01-01T00:00:00Z"), latestTick(yearly, utc("2026-05-01T00:00:00Z"), utc("2029-06-01T00:00:00Z")))
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\ncron: \"0 9 * * 1-5\"\n---\nhi\n"))
	f.Add([]byte("---\ncron: 5\n---\n"))
	f.Add([]byte("---\n---\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("schedules/f.md", data)
		if err != nil {
			var fe *FileError
			require.True(t, errors.As(err, &fe))
			require.GreaterOrEqual(t, fe.Line, 1)
			return
		}
		require.NotEmpty(t, s.Prompt)
		_, err = ParseCron(s.Cron)
		require.NoError(t, err)
	})
}

func FuzzParseInterval(f *testing.F) {
	for _, s := range []string{"1s", "2h30m", "3d", "365d", "366d", "500ms", "-1h", "1e3h", "d", "9999999999999d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseInterval(s)
		if err != nil {
			return
		}
		require.GreaterOrEqual(t, d, MinInterval)
		require.LessOrEqual(t, d, MaxInterval)
	})
}

func TestParseIntervalDaysDoNotOverflow(t *testing.T) {
	// 106751991167301 days * 24h wraps int64 to a value near zero.
	for _, s := range []string{"106751991167301d", "213503982334602d", "9999999999999d"} {
		_, err := ParseInterval(s)
		assert.ErrorContains(t, err, "over the one-year maximum", s)
	}
}

func FuzzParseCron(f *testing.F) {
	for _, s := range []string{"* * * * *", "*/0 * * * *", "0-59/61 * * * *", "0 0 30 2 *", "MON-FRI * * * *", "0 9 * * 1-5", "5-1 * * * *", "? ? ? ? ?"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseCron(s)
		if err != nil {
			return
		}
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		if n := sp.Next(from); !n.IsZero() {
			require.True(t, n.After(from))
			require.Zero(t, n.Second())
		}
	})
}
