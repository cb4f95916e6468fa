package union_test

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

func TestOpenFileAndStageRouted(t *testing.T) {
	ctx := t.Context()
	child := temp.MustNew(map[string]string{"/f": "child file", "/d/x": "x"})
	u, err := union.New([]union.Mount{{Prefix: "/m", FS: child}})
	require.NoError(t, err)
	r, err := vfs.OpenFile(ctx, u, "/m/f")
	require.NoError(t, err)
	buf := make([]byte, 20)
	n, err := r.ReadAt(buf, 6)
	assert.Equal(t, "file", string(buf[:n]), "OpenFile(/m/f).ReadAt(20, 6)")
	assert.Same(t, io.EOF, err, "OpenFile(/m/f).ReadAt(20, 6) = %v, want EOF", err)
	r.Close()
	for p, want := range map[string]string{"/m/nope": "not found: /m/nope", "/m/d": "is a directory: /m/d", "/other": "no mount for path: /other"} {
		_, err := vfs.OpenFile(ctx, u, p)
		assert.EqualError(t, err, want, "OpenFile(%q)", p)
		if p == "/m/nope" {
			continue
		}
		_, err = vfs.Stage(ctx, u, p, false)
		assert.EqualError(t, err, want, "Stage(%q)", p)
	}

	s, err := vfs.Stage(ctx, u, "/m/f", true)
	require.NoError(t, err)
	s.WriteAt([]byte("union"), 0)
	data, _ := child.Read(ctx, "/f")
	assert.Equal(t, "child file", string(data), "child before Commit")
	require.NoError(t, s.Commit(ctx))
	data, _ = child.Read(ctx, "/f")
	assert.Equal(t, "union file", string(data), "child after Commit")
	// A commit the child refuses names the union path.
	s, _ = vfs.Stage(ctx, u, "/m/g", false)
	child.Write(ctx, "/g/h", []byte("g is a directory now"))
	assert.EqualError(t, s.Commit(ctx), "is a directory: /m/g", "Commit over a directory")
	_, err = s.ReadAt(buf, -1)
	assert.Error(t, err, "ReadAt(-1) succeeded")
	s.Abort()
	_, err = s.WriteAt([]byte("x"), 0)
	assert.EqualError(t, err, "/m/g: file already closed", "WriteAt after Abort")
}
