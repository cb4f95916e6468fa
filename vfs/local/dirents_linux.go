package local

import (
	"bytes"
	"encoding/binary"
	"sync"

	"golang.org/x/sys/unix"
)

// direntBufs holds getdents buffers, reused across directories.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// readDirents lists the open directory fd with getdents64, without a stat
// or an allocation per entry beyond its name. typ is the DT_* type, ino
// the entry's inode number.
func readDirents(fd int, fn func(name string, typ byte, ino uint64)) error {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
		for off := 0; off+19 <= n; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen < 19 || off+reclen > n {
				return unix.EIO
			}
			rec := buf[off+19 : off+reclen]
			if i := bytes.IndexByte(rec, 0); i >= 0 {
				rec = rec[:i]
			}
			typ := buf[off+18]
			ino := binary.NativeEndian.Uint64(buf[off:])
			off += reclen
			if len(rec) == 0 || (rec[0] == '.' && (len(rec) == 1 || len(rec) == 2 && rec[1] == '.')) {
				continue
			}
			fn(string(rec), typ, ino)
		}
	}
}
