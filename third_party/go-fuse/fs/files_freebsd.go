package fs

import "github.com/julyfs/julyfs/third_party/go-fuse/fuse"

func setBlocks(out *fuse.Attr) {
}
