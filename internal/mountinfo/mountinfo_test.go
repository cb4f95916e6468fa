package mountinfo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const table = `22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
95 29 0:52 / /mnt/agent rw,nosuid,nodev,relatime shared:50 - fuse.julyfs /srv/agent rw,user_id=0,group_id=0
96 29 0:53 / /mnt/with\040space rw,relatime - tmpfs tmp\040fs rw
97 29 0:54 / /mnt/agent ro,relatime - tmpfs over rw
`

func TestParseAt(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		want Mount
		ok   bool
	}{
		{"/proc", Mount{Dir: "/proc", Type: "proc", Source: "proc", Options: "rw,nosuid,nodev,noexec,relatime"}, true},
		// Stacked mounts: the last one is what the directory shows.
		{"/mnt/agent", Mount{Dir: "/mnt/agent", Type: "tmpfs", Source: "over", Options: "ro,relatime"}, true},
		{"/mnt/with space", Mount{Dir: "/mnt/with space", Type: "tmpfs", Source: "tmp fs", Options: "rw,relatime"}, true},
		{"/mnt", Mount{}, false},
	} {
		got, ok, err := parseAt([]byte(table), tc.dir)
		require.NoError(t, err)
		assert.Equal(t, tc.ok, ok, "At(%q) found", tc.dir)
		assert.Equal(t, tc.want, got, "At(%q)", tc.dir)
	}
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:          "plain",
		`a\040b`:         "a b",
		`tab\011end`:     "tab\tend",
		`back\134slash`:  `back\slash`,
		`not\08escape`:   `not\08escape`,
		`short\04`:       `short\04`,
		`\777overflowed`: `\777overflowed`,
	} {
		assert.Equal(t, want, Unescape(in), "Unescape(%q)", in)
	}
}

func TestAtRoot(t *testing.T) {
	m, ok, err := At("/")
	require.NoError(t, err)
	require.True(t, ok, "/ is always mounted")
	assert.NotEmpty(t, m.Type)
}
