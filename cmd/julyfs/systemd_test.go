package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nsSetup runs as PID 1 of the test's new pid, mount and cgroup
// namespaces, then becomes systemd. Nothing systemd starts may change the
// host: every mount but the test's directory (and /proc, /sys, /dev) is
// read-only in here, /run is a tmpfs of its own, the helper goes into an
// overlay on /usr/sbin, /etc/fstab is the test's, and /dev/console (where
// systemd logs, and the units' output goes) a pty the test reads. systemd loads units
// only from the test's directory and the fstab generator's output, and runs
// no generator but that one: with the host's units, a service's default
// dependencies pull in sysinit.target, whose systemd-tmpfiles-setup.service
// empties the host's /tmp.
const nsSetup = `set -eu
B=$1
mount --bind "$B" "$B"
for m in $(awk '{print $5}' /proc/self/mountinfo); do
  case "$m" in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*|"$B") continue;; esac
  mount -o remount,bind,ro "$m"
done
mount -t tmpfs -o mode=0755 tmpfs /run
mount --bind "$B/fstab" /etc/fstab
mount --bind "$2" /dev/console
mkdir -p "$B/sbin/upper" "$B/sbin/work"
mount -t overlay overlay -o "lowerdir=/usr/sbin,upperdir=$B/sbin/upper,workdir=$B/sbin/work" /usr/sbin
"$B/bin/julyfs" install-helper --dir /sbin
mount -t cgroup2 cgroup2 /sys/fs/cgroup
exec env -i container=julyfs-test PATH=/usr/sbin:/usr/bin:/sbin:/bin \
  SYSTEMD_UNIT_PATH="$B/units:/run/systemd/generator" SYSTEMD_GENERATOR_PATH="$B/generators" \
  /lib/systemd/systemd --system --unit=julyfs-test.target --log-target=console \
  --default-standard-output=tty --default-standard-error=tty
`

// A unit with no dependencies: the target systemd starts, and the targets
// the units' default dependencies name.
const stubTarget = "[Unit]\nDefaultDependencies=no\n"

// TestSystemdMounts runs a real systemd (PID 1 of its own pid, mount and
// cgroup namespaces, as in a container) and has it mount julyfs the two
// ways docs/mount.md gives: the .mount units systemd-fstab-generator makes
// from fstab lines and one written directly (the helper in /sbin doing the
// mount), and a Type=notify service running julyfs mount --foreground. Each is started and stopped
// with systemctl; the mounts answer once systemctl start returns and are
// gone once systemctl stop does.
func TestSystemdMounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runs systemd in new namespaces and mounts: root only")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	const systemd = "/lib/systemd/systemd"
	const fstabGenerator = "/lib/systemd/system-generators/systemd-fstab-generator"
	for _, p := range []string{systemd, fstabGenerator} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("no %s (Debian package systemd)", p)
		}
	}
	for _, tool := range []string{"unshare", "nsenter", "systemctl", "systemd-escape", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	cgroup := cgroup2Dir(t)

	b := t.TempDir()
	julyfs, julyfsd := built(t)
	for _, p := range []string{julyfs, julyfsd} {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(b, "bin"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(b, "bin", filepath.Base(p)), data, 0o755))
	}
	self := filepath.Join(b, "bin", "julyfs")
	src := filepath.Join(b, "srv", "agent")
	tree := filepath.Join(b, "tree.yaml")
	mntAgent := filepath.Join(b, "mnt", "agent")
	mntTree := filepath.Join(b, "mnt", "tree")
	mntSvc := filepath.Join(b, "mnt", "svc")
	mntDirect := filepath.Join(b, "mnt", "direct")
	for _, d := range []string{src, mntAgent, mntTree, mntSvc, mntDirect, filepath.Join(b, "units"), filepath.Join(b, "generators")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	write := func(path, text string) {
		t.Helper()
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	write(filepath.Join(src, "hello.txt"), "hello from the host\n")
	write(tree, "mounts:\n  /host: { local: "+src+" }\n  /notes:\n    temp: { /todo.md: \"seeded\\n\" }\n")
	// The two lines of docs/mount.md's fstab, at the test's directories.
	write(filepath.Join(b, "fstab"), "# SOURCE DIR TYPE OPTIONS DUMP PASS\n"+
		src+"  "+mntAgent+"  fuse.julyfs  ro,allow_other,_netdev  0 0\n"+
		"agent  "+mntTree+"  fuse.julyfs  config="+tree+",allow_other,nofail  0 0\n")
	// docs/mount.md's .mount unit written directly, at the test's paths.
	unitDirect := escapeMount(t, mntDirect)
	write(filepath.Join(b, "units", unitDirect), "[Unit]\nDescription=julyfs agent tree\n\n"+
		"[Mount]\nWhat="+src+"\nWhere="+mntDirect+"\nType=fuse.julyfs\nOptions=ro,allow_other,_netdev\n\n"+
		"[Install]\nWantedBy=multi-user.target\n")
	// docs/mount.md's service, at the test's paths.
	write(filepath.Join(b, "units", "julyfs-agent.service"), "[Service]\nType=notify\n"+
		"ExecStart="+self+" mount --foreground --config "+tree+" --allow-other "+mntSvc+"\n"+
		"ExecStop="+self+" unmount "+mntSvc+"\n")
	for _, u := range []string{"julyfs-test.target", "sysinit.target", "basic.target", "shutdown.target"} {
		write(filepath.Join(b, "units", u), stubTarget)
	}
	require.NoError(t, os.Symlink(fstabGenerator, filepath.Join(b, "generators", filepath.Base(fstabGenerator))))
	write(filepath.Join(b, "ns-setup.sh"), nsSetup)

	// systemd's manager, in a cgroup of its own under the test's.
	require.NoError(t, os.Mkdir(cgroup, 0o755))
	t.Cleanup(func() { removeCgroup(t, cgroup) })
	cgfd, err := os.Open(cgroup)
	require.NoError(t, err)
	defer cgfd.Close()
	// systemd's messages and the units' output: the namespace's
	// /dev/console is this pty.
	console, consoleTTY, err := pty.Open()
	require.NoError(t, err)
	consoleLog := &syncBuffer{}
	copied := make(chan struct{})
	go func() { io.Copy(consoleLog, console); close(copied) }()
	defer consoleTTY.Close()
	t.Cleanup(func() {
		console.Close()
		<-copied
	})
	// The setup's output.
	logPath := filepath.Join(b, "output")
	logf, err := os.Create(logPath)
	require.NoError(t, err)
	defer logf.Close()
	cmd := exec.Command("unshare", "--cgroup", "--pid", "--fork", "--kill-child", "--mount",
		"--propagation", "private", "--mount-proc", "sh", filepath.Join(b, "ns-setup.sh"), b, consoleTTY.Name())
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, UseCgroupFD: true, CgroupFD: int(cgfd.Fd())}
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	pid := 0 // systemd's, in the test's pid namespace
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := os.ReadFile(logPath)
			t.Logf("setup:\n%s\nsystemd's console:\n%s", logs, consoleLog)
			if pid != 0 {
				out, _ := systemctl(pid, "status", "--all")
				t.Logf("systemctl status --all:\n%s", out)
				if logs, err := filepath.Glob(fmt.Sprintf("/proc/%d/root/run/julyfs/*.log", pid)); err == nil {
					for _, l := range logs {
						data, _ := os.ReadFile(l)
						t.Logf("%s:\n%s", filepath.Base(l), data)
					}
				}
			}
		}
		// Killing PID 1 of the namespace kills everything in it, julyfsd
		// too; the namespace's mounts go with its last process.
		// unshare waits for it and exits (killed first, it would leave
		// systemd to the host's PID 1 to reap).
		if pid != 0 {
			syscall.Kill(pid, syscall.SIGKILL)
			select {
			case <-exited:
				return
			case <-time.After(10 * time.Second):
			}
		}
		cmd.Process.Kill()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Errorf("unshare still running 10s after SIGKILL")
		}
	})

	deadline := time.Now().Add(10 * time.Second)
	for pid == 0 {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
		if f := strings.Fields(string(data)); len(f) > 0 {
			pid, _ = strconv.Atoi(f[0])
			break
		}
		select {
		case <-exited:
			logs, _ := os.ReadFile(logPath)
			t.Fatalf("unshare exited: %v\n%s", cmd.ProcessState, logs)
		default:
		}
		require.True(t, time.Now().Before(deadline), "no systemd 10s after unshare started")
		time.Sleep(10 * time.Millisecond)
	}
	deadline = time.Now().Add(20 * time.Second)
	for {
		out, _ := systemctl(pid, "is-system-running")
		if out == "running\n" {
			break
		}
		select {
		case <-exited:
			logs, _ := os.ReadFile(logPath)
			t.Fatalf("systemd exited: %v\n%s", cmd.ProcessState, logs)
		default:
		}
		require.True(t, time.Now().Before(deadline), "systemd not running 20s after it started: %q", out)
		time.Sleep(50 * time.Millisecond)
	}

	root := fmt.Sprintf("/proc/%d/root", pid) // the namespace's view of the files
	sctl := func(args ...string) string {
		t.Helper()
		out, err := systemctl(pid, args...)
		require.NoError(t, err, "systemctl %s: %s", strings.Join(args, " "), out)
		return out
	}
	show := func(unit, prop string) string {
		t.Helper()
		return strings.TrimSpace(sctl("show", "--value", "-p", prop, unit))
	}
	mountAt := func(dir string) (fstype, opts string, ok bool) {
		t.Helper()
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
		require.NoError(t, err)
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			if len(f) < 10 || f[4] != dir {
				continue
			}
			for i, x := range f {
				if x == "-" && i+1 < len(f) {
					return f[i+1], f[5], true
				}
			}
		}
		return "", "", false
	}
	gone := func(dir string) {
		t.Helper()
		_, _, ok := mountAt(dir)
		assert.False(t, ok, "%s still mounted once systemctl stop returned", dir)
	}
	// julyfsd processes left in the namespace, waited for up to 10s.
	noDaemons := func() {
		t.Helper()
		ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
		require.NoError(t, err)
		deadline := time.Now().Add(10 * time.Second)
		for {
			var left []string
			procs, _ := filepath.Glob("/proc/[0-9]*")
			for _, p := range procs {
				if n, _ := os.Readlink(p + "/ns/pid"); n != ns {
					continue
				}
				if comm, _ := os.ReadFile(p + "/comm"); strings.TrimSpace(string(comm)) == "julyfsd" {
					left = append(left, p)
				}
			}
			if len(left) == 0 {
				return
			}
			require.True(t, time.Now().Before(deadline), "julyfsd still running 10s after its unit stopped: %v", left)
			time.Sleep(20 * time.Millisecond)
		}
	}

	// The guards: the host's units are not there to start, and its files
	// are read-only.
	assert.Equal(t, "not-found", show("systemd-tmpfiles-setup.service", "LoadState"))
	fstype, opts, ok := mountAt("/")
	require.True(t, ok)
	assert.True(t, strings.HasPrefix(opts, "ro"), "/ read-only in the namespace: %s", opts)

	// The fstab lines: systemd-fstab-generator's units.
	unitAgent := escapeMount(t, mntAgent)
	unitTree := escapeMount(t, mntTree)
	text := sctl("cat", unitAgent)
	assert.Contains(t, text, "# Automatically generated by systemd-fstab-generator")
	assert.Contains(t, text, "\n[Mount]\nWhat="+src+"\nWhere="+mntAgent+"\nType=fuse.julyfs\nOptions=ro,allow_other,_netdev\n")
	text = sctl("cat", unitTree)
	assert.Contains(t, text, "\n[Mount]\nWhat=agent\nWhere="+mntTree+"\nType=fuse.julyfs\nOptions=config="+tree+",allow_other,nofail\n")

	// _netdev makes a network mount: after the network is up, not a local
	// one ordered before local-fs.target, early in boot.
	for _, u := range []string{unitAgent, unitDirect} {
		assert.Contains(t, strings.Fields(show(u, "After")), "network-online.target", u)
		assert.Contains(t, strings.Fields(show(u, "Wants")), "network-online.target", u)
		assert.Contains(t, strings.Fields(show(u, "Before")), "remote-fs.target", u)
		assert.NotContains(t, strings.Fields(show(u, "Before")), "local-fs.target", u)
	}

	sctl("start", unitAgent, unitTree)
	assert.Equal(t, "mounted", show(unitAgent, "SubState"))
	fstype, opts, ok = mountAt(mntAgent)
	require.True(t, ok, "%s mounted", mntAgent)
	assert.Equal(t, "fuse.julyfs", fstype)
	assert.True(t, strings.HasPrefix(opts, "ro"), "read-only: %s", opts)
	data, err := os.ReadFile(root + mntAgent + "/hello.txt")
	require.NoError(t, err)
	assert.Equal(t, "hello from the host\n", string(data))
	assert.ErrorIs(t, os.WriteFile(root+mntAgent+"/new.txt", []byte("x"), 0o644), syscall.EROFS)
	data, err = os.ReadFile(root + mntTree + "/notes/todo.md")
	require.NoError(t, err)
	assert.Equal(t, "seeded\n", string(data))
	data, err = os.ReadFile(root + mntTree + "/host/hello.txt")
	require.NoError(t, err)
	assert.Equal(t, "hello from the host\n", string(data))

	sctl("stop", unitAgent, unitTree)
	gone(mntAgent)
	gone(mntTree)
	assert.Equal(t, "inactive", show(unitAgent, "ActiveState"))
	assert.Equal(t, "inactive", show(unitTree, "ActiveState"))
	noDaemons()

	// The .mount unit written directly.
	sctl("start", unitDirect)
	data, err = os.ReadFile(root + mntDirect + "/hello.txt")
	require.NoError(t, err)
	assert.Equal(t, "hello from the host\n", string(data))
	fstype, opts, ok = mountAt(mntDirect)
	require.True(t, ok, "%s mounted", mntDirect)
	assert.Equal(t, "fuse.julyfs", fstype)
	assert.True(t, strings.HasPrefix(opts, "ro"), "read-only: %s", opts)
	sctl("stop", unitDirect)
	gone(mntDirect)
	assert.Equal(t, "inactive", show(unitDirect, "ActiveState"))
	noDaemons()

	// The Type=notify service: systemctl start returns on READY=1, when the
	// mount already answers.
	sctl("start", "julyfs-agent.service")
	data, err = os.ReadFile(root + mntSvc + "/notes/todo.md")
	require.NoError(t, err)
	assert.Equal(t, "seeded\n", string(data))
	assert.Equal(t, "active running", show("julyfs-agent.service", "ActiveState")+" "+show("julyfs-agent.service", "SubState"))
	fstype, _, ok = mountAt(mntSvc)
	require.True(t, ok, "%s mounted", mntSvc)
	assert.Equal(t, "fuse.julyfs", fstype)
	require.NoError(t, os.WriteFile(root+mntSvc+"/notes/new.md", []byte("written\n"), 0o644))

	sctl("stop", "julyfs-agent.service")
	gone(mntSvc)
	assert.Equal(t, "inactive", show("julyfs-agent.service", "ActiveState"))
	assert.Equal(t, "success", show("julyfs-agent.service", "Result"))
	noDaemons()
}

// systemctl runs systemctl against the systemd that is PID 1 of pid's
// namespaces, bounded by a minute.
func systemctl(pid int, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "nsenter", append([]string{"-t", strconv.Itoa(pid), "-m", "-p", "systemctl", "--no-pager"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// escapeMount is the name of the .mount unit for dir.
func escapeMount(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("systemd-escape", "--path", "--suffix=mount", dir).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

// cgroup2Dir is a new cgroup's directory under the test process's own in
// the cgroup v2 hierarchy (skipping the test when there is none).
func cgroup2Dir(t *testing.T) string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	require.NoError(t, err)
	defer f.Close()
	mnt := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		for i, x := range fields {
			if x == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && fields[3] == "/" {
				mnt = fields[4]
			}
		}
	}
	if mnt == "" {
		t.Skip("no cgroup v2 hierarchy mounted")
	}
	data, err := os.ReadFile("/proc/self/cgroup")
	require.NoError(t, err)
	own := ""
	for _, line := range strings.Split(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			own = p
		}
	}
	return filepath.Join(mnt, own, fmt.Sprintf("julyfs-systemd-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
}

// syncBuffer is a bytes.Buffer for one writer and other readers; its
// String drops the pty's carriage returns.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.ReplaceAll(b.buf.String(), "\r", "")
}

// removeCgroup removes dir and the cgroups systemd made in it, deepest
// first, waiting up to 10s for their processes to be gone.
func removeCgroup(t *testing.T, dir string) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var dirs []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		var err error
		for i := len(dirs) - 1; i >= 0; i-- {
			if e := syscall.Rmdir(dirs[i]); e != nil && e != syscall.ENOENT {
				err = e
			}
		}
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("cgroup %s not removed: %v", dir, err)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
