package fusemount

import (
	"os"
	"testing"

	"github.com/hanwen/go-fuse/v2/posixtest"
	"github.com/julyfs/julyfs/vfs/temp"
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
				t.Fatalf("posixtest has no %s", name)
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
