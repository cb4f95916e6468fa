package aferofs_test

import (
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/readonly"
)

func aferofsReadOnly(fsys vfs.FileSystem) vfs.FileSystem { return readonly.New(fsys) }
