package full

import (
	"testing"

	"github.com/julyfs/julyfs/fusemount"
	"github.com/julyfs/julyfs/internal/julyfscli"
	"github.com/julyfs/julyfs/vfs/index"
)

// TestDefaults checks that the defaults julyfs's help shows for the heavy
// commands' flags are the ones fusemount and vfs/index use.
func TestDefaults(t *testing.T) {
	if julyfscli.DefaultEntryTimeout != fusemount.DefaultEntryTimeout {
		t.Errorf("julyfscli.DefaultEntryTimeout = %v, fusemount's is %v", julyfscli.DefaultEntryTimeout, fusemount.DefaultEntryTimeout)
	}
	if julyfscli.DefaultAttrTimeout != fusemount.DefaultAttrTimeout {
		t.Errorf("julyfscli.DefaultAttrTimeout = %v, fusemount's is %v", julyfscli.DefaultAttrTimeout, fusemount.DefaultAttrTimeout)
	}
	if julyfscli.DefaultMaxFileSize != index.DefaultMaxFileSize {
		t.Errorf("julyfscli.DefaultMaxFileSize = %v, index's is %v", julyfscli.DefaultMaxFileSize, index.DefaultMaxFileSize)
	}
}

// TestHeavy checks that every heavy command has an implementation, so
// julyfsd never hands one on.
func TestHeavy(t *testing.T) {
	h := Heavy()
	if h.Mount == nil || h.Unmount == nil || h.IndexBuild == nil || h.OpenIndex == nil {
		t.Errorf("full.Heavy() leaves a command to delegate: %+v", h)
	}
}
