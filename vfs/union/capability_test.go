package union_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

// TestNotifierOnlyWhenEveryMountIs: New returns a Notifier exactly when
// every mount is one; every other capability, and Mounts, are there
// either way. A mount without a capability gets the helper's answer at
// its paths.
func TestNotifierOnlyWhenEveryMountIs(t *testing.T) {
	ctx := t.Context()
	notes := temp.MustNew(map[string]string{"/n.md": "n"})
	for _, c := range []struct {
		name     string
		plain    vfs.FileSystem
		notifier bool
	}{
		{"every mount a Notifier", temp.MustNew(map[string]string{"/p.txt": "0123456789"}), true},
		{"one mount no Notifier", vfstest.NewReference(map[string][]byte{"/p.txt": []byte("0123456789")}), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			u, err := union.New([]union.Mount{{Prefix: "/notes", FS: notes}, {Prefix: "/plain", FS: c.plain}})
			require.NoError(t, err)
			_, ok := u.(vfs.Notifier)
			assert.Equal(t, c.notifier, ok, "Notifier")
			m, ok := u.(interface{ Mounts() []union.Mount })
			require.True(t, ok, "Mounts")
			assert.Len(t, m.Mounts(), 2)
			for name, ok := range map[string]bool{
				"RangeReader":       is[vfs.RangeReader](u),
				"FileOpener":        is[vfs.FileOpener](u),
				"Stager":            is[vfs.Stager](u),
				"ConditionalWriter": is[vfs.ConditionalWriter](u),
				"Renamer":           is[vfs.Renamer](u),
				"DirMaker":          is[vfs.DirMaker](u),
				"Symlinker":         is[vfs.Symlinker](u),
				"LinkTimeSetter":    is[vfs.LinkTimeSetter](u),
			} {
				assert.True(t, ok, name)
			}

			buf := make([]byte, 3)
			n, err := u.(vfs.RangeReader).ReadAt(ctx, "/plain/p.txt", buf, 2)
			require.NoError(t, err)
			assert.Equal(t, "234", string(buf[:n]))
			_, err = u.(vfs.ConditionalWriter).WriteIf(ctx, "/plain/p.txt", []byte("x"), vfs.Precondition{IfNoneMatch: true})
			assert.EqualError(t, err, "conflict: /plain/p.txt")
			require.NoError(t, u.(vfs.Renamer).Rename(ctx, "/plain/p.txt", "/plain/q.txt"))
			data, err := u.Read(ctx, "/plain/q.txt")
			require.NoError(t, err)
			assert.Equal(t, "0123456789", string(data))
		})
	}
}

func is[I any](fsys vfs.FileSystem) bool {
	_, ok := fsys.(I)
	return ok
}
