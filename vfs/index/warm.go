package index

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// warmStore asks the kernel to read the index's segment files (scorch's
// *.zap files under dir/bleve/store, which zap maps into memory) into the
// page cache, and returns the number of files it asked for. It does not
// wait for the reads: posix_fadvise(POSIX_FADV_WILLNEED) starts them and
// returns, so it costs the process a few system calls, and pages already
// cached cost nothing more.
//
// Without it, a query's first run in a process paid for the segment pages
// it touched that the page cache no longer held, one major page fault at
// a time, while the later runs of the same query found them cached: at
// 8x (224 MiB of segments) a first run took up to 110–200 ms against
// 30 ms for later ones (docs/perf/index.md). Errors are ignored: warming
// is an optimisation, and a segment that cannot be opened here is
// reported by the search that needs it.
func warmStore(dir string) int {
	store := filepath.Join(dir, bleveDir, storeDir)
	ents, err := os.ReadDir(store)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".zap") {
			continue
		}
		fd, err := unix.Open(filepath.Join(store, e.Name()), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		if warmFile(fd) {
			n++
		}
		unix.Close(fd)
	}
	return n
}

// warmChunk is the length of file asked for by one posix_fadvise call:
// asked for a whole file at once, Linux read only its first 20 MiB.
const warmChunk = 4 << 20

// warmFile asks for the whole of the open file fd, a chunk at a time.
func warmFile(fd int) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	for off := int64(0); off < st.Size; off += warmChunk {
		if unix.Fadvise(fd, off, warmChunk, unix.FADV_WILLNEED) != nil {
			return false
		}
	}
	return true
}
