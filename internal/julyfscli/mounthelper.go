package julyfscli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/internal/mountinfo"
)

// This file is julyfs as mount(8)'s helper: `mount -t fuse.julyfs SOURCE
// DIR -o OPTIONS` (and an /etc/fstab line or a systemd .mount unit, which
// both come to that) runs /sbin/mount.fuse.julyfs SOURCE DIR -o OPTIONS.
// That file is a link to julyfs (julyfs install-helper makes it); julyfs
// called by that name turns the options into `julyfs mount` flags, starts
// the mount in the background and returns once the mount answers, as
// sshfs and rclone's helpers do.

// HelperName is the name mount(8) runs for filesystem type fuse.julyfs.
const HelperName = "mount.fuse.julyfs"

// helperNames are the program names julyfs acts as the mount helper under:
// mount(8)'s for -t fuse.julyfs, and for -t julyfs.
var helperNames = []string{HelperName, "mount.julyfs"}

// IsMountHelper reports whether argv0 names julyfs's mount helper.
func IsMountHelper(argv0 string) bool {
	return slices.Contains(helperNames, filepath.Base(argv0))
}

// Mount helper exit statuses, as mount(8) documents them.
const (
	helperUsage  = 1  // incorrect invocation or permissions
	helperFailed = 32 // mount failure
)

// helperTimeout is how long the helper waits for the mount to answer by
// default (the timeout= option changes it).
const helperTimeout = 30 * time.Second

// HelperMount is what a mount helper's command line asks for.
type HelperMount struct {
	// Dir is the mount point, absolute.
	Dir string
	// Args are the arguments of `julyfs mount` that serve it, Dir last.
	Args []string
	// Log is the file the background mount writes its messages to.
	Log string
	// Timeout bounds the wait for the mount to answer.
	Timeout time.Duration
}

// helperIgnored are the options mount(8) and fstab use that say nothing
// to julyfs: they are accepted and ignored. nosuid and nodev are how
// the kernel mounts every FUSE filesystem anyway; x-* and comment= are
// for systemd and other tools that read fstab.
var helperIgnored = []string{
	"defaults", "rw", "auto", "noauto", "user", "nouser", "users", "owner", "group",
	"nofail", "_netdev", "nosuid", "suid", "nodev", "dev", "noexec", "exec",
	"async", "atime", "noatime", "relatime", "norelatime", "strictatime", "nodiratime",
	"diratime", "lazytime", "nolazytime", "silent", "loud",
}

// helperValued maps the options with a value to the julyfs mount flag
// they set.
var helperValued = map[string]string{
	"config":           "--config",
	"mount":            "--mount",
	"agent":            "--agent",
	"index":            "--index",
	"entry_timeout":    "--entry-timeout",
	"attr_timeout":     "--attr-timeout",
	"negative_timeout": "--negative-timeout",
	"fsname":           "--fsname",
}

// helperFlags maps the options without a value to their flag.
var helperFlags = map[string]string{
	"ro":             "--read-only",
	"allow_other":    "--allow-other",
	"passthrough":    "--passthrough",
	"nopassthrough":  "--passthrough=false",
	"write_in_place": "--write-in-place",
}

// HelperOptions lists every option the helper takes, for its messages
// and docs: the julyfs ones, then log= and timeout=.
func HelperOptions() []string {
	var out []string
	for k := range helperValued {
		out = append(out, k+"=")
	}
	for k := range helperFlags {
		out = append(out, k)
	}
	slices.Sort(out)
	return append(out, "log=", "timeout=")
}

// ParseHelperArgs reads mount(8)'s helper command line, SOURCE DIR [-o
// OPTIONS] [-n] [-s] [-f] [-v], into the `julyfs mount` it asks for.
// SOURCE is a directory mounted at / when the options name no tree
// (config=, mount=, agent=); otherwise it is only the name the mount
// table shows (fsname=, when given, names it instead). An unknown option
// is an error naming it and listing the known ones.
func ParseHelperArgs(args []string) (HelperMount, error) {
	var pos []string
	var opts []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-o":
			if i+1 >= len(args) {
				return HelperMount{}, errors.New("-o needs a list of options")
			}
			opts = append(opts, splitOptions(args[i+1])...)
			i++
		case strings.HasPrefix(a, "-o"):
			opts = append(opts, splitOptions(a[2:])...)
		case a == "-n" || a == "-s" || a == "-v":
			// no mtab, sloppy, verbose: nothing to do
		case a == "-f":
			return HelperMount{}, errors.New("-f (fake mount) is not supported")
		case strings.HasPrefix(a, "-") && a != "-":
			return HelperMount{}, fmt.Errorf("unknown argument %q", a)
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) != 2 {
		return HelperMount{}, fmt.Errorf("want SOURCE DIR [-o OPTIONS], got %d arguments", len(pos))
	}
	src, dir := pos[0], pos[1]
	abs, err := filepath.Abs(dir)
	if err != nil {
		return HelperMount{}, err
	}
	hm := HelperMount{Dir: abs, Timeout: helperTimeout}
	var flags []string
	tree, fsname := false, false
	for _, o := range opts {
		name, val, hasVal := strings.Cut(o, "=")
		switch {
		case slices.Contains(helperIgnored, name) && !hasVal, strings.HasPrefix(name, "x-"), name == "comment":
			continue
		case name == "log" && hasVal && val != "":
			hm.Log = val
		case name == "timeout" && hasVal:
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 {
				return HelperMount{}, fmt.Errorf("option timeout=%s: want a duration such as 30s", val)
			}
			hm.Timeout = d
		case helperValued[name] != "":
			if !hasVal || val == "" {
				return HelperMount{}, fmt.Errorf("option %s needs a value: %s=...", name, name)
			}
			flags = append(flags, helperValued[name], val)
			tree = tree || name == "config" || name == "mount" || name == "agent"
			fsname = fsname || name == "fsname"
		case helperFlags[name] != "" && !hasVal:
			flags = append(flags, helperFlags[name])
		default:
			return HelperMount{}, fmt.Errorf("unknown option %q (julyfs takes %s, and mount(8)'s generic ones)", o, strings.Join(HelperOptions(), ", "))
		}
	}
	if !tree {
		fi, err := os.Stat(src)
		if err != nil || !fi.IsDir() {
			return HelperMount{}, fmt.Errorf("source %s is not a directory, and no config=, mount= or agent= option names the tree", src)
		}
		s, err := filepath.Abs(src)
		if err != nil {
			return HelperMount{}, err
		}
		flags = append(flags, "--mount", "/=local:"+s)
	}
	if !fsname {
		flags = append(flags, "--fsname", src)
	}
	if hm.Log == "" {
		hm.Log = defaultHelperLog(abs)
	}
	hm.Args = append(append([]string{"mount"}, flags...), abs)
	return hm, nil
}

// splitOptions splits a -o list at commas.
func splitOptions(s string) []string {
	var out []string
	for _, o := range strings.Split(s, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, o)
		}
	}
	return out
}

// defaultHelperLog is where a helper-started mount logs: /run/julyfs (the
// runtime directory) as root, else the temporary directory, in a file
// named for the mount point (/mnt/agent: mnt-agent.log, systemd's name
// for it).
func defaultHelperLog(dir string) string {
	base := os.TempDir()
	if os.Geteuid() == 0 {
		base = "/run/julyfs"
	}
	name := strings.ReplaceAll(strings.Trim(dir, "/"), "/", "-")
	if name == "" {
		name = "root"
	}
	return filepath.Join(base, name+".log")
}

// RunMountHelper is julyfs run as mount.fuse.julyfs: it parses args (the
// command line without the program name), starts `julyfs mount` in the
// background (its own session, stdin from /dev/null, messages to the
// log), and waits until DIR is a fuse.julyfs mount that answers a stat,
// or the mount exits, or the timeout passes. It returns mount(8)'s exit
// status: 0, 1 for a bad command line, 32 for a mount that failed (its
// log's last lines on stderr).
func RunMountHelper(ctx context.Context, args []string, stderr io.Writer) int {
	prog := HelperName
	hm, err := ParseHelperArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return helperUsage
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "%s: finding julyfs: %v\n", prog, err)
		return helperFailed
	}
	if err := startBackground(ctx, self, hm, func(string) bool { return IsJulyfsMount(hm.Dir) }); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return helperFailed
	}
	return 0
}

// IsJulyfsMount reports whether dir is a julyfs FUSE mount, from the
// mount table.
func IsJulyfsMount(dir string) bool {
	m, ok, err := mountinfo.At(dir)
	return err == nil && ok && m.Type == "fuse.julyfs"
}

// startBackground runs prog with hm.Args detached from the caller and
// waits until mounted(dir) holds and a stat of the directory answers.
func startBackground(ctx context.Context, prog string, hm HelperMount, mounted func(string) bool) error {
	if err := os.MkdirAll(filepath.Dir(hm.Log), 0o755); err != nil {
		return fmt.Errorf("log directory: %w", err)
	}
	logf, err := os.OpenFile(hm.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("log: %w", err)
	}
	defer logf.Close()
	start, _ := logf.Seek(0, io.SeekEnd)
	fmt.Fprintf(logf, "%s julyfs %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(hm.Args, " "))
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer devnull.Close()
	cmd := exec.Command(prog, hm.Args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	// Its own session: the mount outlives the helper and the terminal
	// or unit that ran mount(8), and a Ctrl-C there does not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting julyfs mount: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fail := func(what string) error {
		return fmt.Errorf("%s; julyfs mount said (%s):\n%s", what, hm.Log, logTail(hm.Log, start, 20))
	}
	deadline := time.NewTimer(hm.Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			if err == nil {
				return fail("julyfs mount exited before the mount answered")
			}
			return fail(fmt.Sprintf("julyfs mount failed (%v)", err))
		case <-deadline.C:
			cmd.Process.Signal(syscall.SIGTERM)
			return fail(fmt.Sprintf("no mount on %s within %s (raise it with -o timeout=60s); stopped it", hm.Dir, hm.Timeout))
		case <-ctx.Done():
			cmd.Process.Signal(syscall.SIGTERM)
			return ctx.Err()
		case <-tick.C:
			if !mounted(hm.Dir) {
				continue
			}
			// In the table: the kernel has it. A stat answers once the
			// server reads requests; bounded by the same deadline.
			answered := make(chan struct{})
			go func() { os.Stat(hm.Dir); close(answered) }()
			select {
			case <-answered:
				cmd.Process.Release()
				return nil
			case <-deadline.C:
				cmd.Process.Signal(syscall.SIGTERM)
				return fail(fmt.Sprintf("%s is mounted but did not answer within %s", hm.Dir, hm.Timeout))
			}
		}
	}
}

// logTail returns the last n lines the log got from offset on.
func logTail(path string, offset int64, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	f.Seek(offset, io.SeekStart)
	data, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

func installHelperCommand() *cli.Command {
	return &cli.Command{
		Name:  "install-helper",
		Usage: "install " + HelperName + ", so mount -t fuse.julyfs, /etc/fstab and systemd mount julyfs",
		Description: `Links DIR/` + HelperName + ` (default /sbin) to this julyfs, which acts as
mount(8)'s helper when called by that name: mount -t fuse.julyfs SOURCE DIR
-o OPTIONS starts the mount in the background and returns once it answers.

   julyfs install-helper
   mount -t fuse.julyfs /srv/agent /mnt/agent -o ro,allow_other
   # /etc/fstab:
   /srv/agent  /mnt/agent  fuse.julyfs  ro,allow_other,_netdev  0 0

--remove takes the link away. An existing file that is not a link to a
julyfs is left alone (an error) unless --force. See docs/mount.md, "Mount
at boot".`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Value: "/sbin", Usage: "install into `DIR`"},
			&cli.BoolFlag{Name: "force", Usage: "replace whatever is there"},
			&cli.BoolFlag{Name: "remove", Usage: "remove the helper instead"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return Usagef(c, "install-helper takes no arguments")
			}
			path := filepath.Join(c.String("dir"), HelperName)
			if c.Bool("remove") {
				return removeHelper(path, c.Bool("force"))
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			if err := InstallHelper(path, self, c.Bool("force")); err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "%s -> %s\n", path, self)
			return nil
		},
	}
}

// InstallHelper makes path a symbolic link to the julyfs executable
// self. An existing link to a julyfs (one whose target's name starts
// with julyfs) is replaced; anything else only with force.
func InstallHelper(path, self string, force bool) error {
	if fi, err := os.Lstat(path); err == nil {
		if !force && !isJulyfsLink(path, fi) {
			return fmt.Errorf("%s exists and is not a link to julyfs: not replaced (use --force)", path)
		}
	}
	tmp := path + ".julyfs-tmp"
	os.Remove(tmp)
	if err := os.Symlink(self, tmp); err != nil {
		return fmt.Errorf("installing the helper: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("installing the helper: %w", err)
	}
	return nil
}

func removeHelper(path string, force bool) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !force && !isJulyfsLink(path, fi) {
		return fmt.Errorf("%s is not a link to julyfs: not removed (use --force)", path)
	}
	return os.Remove(path)
}

func isJulyfsLink(path string, fi os.FileInfo) bool {
	if fi.Mode()&os.ModeSymlink == 0 {
		return false
	}
	target, err := os.Readlink(path)
	return err == nil && strings.HasPrefix(filepath.Base(target), "julyfs")
}
