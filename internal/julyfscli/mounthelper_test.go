package julyfscli

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseHelperArgs(t *testing.T) {
	src := t.TempDir()
	log := defaultHelperLog("/mnt/agent")
	for _, tc := range []struct {
		args []string
		want HelperMount
	}{
		// A directory source is the tree at /, and the mount table's name.
		{[]string{src, "/mnt/agent"}, HelperMount{Dir: "/mnt/agent", Log: log, Timeout: helperTimeout,
			Args: []string{"mount", "--mount", "/=local:" + src, "--fsname", src, "/mnt/agent"}}},
		// fstab's generic options are accepted and ignored; the julyfs ones
		// become flags, in order.
		{[]string{src, "/mnt/agent", "-o", "rw,ro,allow_other,_netdev,noauto,nofail,x-systemd.automount,nosuid,nodev,passthrough,comment=x"},
			HelperMount{Dir: "/mnt/agent", Log: log, Timeout: helperTimeout,
				Args: []string{"mount", "--read-only", "--allow-other", "--passthrough", "--mount", "/=local:" + src, "--fsname", src, "/mnt/agent"}}},
		// config= or mount= names the tree: the source is only a name.
		{[]string{"agent", "/mnt/agent", "-o", "config=/etc/julyfs/agent.yaml,entry_timeout=1s,index=/var/lib/idx", "-n"},
			HelperMount{Dir: "/mnt/agent", Log: log, Timeout: helperTimeout,
				Args: []string{"mount", "--config", "/etc/julyfs/agent.yaml", "--entry-timeout", "1s", "--index", "/var/lib/idx", "--fsname", "agent", "/mnt/agent"}}},
		{[]string{"none", "/mnt/agent", "-omount=/=temp:,mount=/docs=local:/srv/docs?ro,fsname=docs,log=/tmp/x.log,timeout=5s"},
			HelperMount{Dir: "/mnt/agent", Log: "/tmp/x.log", Timeout: 5 * time.Second,
				Args: []string{"mount", "--mount", "/=temp:", "--mount", "/docs=local:/srv/docs?ro", "--fsname", "docs", "/mnt/agent"}}},
		{[]string{src, "/mnt/agent", "-o", "nopassthrough"},
			HelperMount{Dir: "/mnt/agent", Log: log, Timeout: helperTimeout,
				Args: []string{"mount", "--passthrough=false", "--mount", "/=local:" + src, "--fsname", src, "/mnt/agent"}}},
		{[]string{"x", "/mnt/agent", "-o", "agent=/srv/agent,attr_timeout=0,negative_timeout=2s,write_in_place"},
			HelperMount{Dir: "/mnt/agent", Log: log, Timeout: helperTimeout,
				Args: []string{"mount", "--agent", "/srv/agent", "--attr-timeout", "0", "--negative-timeout", "2s", "--write-in-place", "--fsname", "x", "/mnt/agent"}}},
	} {
		got, err := ParseHelperArgs(tc.args)
		require.NoError(t, err, "ParseHelperArgs(%q)", tc.args)
		assert.Equal(t, tc.want, got, "ParseHelperArgs(%q)", tc.args)
	}
}

func TestParseHelperArgsErrors(t *testing.T) {
	src := t.TempDir()
	file := filepath.Join(src, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{src}, "want SOURCE DIR [-o OPTIONS], got 1 arguments"},
		{[]string{src, "/mnt", "extra"}, "got 3 arguments"},
		{[]string{src, "/mnt", "-o"}, "-o needs a list of options"},
		{[]string{src, "/mnt", "-o", "bogus"}, `unknown option "bogus" (julyfs takes agent=, allow_other, attr_timeout=, config=`},
		{[]string{src, "/mnt", "-o", "ro=1"}, `unknown option "ro=1"`},
		{[]string{src, "/mnt", "-o", "allow_other=yes"}, `unknown option "allow_other=yes"`},
		{[]string{src, "/mnt", "-o", "config="}, "option config needs a value: config=..."},
		{[]string{src, "/mnt", "-o", "timeout=soon"}, "option timeout=soon: want a duration such as 30s"},
		{[]string{src, "/mnt", "-o", "timeout=-1s"}, "option timeout=-1s"},
		{[]string{src, "/mnt", "-f"}, "-f (fake mount) is not supported"},
		{[]string{src, "/mnt", "-x"}, `unknown argument "-x"`},
		{[]string{file, "/mnt"}, "source " + file + " is not a directory, and no config=, mount= or agent= option names the tree"},
		{[]string{"/nonexistent", "/mnt"}, "source /nonexistent is not a directory"},
	} {
		_, err := ParseHelperArgs(tc.args)
		if assert.Error(t, err, "ParseHelperArgs(%q)", tc.args) {
			assert.Contains(t, err.Error(), tc.want, "ParseHelperArgs(%q)", tc.args)
		}
	}
}

func TestIsMountHelper(t *testing.T) {
	for name, want := range map[string]bool{
		"/sbin/mount.fuse.julyfs": true, "mount.julyfs": true, "/usr/bin/julyfs": false, "mount.fuse.julyfsx": false,
	} {
		assert.Equal(t, want, IsMountHelper(name), "IsMountHelper(%q)", name)
	}
}

func TestInstallHelper(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, HelperName)
	require.NoError(t, InstallHelper(path, "/usr/local/bin/julyfs", false))
	target, err := os.Readlink(path)
	require.NoError(t, err)
	assert.Equal(t, "/usr/local/bin/julyfs", target)
	// Reinstalling replaces a julyfs link.
	require.NoError(t, InstallHelper(path, "/opt/julyfs/julyfs", false))
	target, _ = os.Readlink(path)
	assert.Equal(t, "/opt/julyfs/julyfs", target)
	// Something else is left alone unless forced.
	other := filepath.Join(dir, "mount.fuse.other")
	require.NoError(t, os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755))
	err = InstallHelper(other, "/usr/local/bin/julyfs", false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exists and is not a link to julyfs: not replaced (use --force)")
	data, _ := os.ReadFile(other)
	assert.Equal(t, "#!/bin/sh\n", string(data))
	require.NoError(t, removeHelper(path, false))
	_, err = os.Lstat(path)
	assert.True(t, os.IsNotExist(err))
	assert.NoError(t, removeHelper(path, false), "removing what is not there")
	assert.ErrorContains(t, removeHelper(other, false), "is not a link to julyfs: not removed")
}
