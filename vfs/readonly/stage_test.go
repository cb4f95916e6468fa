package readonly_test

import (
	"testing"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/readonly"
	"github.com/julyfs/julyfs/vfs/temp"
)

func TestOpenFileAndStage(t *testing.T) {
	ctx := t.Context()
	r := readonly.New(temp.MustNew(map[string]string{"/f": "data"}))
	f, err := vfs.OpenFile(ctx, r, "/f")
	if err != nil || f.Size() != 4 {
		t.Fatalf("OpenFile(/f) = %v, %v", f, err)
	}
	f.Close()
	for _, keep := range []bool{false, true} {
		if _, err := vfs.Stage(ctx, r, "/./f", keep); err == nil || err.Error() != "read-only mount: /f" {
			t.Errorf("Stage(/f, %v) = %v, want read-only mount: /f", keep, err)
		}
	}
}
