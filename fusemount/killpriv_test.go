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
// (FUSE_HANDLE_KILLPRIV_V2, killpriv.go): at a chown (root's too, a
// FIFO's too), and at a write, a truncate or an open with O_TRUNC by
// another user, whether the file is written in place (empty, or just
// made) or staged, through passthrough or through the daemon; the change
// shows at once, while the file is still open, and on the host. Root's
// writes in place keep the bits, and a set-group-ID bit without group
// execute (mandatory locking) stays for root and for a user in the
// file's group, as on a local disk (Linux 6.2+). The kernel's GETATTR before each chown is what the
// daemon doing it saves: the chown's SETATTR carries no mode (--debug
// trace).
func TestSetIDBitsCleared(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown and acting as another user need root")
	}
	nobody := `setpriv --reuid=65534 --regid=65534 --clear-groups bash -euc `
	cases := []struct {
		name      string
		mode      string // of f, made by root
		data      string // in f before
		script    string // run in f's directory
		want      string // f's mode after (stat %a), at once and on the host
		gone      bool   // the script unlinks f and prints the mode itself
		localOnly bool   // temp: has no such file (a FIFO)
	}{
		{name: "chown", mode: "6755", data: "x", script: `chown 65534 f`, want: "755"},
		{name: "chown to the same owner", mode: "6755", data: "x", script: `chown 0:0 f`, want: "755"},
		{name: "chown by root keeps setgid without group execute", mode: "6745", data: "x", script: `chown 65534 f`, want: "2745"},
		{name: "chown by an owner outside the group clears setgid without group execute", mode: "6745", data: "x",
			script: `chown 65534:0 f && chmod 2745 f && ` + nobody + `'chown 65534 f'`, want: "745"},
		{name: "chown of a FIFO", mode: "6777", script: `rm f && mkfifo f && chmod 6777 f && chown 0:0 f`, want: "777", localOnly: true},
		{name: "write by another user, in place", mode: "6777", script: nobody + `'printf x >> f'`, want: "777"},
		{name: "write by another user, staged", mode: "6777", data: "x", script: nobody + `'printf x >> f'`, want: "777"},
		{name: "write by another user, seen while open", mode: "4777", script: nobody + `'exec 3>>f; printf x >&3; stat -c %a f >&2; exec 3>&-'`, want: "777"},
		{name: "truncate by another user", mode: "6777", data: "xyz", script: nobody + `'truncate -s 1 f'`, want: "777"},
		{name: "truncate by another user, in place", mode: "6777", script: nobody + `'truncate -s 5 f'`, want: "777"},
		{name: "O_TRUNC by another user", mode: "6777", data: "xyz", script: nobody + `': > f'`, want: "777"},
		{name: "O_TRUNC by another user, in place", mode: "6777", script: nobody + `': > f'`, want: "777"},
		{name: "write by root keeps them, in place", mode: "6777", script: `printf x >> f`, want: "6777"},
		{name: "truncate by root keeps them", mode: "6777", script: `truncate -s 5 f`, want: "6777"},
		{name: "write by a user in the group keeps setgid without group execute", mode: "6767",
			script: `chgrp 65534 f && chmod 6767 f && ` + nobody + `'printf x >> f'`, want: "2767"},
		{name: "write by a user outside the group clears setgid without group execute", mode: "6767", script: nobody + `'printf x >> f'`, want: "767"},
		{name: "chown(f, -1, -1) by root keeps setgid without group execute", mode: "6745", data: "x",
			script: `chown 0:65534 f && chmod 6745 f && perl -e 'chown(-1, -1, "f") or die $!'`, want: "2745"},
		{name: "chown(f, -1, -1) of a FIFO", mode: "6777", script: `rm f && mkfifo f && chmod 6777 f && perl -e 'chown(-1, -1, "f") or die $!'`, want: "777", localOnly: true},
		{name: "chown by root without CAP_FSETID outside the group clears setgid without group execute", mode: "2745", data: "x",
			script: `chown 0:65534 f && chmod 2745 f && setpriv --bounding-set=-fsetid --inh-caps=-fsetid chown 1 f`, want: "745"},
		{name: "chown of an open file unlinked", mode: "6755", data: "x", script: `exec 3<f && rm f && chown 65534 /dev/fd/3 && stat -L -c %a /dev/fd/3`, want: "755", gone: true},
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
					if c.localOnly && tr.temp {
						t.Skip("temp: has no FIFOs")
					}
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

// TestSetIDBitsClearedAtWrite: a write by another user through the
// daemon clears a set-ID bit the kernel did not know the file had (set
// on the host while the writer held the file open), on the word of the
// WRITE request alone (WRITE_KILL_SUIDGID: go-fuse serves WRITE through
// Writev, which the mount marks). With passthrough such a write never
// reaches the daemon (killpriv.go).
func TestSetIDBitsClearedAtWrite(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("acting as another user needs root")
	}
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	logs := newTestLog(t)
	s := mountT(t, newLocal(t, dir), Options{AllowOther: true, NoPassthrough: true, Debug: true, Logger: logs.logger()})
	// FIFOs the writer (nobody) can reach, to order its open, the host's
	// chmod and its write.
	fifos, err := os.MkdirTemp("", "julyfs-killpriv-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(fifos) })
	require.NoError(t, os.Chmod(fifos, 0o777))
	script := `cd "$M" && : > f && chmod 777 f && stat -c %a f >/dev/null
mkfifo -m 666 "$T/opened" "$T/go"
setpriv --reuid=65534 --regid=65534 --clear-groups bash -euc 'exec 3<>f; echo > "$T/opened"; read x < "$T/go"; printf x >&3; exec 3>&-' &
w=$!
read x < "$T/opened"
chmod 4777 "$H/f"
sleep 0.2 # the host watch hears it: the kernel drops the mode it holds, not its inode's
echo > "$T/go"
wait $w
stat -c %a "$H/f"`
	before := len(logs.String())
	out, errOut, err := shErr(t, script, "M="+s.Dir(), "H="+dir, "T="+fifos)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", out, errOut)
	trace := logs.String()[before:]
	require.Regexp(t, `WRITE n\d+ \{[^}]*KILL_SUIDGID`, trace)
	assert.Equal(t, "777\n", out, "the host file's mode after the write")
}
