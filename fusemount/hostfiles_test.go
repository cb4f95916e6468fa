package fusemount_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/fusemount"
	"github.com/julyfs/julyfs/vfs/hostfiles"
	"github.com/julyfs/julyfs/vfs/hostfiles/diskstore"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore/pgtest"
)

// TestHostfilesTwoMounts stands for two hosts: two store values on one
// store, each served by its own FUSE mount with kernel caches kept for a
// minute. A file written through mount A is seen through mount B, whose
// kernel had it cached, because B's tree hears the change from the store's
// feed and the mount drops the kernel's copy; without the notification B
// would serve the old contents for the whole minute.
func TestHostfilesTwoMounts(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs /dev/fuse and root")
	}
	stores := map[string]func(t *testing.T) (hostfiles.Store, hostfiles.Store){
		"disk": func(t *testing.T) (hostfiles.Store, hostfiles.Store) {
			dir := t.TempDir()
			a, err := diskstore.Open(dir, diskstore.Options{})
			require.NoError(t, err)
			b, err := diskstore.Open(dir, diskstore.Options{})
			require.NoError(t, err)
			return a, b
		},
		"pg": func(t *testing.T) (hostfiles.Store, hostfiles.Store) {
			url := pgtest.URL(t)
			a, err := pgstore.Open(context.Background(), url+"&application_name=fuse-a", pgstore.Options{})
			require.NoError(t, err)
			b, err := pgstore.Open(context.Background(), url+"&application_name=fuse-b", pgstore.Options{})
			require.NoError(t, err)
			return a, b
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			a, b := open(t)
			t.Cleanup(func() { a.Close(); b.Close() })
			sc := hostfiles.Scope("fuse-" + name + "-" + time.Now().Format("150405.000000"))
			fa, err := hostfiles.New(a, sc)
			require.NoError(t, err)
			fb, err := hostfiles.New(b, sc)
			require.NoError(t, err)
			opts := fusemount.Options{EntryTimeout: time.Minute, AttrTimeout: time.Minute}
			ma := mountHostfiles(t, fa, opts)
			mb := mountHostfiles(t, fb, opts)

			pa, pb := filepath.Join(ma.Dir(), "notes.md"), filepath.Join(mb.Dir(), "notes.md")
			require.NoError(t, os.WriteFile(pa, []byte("version one\n"), 0o644))
			waitContent(t, pb, "version one\n") // B's kernel now caches it
			got, err := os.ReadFile(pb)
			require.NoError(t, err)
			require.Equal(t, "version one\n", string(got))

			require.NoError(t, os.WriteFile(pa, []byte("version two, longer\n"), 0o644))
			waitContent(t, pb, "version two, longer\n")

			require.NoError(t, os.Remove(pa))
			deadline := time.Now().Add(10 * time.Second)
			for {
				if _, err := os.Stat(pb); os.IsNotExist(err) {
					break
				}
				require.True(t, time.Now().Before(deadline), "B still shows %s 10 s after A removed it", pb)
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

func mountHostfiles(t *testing.T, fsys *hostfiles.FS, opts fusemount.Options) *fusemount.Server {
	dir := filepath.Join(t.TempDir(), "mnt")
	require.NoError(t, os.Mkdir(dir, 0o755))
	s, err := fusemount.Mount(dir, fsys, opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		done := make(chan error, 1)
		go func() { done <- s.Unmount() }()
		select {
		case err := <-done:
			if err != nil {
				fusemount.Unmount(dir, true)
			}
		case <-time.After(15 * time.Second):
			fusemount.Unmount(dir, true)
		}
	})
	return s
}

// waitContent waits, at most 10 s, until the file at p holds want.
func waitContent(t *testing.T, p, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var got []byte
	for time.Now().Before(deadline) {
		got, _ = os.ReadFile(p)
		if bytes.Equal(got, []byte(want)) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	assert.Failf(t, "stale file", "%s = %q 10 s later, want %q", p, got, want)
	t.FailNow()
}

// BenchmarkHostfilesInvalidation measures, through two FUSE mounts of two
// store values (two "hosts"), the time from a write through mount A until
// a read through mount B returns it (B polled every 0.5 ms), p50 and p99.
func BenchmarkHostfilesInvalidation(b *testing.B) {
	if _, err := os.Stat("/dev/fuse"); err != nil || os.Geteuid() != 0 {
		b.Skip("needs /dev/fuse and root")
	}
	for _, name := range []string{"disk", "pg"} {
		b.Run(name, func(b *testing.B) {
			var a, bs hostfiles.Store
			var err error
			switch name {
			case "disk":
				dir := b.TempDir()
				a, err = diskstore.Open(dir, diskstore.Options{})
				require.NoError(b, err)
				bs, err = diskstore.Open(dir, diskstore.Options{})
				require.NoError(b, err)
			case "pg":
				url := os.Getenv(pgtest.EnvURL)
				if url == "" {
					b.Skip(pgtest.EnvURL + " is not set")
				}
				a, err = pgstore.Open(context.Background(), url+"&application_name=fbench-a", pgstore.Options{})
				require.NoError(b, err)
				bs, err = pgstore.Open(context.Background(), url+"&application_name=fbench-b", pgstore.Options{})
				require.NoError(b, err)
			}
			b.Cleanup(func() { a.Close(); bs.Close() })
			sc := hostfiles.Scope("fbench-" + name + "-" + time.Now().Format("150405.000000"))
			fa, err := hostfiles.New(a, sc)
			require.NoError(b, err)
			fb, err := hostfiles.New(bs, sc)
			require.NoError(b, err)
			opts := fusemount.Options{EntryTimeout: time.Minute, AttrTimeout: time.Minute}
			ma, mb := mountBench(b, fa, opts), mountBench(b, fb, opts)
			pa, pb := filepath.Join(ma.Dir(), "f"), filepath.Join(mb.Dir(), "f")
			var lat []time.Duration
			b.ResetTimer()
			for range b.N {
				want := []byte("version " + time.Now().Format(time.RFC3339Nano) + "\n")
				t0 := time.Now()
				require.NoError(b, os.WriteFile(pa, want, 0o644))
				for {
					got, _ := os.ReadFile(pb)
					if bytes.Equal(got, want) {
						break
					}
					if time.Since(t0) > 10*time.Second {
						b.Fatalf("B did not see A's write within 10 s")
					}
					time.Sleep(500 * time.Microsecond)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "visible-p50-µs")
			b.ReportMetric(float64(lat[(len(lat)-1)*99/100].Microseconds()), "visible-p99-µs")
		})
	}
}

func mountBench(b *testing.B, fsys *hostfiles.FS, opts fusemount.Options) *fusemount.Server {
	dir := filepath.Join(b.TempDir(), "mnt")
	require.NoError(b, os.Mkdir(dir, 0o755))
	s, err := fusemount.Mount(dir, fsys, opts)
	require.NoError(b, err)
	b.Cleanup(func() {
		if s.Unmount() != nil {
			fusemount.Unmount(dir, true)
		}
	})
	return s
}

// TestHostfilesMountConflict: a save through mount B of a file host A
// changed after B read it fails with EEXIST and A's change stays; an
// append (which reads the file first) works on A's version.
func TestHostfilesMountConflict(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs /dev/fuse and root")
	}
	dir := t.TempDir()
	a, err := diskstore.Open(dir, diskstore.Options{})
	require.NoError(t, err)
	b, err := diskstore.Open(dir, diskstore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close(); b.Close() })
	fa, err := hostfiles.New(a, hostfiles.Deployment)
	require.NoError(t, err)
	fb, err := hostfiles.New(b, hostfiles.Deployment)
	require.NoError(t, err)
	opts := fusemount.Options{EntryTimeout: time.Minute, AttrTimeout: time.Minute}
	ma, mb := mountHostfiles(t, fa, opts), mountHostfiles(t, fb, opts)
	pa, pb := filepath.Join(ma.Dir(), "n"), filepath.Join(mb.Dir(), "n")
	require.NoError(t, os.WriteFile(pa, []byte("one\n"), 0o644))
	waitContent(t, pb, "one\n") // B has read version one
	require.NoError(t, os.WriteFile(pa, []byte("two\n"), 0o644))
	err = os.WriteFile(pb, []byte("three from b\n"), 0o644)
	require.ErrorIs(t, err, syscall.EEXIST, "B's save over A's change")
	got, err := os.ReadFile(pa)
	require.NoError(t, err)
	assert.Equal(t, "two\n", string(got), "A's change is kept")
	f, err := os.OpenFile(pb, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte("appended\n"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	got, err = os.ReadFile(pa)
	require.NoError(t, err)
	assert.Equal(t, "two\nappended\n", string(got))
}
