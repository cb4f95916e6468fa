package fusemount

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFirstReadStored: the first open of a small file the kernel holds no
// page of is answered with the file already in the kernel's page cache
// (FUSE_NOTIFY_STORE), so reading it sends no READ: host files, with and
// without passthrough, and a file the mount wrote through passthrough
// (without it, the writer's handle is in cached mode: the kernel may hold
// pages of it, and the reader's open drops them and reads).
func TestFirstReadStored(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  Options
		kinds []string
	}{
		{"default", Options{}, []string{"host", "made"}},
		{"nopassthrough", Options{NoPassthrough: true}, []string{"host"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			for i := range 3 {
				files[fmt.Sprintf("host%d.txt", i)] = strings.Repeat(fmt.Sprintf("host file %d\n", i), 300*(i+1))
			}
			_, s := localMount(t, files, tc.opts)
			env := "M=" + s.Dir()
			for i := range 3 {
				name := fmt.Sprintf("made%d.txt", i)
				files[name] = strings.Repeat(fmt.Sprintf("made file %d\n", i), 500*(i+1))
				require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), name), []byte(files[name]), 0o644))
			}
			// The kernel may reclaim the stored pages under memory
			// pressure before cat reads them (a loaded CI machine):
			// one file of each kind read with no READ is enough. A
			// mount that does not store sends READs for every file.
			for _, kind := range tc.kinds {
				var reads []int64
				for i := range 3 {
					name := fmt.Sprintf("%s%d.txt", kind, i)
					before := s.m.fileReads.Load()
					// stat first, as git does before it reads a
					// file it wrote: the kernel then has the
					// file's time after the writes.
					got := sh(t, `stat "$M/`+name+`" >/dev/null; cat "$M/`+name+`"`, env)
					reads = append(reads, s.m.fileReads.Load()-before)
					assert.True(t, got == files[name], "%s read back: %d bytes, want %d", name, len(got), len(files[name]))
				}
				assert.Contains(t, reads, int64(0), "READs for each first cat of a %s file", kind)
			}
		})
	}
}

// TestStoredPagesNeverStale: whatever the kernel held of a file before
// (pages of a longer version read earlier, a size it was told before the
// file shrank), a read through the mount returns the file as it is.
func TestStoredPagesNeverStale(t *testing.T) {
	for name, opts := range passthroughModes {
		t.Run(name, func(t *testing.T) {
			long, short := strings.Repeat("a", 10000), strings.Repeat("b", 100)
			root, s := localMount(t, map[string]string{"f.txt": long, "g.txt": long}, opts)
			env := "M=" + s.Dir()
			// Read, then rewritten shorter through the mount.
			require.True(t, sh(t, `cat "$M/f.txt"`, env) == long)
			require.NoError(t, os.WriteFile(filepath.Join(s.Dir(), "f.txt"), []byte(short), 0o644))
			assert.Equal(t, short, sh(t, `cat "$M/f.txt"`, env))
			// Its size known to the kernel (stat), then shrunk on the
			// host before its first open.
			assert.Equal(t, "10000\n", sh(t, `stat -c %s "$M/g.txt"`, env))
			require.NoError(t, os.WriteFile(filepath.Join(root, "g.txt"), []byte(short), 0o644))
			s.Settle()
			assert.Equal(t, short, sh(t, `cat "$M/g.txt"`, env))
			// Grown on the host after its pages were stored.
			require.NoError(t, os.WriteFile(filepath.Join(root, "g.txt"), []byte(long), 0o644))
			s.Settle()
			assert.True(t, sh(t, `cat "$M/g.txt"`, env) == long, "g.txt grown on the host, read through the mount")
		})
	}
}
