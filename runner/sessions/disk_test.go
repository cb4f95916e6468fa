package sessions

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/runner/model"
)

// TestStaleTie: session.json written in the same tick of the
// filesystem's clock as the turn's last event (equal modification
// times, as on ext4 whenever a turn takes under 4 ms) is not stale: the
// events' size it recorded decides, so listing sessions and starting a
// server read no session's events. Without that record (a filesystem
// without user extended attributes, an older july) a tie is stale. An
// event appended within that tick makes it stale.
func TestStaleTie(t *testing.T) {
	root := t.TempDir()
	st := New(root)
	l, err := st.Create(Meta{Agent: "notes", Model: "script:x"})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	turn(t, l, "first", model.Usage{InputTokens: 1})
	dir := filepath.Join(root, "sessions", l.ID())
	meta, events := filepath.Join(dir, MetaFile), filepath.Join(dir, EventsFile)
	tie := func() {
		at := time.Now().Truncate(time.Second)
		require.NoError(t, os.Chtimes(meta, at, at))
		require.NoError(t, os.Chtimes(events, at, at))
	}
	tie()
	if userXattrs(t, dir) {
		f, err := os.Open(meta)
		require.NoError(t, err)
		size, ok := recordedEventsSize(f)
		f.Close()
		require.True(t, ok, "session.json records the events' size")
		ei, err := os.Stat(events)
		require.NoError(t, err)
		require.Equal(t, ei.Size(), size)
		assert.False(t, st.Stale(l.ID()), "session.json holds every event")
		list, err := st.Backend().List()
		require.NoError(t, err)
		require.Len(t, list, 1)
		assert.False(t, list[0].Stale, "List says the same")

		require.NoError(t, unix.Removexattr(meta, eventsSizeAttr))
		tie()
	}
	assert.True(t, st.Stale(l.ID()), "a tie with no record is taken for events newer than session.json")

	_, err = l.Append(TypeMessageReceived, NewTurnID(), MessageReceived{Text: "more"})
	require.NoError(t, err)
	tie()
	assert.True(t, st.Stale(l.ID()), "an event came after session.json")
	list, err := st.List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "more", list[0].LastMessage, "a stale session.json is read past")
}

// userXattrs reports whether the filesystem of dir keeps user extended
// attributes.
func userXattrs(t *testing.T, dir string) bool {
	t.Helper()
	f, err := os.CreateTemp(dir, "xattr-probe-")
	require.NoError(t, err)
	defer os.Remove(f.Name())
	defer f.Close()
	return unix.Fsetxattr(int(f.Fd()), "user.july.probe", []byte("1"), 0) == nil
}
