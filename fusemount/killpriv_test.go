package fusemount

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

// TestSetIDBitsCleared: the mount clears set-user-ID and set-group-ID
// bits where Linux does, now that the kernel leaves it to the daemon
// (FUSE_HANDLE_KILLPRIV_V2, killpriv.go): at a chown (root's too), and at
// a write, a truncate or an open with O_TRUNC by another user, whether
// the file is written in place (empty, or just made) or staged, through
// passthrough or through the daemon; the change shows at once, while the
// file is still open, and on the host. Root's writes keep the bits, and
// so does a set-group-ID bit without group execute (mandatory locking),
// as on a local disk. The kernel's GETATTR before each chown is what the
// daemon doing it saves: the chown's SETATTR carries no mode (--debug
// trace).
func TestSetIDBitsCleared(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown and acting as another user need root")
	}
	nobody := `setpriv --reuid=65534 --regid=65534 --clear-groups bash -euc `
	cases := []struct {
		name   string
		mode   string // of f, made by root
		data   string // in f before
		script string // run in f's directory
		want   string // f's mode after (stat %a), at once and on the host
		gone   bool   // the script unlinks f and prints the mode itself
	}{
		{"chown", "6755", "x", `chown 65534 f`, "755", false},
		{"chown to the same owner", "6755", "x", `chown 0:0 f`, "755", false},
		{"chown keeps setgid without group execute", "6745", "x", `chown 65534 f`, "2745", false},
		{"write by another user, in place", "6777", "", nobody + `'printf x >> f'`, "777", false},
		{"write by another user, staged", "6777", "x", nobody + `'printf x >> f'`, "777", false},
		{"write by another user, seen while open", "4777", "", nobody + `'exec 3>>f; printf x >&3; stat -c %a f >&2; exec 3>&-'`, "777", false},
		{"truncate by another user", "6777", "xyz", nobody + `'truncate -s 1 f'`, "777", false},
		{"truncate by another user, in place", "6777", "", nobody + `'truncate -s 5 f'`, "777", false},
		{"O_TRUNC by another user", "6777", "xyz", nobody + `': > f'`, "777", false},
		{"O_TRUNC by another user, in place", "6777", "", nobody + `': > f'`, "777", false},
		{"write by root keeps them", "6777", "", `printf x >> f`, "6777", false},
		{"truncate by root keeps them", "6777", "", `truncate -s 5 f`, "6777", false},
		{"write by another user keeps setgid without group execute", "6767", "", nobody + `'printf x >> f'`, "2767", false},
		{"chown of an open file unlinked", "6755", "x", `exec 3<f && rm f && chown 65534 /dev/fd/3 && stat -L -c %a /dev/fd/3`, "755", true},
	}
	trees := []struct {
		name string
		opts Options
		temp bool
	}{
		{name: "local"},
		{name: "local without passthrough", opts: Options{NoPassthrough: true}},
		{name: "local writing in place", opts: Options{WriteInPlace: true}},
		{name: "temp", temp: true},
	}
	for _, tr := range trees {
		t.Run(tr.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.Chmod(dir, 0o777))
			var fsys vfs.FileSystem = newLocal(t, dir)
			if tr.temp {
				fsys = temp.MustNew(nil)
			}
			logs := newTestLog(t)
			opts := tr.opts
			opts.AllowOther, opts.Debug, opts.Logger = true, true, logs.logger()
			s := mountT(t, fsys, opts)
			// Without the daemon clearing the bits, the kernel asks for
			// the mode before a chown and sends the mode it computed
			// with the owner.
			kernelKills := regexp.MustCompile(`SETATTR n\d+ \{mode 0[0-7]+, [ug]id`)
			for i, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					// A directory of its own, which root makes and
					// others may enter, holding f.
					sub := fmt.Sprintf("c%d", i)
					env := []string{"C=" + filepath.Join(s.Dir(), sub), "D=" + c.data, "MODE=" + c.mode}
					sh(t, `mkdir "$C" && cd "$C" && printf %s "$D" > f && chmod "$MODE" f && stat -c %a f >/dev/null`, env...)
					before := len(logs.String())
					script := `cd "$C" && ` + c.script
					if !c.gone {
						script += ` && stat -c %a f`
					}
					out, errOut, err := shErr(t, script, env...)
					require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", out, errOut)
					assert.Equal(t, c.want+"\n", out)
					if strings.Contains(c.name, "seen while open") {
						assert.Equal(t, c.want+"\n", errOut, "the mode shown while the writer holds the file open")
					}
					if !tr.temp && !c.gone {
						var st syscall.Stat_t
						require.NoError(t, syscall.Stat(filepath.Join(dir, sub, "f"), &st))
						assert.Equal(t, c.want, strconv.FormatUint(uint64(st.Mode&0o7777), 8), "on the host")
					}
					if strings.HasPrefix(c.name, "chown") {
						trace := logs.String()[before:]
						assert.Contains(t, trace, "SETATTR")
						assert.NotRegexp(t, kernelKills, trace, "the kernel cleared the bits itself")
					}
				})
			}
		})
	}
}
