package union_test

import (
	"io"
	"testing"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

func TestOpenFileAndStageRouted(t *testing.T) {
	ctx := t.Context()
	child := temp.MustNew(map[string]string{"/f": "child file", "/d/x": "x"})
	u, err := union.New([]union.Mount{{Prefix: "/m", FS: child}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := vfs.OpenFile(ctx, u, "/m/f")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 20)
	if n, err := r.ReadAt(buf, 6); string(buf[:n]) != "file" || err != io.EOF {
		t.Errorf("OpenFile(/m/f).ReadAt(20, 6) = %q, %v; want file, EOF", buf[:n], err)
	}
	r.Close()
	for p, want := range map[string]string{"/m/nope": "not found: /m/nope", "/m/d": "is a directory: /m/d", "/other": "no mount for path: /other"} {
		if _, err := vfs.OpenFile(ctx, u, p); err == nil || err.Error() != want {
			t.Errorf("OpenFile(%q) = %v, want %s", p, err, want)
		}
		if p == "/m/nope" {
			continue
		}
		if _, err := vfs.Stage(ctx, u, p, false); err == nil || err.Error() != want {
			t.Errorf("Stage(%q) = %v, want %s", p, err, want)
		}
	}

	s, err := vfs.Stage(ctx, u, "/m/f", true)
	if err != nil {
		t.Fatal(err)
	}
	s.WriteAt([]byte("union"), 0)
	if data, _ := child.Read(ctx, "/f"); string(data) != "child file" {
		t.Errorf("child before Commit = %q", data)
	}
	if err := s.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if data, _ := child.Read(ctx, "/f"); string(data) != "union file" {
		t.Errorf("child after Commit = %q, want union file", data)
	}
	// A commit the child refuses names the union path.
	s, _ = vfs.Stage(ctx, u, "/m/g", false)
	child.Write(ctx, "/g/h", []byte("g is a directory now"))
	if err := s.Commit(ctx); err == nil || err.Error() != "is a directory: /m/g" {
		t.Errorf("Commit over a directory = %v, want is a directory: /m/g", err)
	}
	if _, err := s.ReadAt(buf, -1); err == nil {
		t.Errorf("ReadAt(-1) succeeded")
	}
	s.Abort()
	if _, err := s.WriteAt([]byte("x"), 0); err == nil || err.Error() != "/m/g: file already closed" {
		t.Errorf("WriteAt after Abort = %v, want /m/g: file already closed", err)
	}
}
