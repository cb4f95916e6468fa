package fusemount

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs/local"
)

// fuseFlags returns the open flags of each of this process's /dev/fuse
// descriptors, by number (/proc/self/fdinfo).
func fuseFlags(t *testing.T) map[int]int {
	t.Helper()
	flags := map[int]int{}
	for _, fd := range fuseFDs() {
		info, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(fd))
		require.NoError(t, err)
		for _, line := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(line, "flags:"); ok {
				f, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
				require.NoError(t, err)
				flags[fd] = int(f)
			}
		}
	}
	return flags
}

// TestReadersWaitInPoll: by default go-fuse's readers wait for requests in
// poll(2) on a non-blocking /dev/fuse (fuse.MountOptions.PollReaders);
// BlockingReads keeps go-fuse's blocking read(2). Either way every request
// of many processes' worth of parallel work is answered: a reader that
// woke to find the request taken waits again, and none stops serving; an
// idle mount costs next to no CPU (no reader spins on the descriptor).
func TestReadersWaitInPoll(t *testing.T) {
	requireFUSE(t)
	t.Setenv("JULYFS_FUSE_READS", "") // the environment would override the option
	for _, blocking := range []bool{false, true} {
		t.Run(fmt.Sprintf("blocking=%v", blocking), func(t *testing.T) {
			before := fuseFlags(t)
			lfs, err := local.New(t.TempDir())
			require.NoError(t, err)
			s := mountT(t, lfs, Options{BlockingReads: blocking})
			var mine []int
			for fd, f := range fuseFlags(t) {
				if _, ok := before[fd]; !ok {
					mine = append(mine, f)
				}
			}
			require.Len(t, mine, 1, "the mount's /dev/fuse descriptor")
			assert.Equal(t, !blocking, mine[0]&syscall.O_NONBLOCK != 0, "O_NONBLOCK on /dev/fuse (flags %o)", mine[0])

			const workers, files = 8, 150
			done := make(chan error, workers)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					dir := filepath.Join(s.Dir(), fmt.Sprintf("w%d", w))
					if err := os.Mkdir(dir, 0o755); err != nil {
						done <- err
						return
					}
					for i := range files {
						p := filepath.Join(dir, fmt.Sprintf("f%d", i))
						if err := os.WriteFile(p, []byte(p), 0o644); err != nil {
							done <- err
							return
						}
						if got, err := os.ReadFile(p); err != nil || string(got) != p {
							done <- fmt.Errorf("read %s: %q, %v", p, got, err)
							return
						}
						if _, err := os.Stat(p + ".missing"); !os.IsNotExist(err) {
							done <- fmt.Errorf("stat of a missing name: %v", err)
							return
						}
					}
					ents, err := os.ReadDir(dir)
					if err == nil && len(ents) != files {
						err = fmt.Errorf("%s lists %d entries, want %d", dir, len(ents), files)
					}
					done <- err
				}()
			}
			finished := make(chan struct{})
			go func() { wg.Wait(); close(finished) }()
			select {
			case <-finished:
			case <-time.After(60 * time.Second):
				t.Fatal("parallel work through the mount did not finish in 60 s: a request went unanswered")
			}
			for range workers {
				assert.NoError(t, <-done)
			}

			// Idle, the readers sleep in the kernel: a second of an idle
			// mount costs the process next to no CPU (readers that spun
			// on the non-blocking descriptor would cost a CPU or more).
			busy := cpuTime(t)
			time.Sleep(time.Second)
			assert.Less(t, cpuTime(t)-busy, 300*time.Millisecond, "CPU time of this process during one idle second of the mount")
		})
	}
}

// cpuTime is the user and system CPU time this process has used.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
