package fusemount

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/julyfs/julyfs/third_party/go-fuse/posixtest"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// posixCases are the go-fuse posixtest tests the mount passes. The others
// need what the contract cannot express; docs/mount.md says why for each.
var posixCases = []string{
	"AppendWrite",
	"DirSeek",
	"DirectIO",
	"Fallocate",
	"FallocateKeepSize",
	"FcntlFlockSetLk",
	"FdLeak",
	"FileBasic",
	"FileLarge",
	"FstatDeleted",
	"LseekEnxioCheck",
	"LseekHoleSeeksToEOF",
	"MkdirRmdir",
	"NlinkZero",
	"OpenAt",
	"ParallelFileOpen",
	"ReadDirBasic",
	"ReadDirConsistency",
	"RenameOpenDir",
	"RenameOverwriteDestExist",
	"RenameOverwriteDestNoExist",
	"SetattrSymlink",
	"SymlinkReadlink",
	"TruncateFile",
	"TruncateNoFile",
}

// TestPosix runs each posixtest case on a fresh mount of an empty temp tree,
// in a child process (TestPosixChild): the server and the code exercising it
// never share a process.
func TestPosix(t *testing.T) {
	requireFUSE(t)
	for _, name := range posixCases {
		t.Run(name, func(t *testing.T) {
			if posixtest.All[name] == nil {
				require.Failf(t, "unknown posixtest case", "posixtest has no %s", name)
			}
			s := mountT(t, temp.MustNew(nil), Options{})
			runChild(t, "TestPosixChild", "JULYFS_POSIX_CASE="+name, "JULYFS_MNT="+s.Dir())
		})
	}
}

// TestPosixChild is the child half of TestPosix.
func TestPosixChild(t *testing.T) {
	name, mnt := os.Getenv("JULYFS_POSIX_CASE"), os.Getenv("JULYFS_MNT")
	if name == "" {
		t.Skip("run by TestPosix in a child process")
	}
	posixtest.All[name](t, mnt)
}

// TestSetattrOnUnlinkedOpenFile: ftruncate, fallocate, fchmod and futimes
// keep working on a file that is open after its name was removed (unlink)
// or replaced (a rename over it), as on disk; stress-ng's fallocate and
// sync-file stressors do this. They answered ESTALE before.
func TestSetattrOnUnlinkedOpenFile(t *testing.T) {
	requireFUSE(t)
	for _, how := range []string{"unlink", "rename"} {
		t.Run(how, func(t *testing.T) {
			s := mountT(t, temp.MustNew(nil), Options{})
			runChild(t, "TestSetattrOnUnlinkedOpenFileChild", "JULYFS_HOW="+how, "JULYFS_MNT="+s.Dir())
			names, err := os.ReadDir(s.Dir())
			require.NoError(t, err)
			var got []string
			for _, e := range names {
				got = append(got, e.Name())
			}
			if how == "rename" {
				assert.Equal(t, []string{"f"}, got)
				b, err := os.ReadFile(filepath.Join(s.Dir(), "f"))
				require.NoError(t, err)
				assert.Equal(t, "new", string(b), "the file renamed over the open one")
			} else {
				assert.Empty(t, got)
			}
		})
	}
}

// TestSetattrOnUnlinkedOpenFileChild is the child half of
// TestSetattrOnUnlinkedOpenFile.
func TestSetattrOnUnlinkedOpenFileChild(t *testing.T) {
	how, mnt := os.Getenv("JULYFS_HOW"), os.Getenv("JULYFS_MNT")
	if mnt == "" {
		t.Skip("run by TestSetattrOnUnlinkedOpenFile in a child process")
	}
	p := filepath.Join(mnt, "f")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteString("hello, world")
	require.NoError(t, err)
	if how == "unlink" {
		require.NoError(t, os.Remove(p))
	} else {
		require.NoError(t, os.WriteFile(p+".new", []byte("new"), 0o644))
		require.NoError(t, os.Rename(p+".new", p))
	}
	size := func() int64 {
		t.Helper()
		fi, err := f.Stat()
		require.NoError(t, err)
		return fi.Size()
	}
	for range 3 {
		require.NoError(t, syscall.Fallocate(int(f.Fd()), 0, 0, 1<<20))
		assert.Equal(t, int64(1<<20), size())
		require.NoError(t, f.Truncate(0))
		assert.Equal(t, int64(0), size())
	}
	require.NoError(t, f.Truncate(5))
	_, err = f.WriteAt([]byte("abc"), 1)
	require.NoError(t, err)
	b := make([]byte, 10)
	k, _ := f.ReadAt(b, 0)
	assert.Equal(t, "\x00abc\x00", string(b[:k]))
	require.NoError(t, f.Chmod(0o600))
	when := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	require.NoError(t, unix.Futimes(int(f.Fd()), []unix.Timeval{unix.NsecToTimeval(when.UnixNano()), unix.NsecToTimeval(when.UnixNano())}))
	fi, err := f.Stat()
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.True(t, fi.ModTime().Equal(when), "mtime %v", fi.ModTime())
	assert.Equal(t, uint64(0), uint64(fi.Sys().(*syscall.Stat_t).Nlink))
}
