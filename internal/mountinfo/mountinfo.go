// Package mountinfo reads the kernel's mount table (/proc/self/mountinfo)
// without touching the mounted directories: a stat of a FUSE mount whose
// server has stopped would hang, a read of the table does not. It is
// small so that programs that must start fast (julyfs, the mount helper)
// can ask what is mounted without linking the FUSE library.
package mountinfo

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
)

// Mount is one line of the mount table.
type Mount struct {
	// Dir is the mount point, unescaped.
	Dir string
	// Type is the filesystem type, such as fuse.julyfs or tmpfs.
	Type string
	// Source is the mounted source (the fsname of a FUSE mount).
	Source string
	// Options are the mount's per-mount options (rw, nosuid, ...).
	Options string
}

// At returns the mount at the absolute, clean path dir (the last one
// when several are stacked there), and whether there is one.
func At(dir string) (Mount, bool, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return Mount{}, false, fmt.Errorf("reading the mount table: %w", err)
	}
	return parseAt(data, dir)
}

// parseAt is At on the table's text.
func parseAt(data []byte, dir string) (Mount, bool, error) {
	var found Mount
	ok := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		fields := strings.Fields(sc.Text())
		if len(fields) < 7 || Unescape(fields[4]) != dir {
			continue
		}
		found, ok = Mount{Dir: dir, Options: fields[5]}, true
		for i := 6; i < len(fields)-1; i++ {
			if fields[i] == "-" {
				found.Type = fields[i+1]
				if i+2 < len(fields) {
					found.Source = Unescape(fields[i+2])
				}
				break
			}
		}
	}
	return found, ok, sc.Err()
}

// Unescape undoes the octal escapes (\040 for a space) of the table.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, ok := octal(s[i+1 : i+4]); ok {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func octal(s string) (byte, bool) {
	var v int
	for _, c := range []byte(s) {
		if c < '0' || c > '7' {
			return 0, false
		}
		v = v*8 + int(c-'0')
	}
	return byte(v), v < 256
}
