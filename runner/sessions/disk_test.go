package sessions

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/model"
)

// TestStaleTie: session.json written in the same tick of the
// filesystem's clock as the turn's last event (equal modification
// times, as on ext4 whenever a turn takes under 4 ms) is not stale: the
// events' size it recorded decides, so listing sessions and starting a
// server read no session's events (on a filesystem without user
// extended attributes the tie stays stale, as nothing was recorded). An
// event appended within that tick makes it stale.
func TestStaleTie(t *testing.T) {
	root := t.TempDir()
	st := New(root)
	l, err := st.Create(Meta{Agent: "notes", Model: "script:x"})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	turn(t, l, "first", model.Usage{InputTokens: 1})
	dir := filepath.Join(root, "sessions", l.ID())
	tie := func() {
		at := time.Now().Truncate(time.Second)
		require.NoError(t, os.Chtimes(filepath.Join(dir, MetaFile), at, at))
		require.NoError(t, os.Chtimes(filepath.Join(dir, EventsFile), at, at))
	}
	tie()
	if _, ok := recordedEventsSize(filepath.Join(dir, MetaFile)); ok {
		assert.False(t, st.Stale(l.ID()), "session.json holds every event")
	} else {
		// No user extended attributes here: nothing recorded, so a tie
		// is taken for events newer than session.json.
		assert.True(t, st.Stale(l.ID()), "a tie with no record")
	}

	_, err = l.Append(TypeMessageReceived, NewTurnID(), MessageReceived{Text: "more"})
	require.NoError(t, err)
	tie()
	assert.True(t, st.Stale(l.ID()), "an event came after session.json")
	list, err := st.List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "more", list[0].LastMessage, "a stale session.json is read past")
}
