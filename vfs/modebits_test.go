package vfs_test

import (
	"io/fs"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/julyfs/julyfs/vfs"
)

// TestModeBits: ModeBits gives chmod(2)'s bits of a mode (the file type
// and other flags dropped), FileModeOf takes them back, and the special
// bits are the kernel's.
func TestModeBits(t *testing.T) {
	cases := []struct {
		mode fs.FileMode
		bits uint32
	}{
		{0o644, 0o644},
		{0o755 | fs.ModeDir, 0o755},
		{0o4755&^0o4000 | fs.ModeSetuid, 0o4755},
		{0o2750&^0o2000 | fs.ModeSetgid, 0o2750},
		{0o777 | fs.ModeSticky | fs.ModeDir, 0o1777},
		{0o700 | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky, 0o7700},
		{fs.ModeSymlink | fs.ModeAppend, 0},
	}
	for _, c := range cases {
		assert.Equal(t, c.bits, vfs.ModeBits(c.mode), "ModeBits(%v)", c.mode)
		want := c.mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		assert.Equal(t, want, vfs.FileModeOf(c.bits), "FileModeOf(%#o)", c.bits)
	}
	assert.Equal(t, uint32(syscall.S_ISUID|syscall.S_ISGID|syscall.S_ISVTX|0o777),
		vfs.ModeBits(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
	assert.Equal(t, fs.FileMode(0o644), vfs.FileModeOf(syscall.S_IFREG|0o644), "the file type is dropped")
}
