package fusemount

import (
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs/local"
)

// BenchmarkRemoveTree measures `rm -rf` through the default mount of a
// local: tree on tmpfs (/dev/shm) of 100 directories of 100 small files,
// made on the host before each round and mounted then (untimed): the UNLINK and RMDIR path
// of the daemon, with its host watch running. Run it with -cpuprofile to
// see where the daemon's time goes (the daemon runs in the test process):
//
//	go test ./fusemount -run - -bench RemoveTree -benchtime 5x -cpuprofile /tmp/rm.prof
func BenchmarkRemoveTree(b *testing.B) {
	requireFUSE(b)
	const dirs, files = 100, 100
	host, err := os.MkdirTemp("/dev/shm", "julyfs-bench-rm-")
	if err != nil {
		b.Skipf("no tmpfs at /dev/shm: %v", err)
	}
	b.Cleanup(func() { os.RemoveAll(host) })
	// The files are made once, outside the mount and the host directory,
	// and copied in by cp before each round: a profile of the test
	// process is the daemon's alone.
	tmpl := filepath.Join(b.TempDir(), "tree")
	data := make([]byte, 1024)
	for d := range dirs {
		dir := filepath.Join(tmpl, fmt.Sprintf("d%03d", d))
		require.NoError(b, os.MkdirAll(dir, 0o755))
		for f := range files {
			require.NoError(b, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", f)), data, 0o644))
		}
	}
	b.ResetTimer()
	b.StopTimer()
	for i := range b.N {
		// A host directory of its own per round: the mounts of the
		// rounds before (unmounted at the end) watch theirs, and
		// would hear this round's copy in a shared one.
		root := filepath.Join(host, fmt.Sprintf("r%d", i))
		require.NoError(b, os.Mkdir(root, 0o755))
		out, err := exec.Command("cp", "-a", tmpl, root).CombinedOutput()
		require.NoError(b, err, "%s", out)
		// Mounted after the copy, so the daemon does not hear its
		// creates; its host watch is started (a watch per directory)
		// before the timing starts.
		fsys, err := local.New(root)
		require.NoError(b, err)
		b.Cleanup(func() { fsys.Close() })
		s := mountT(b, fsys, Options{})
		waitHostWatched(b, s)
		b.StartTimer()
		out, err = exec.Command("rm", "-rf", filepath.Join(s.Dir(), "tree")).CombinedOutput()
		b.StopTimer()
		require.NoError(b, err, "%s", out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*dirs*files), "ns/file")
}

// BenchmarkExtractTar measures `tar -xf` of GOROOT/src/net (about 420
// files) into a fresh directory of the default mount of a local: tree on
// tmpfs (/dev/shm) per round: the CREATE, SETATTR and FLUSH path of the
// daemon. With -cpuprofile, the daemon's profile (as above):
//
//	go test ./fusemount -run - -bench ExtractTar -benchtime 20x -cpuprofile /tmp/tar.prof
func BenchmarkExtractTar(b *testing.B) {
	requireFUSE(b)
	src := filepath.Join(build.Default.GOROOT, "src", "net")
	tarball := filepath.Join(b.TempDir(), "net.tar")
	out, err := exec.Command("tar", "-cf", tarball, "-C", filepath.Dir(src), filepath.Base(src)).CombinedOutput()
	require.NoError(b, err, "%s", out)
	host, err := os.MkdirTemp("/dev/shm", "julyfs-bench-tar-")
	if err != nil {
		b.Skipf("no tmpfs at /dev/shm: %v", err)
	}
	b.Cleanup(func() { os.RemoveAll(host) })
	fsys, err := local.New(host)
	require.NoError(b, err)
	b.Cleanup(func() { fsys.Close() })
	s := mountT(b, fsys, Options{})
	waitHostWatched(b, s)
	b.ResetTimer()
	for i := range b.N {
		dst := filepath.Join(s.Dir(), fmt.Sprintf("x%d", i))
		require.NoError(b, os.Mkdir(dst, 0o755))
		out, err := exec.Command("tar", "-xf", tarball, "-C", dst).CombinedOutput()
		require.NoError(b, err, "%s", out)
	}
}

// waitHostWatched waits (10 s at most) until the mount's host watch has
// started: a watch per directory, set up in the background.
func waitHostWatched(b *testing.B, s *Server) {
	b.Helper()
	for deadline := time.Now().Add(10 * time.Second); !s.HostWatched() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	require.True(b, s.HostWatched(), "the host watch started")
}
