package fusemount

import (
	"github.com/julyfs/julyfs/third_party/go-fuse/fs"
	"github.com/julyfs/julyfs/third_party/go-fuse/fuse"
)

// Negative entries of watched host directories. A name missing from a
// host directory the mount watches completely (hostCovered) can only
// appear through the mount (the kernel then replaces its negative entry
// itself) or behind it (the host watch hears it): so, with the default
// timeouts and no Options.NegativeTimeout, the kernel may remember that
// it is missing for ObservedTimeout, as it remembers the names that
// exist. git looks a path up two or three times before it creates it, a
// compiler or a module resolver asks for many names that are not there:
// each of those lookups after the first is then answered by the kernel.
//
// The kernel's negative entries are no inodes go-fuse tracks, so each
// directory node keeps the names it answered missing for long
// (node.negs, up to maxNegatives): the host watch drops such a name's
// entry when it hears of the name (invalidateHost), and the whole set when
// it drops everything under the directory (invalidateTree: lost events,
// a watch that stopped being complete). A directory over the bound
// answers further missing names with no caching, as before.

// Lookup passes a lookup to go-fuse's bridge, and answers a missing name
// the node gave a long entry timeout (longNegative) as a negative entry
// (node ID 0 with that timeout), which the kernel caches; go-fuse
// answers a node's ENOENT with that entry only for its own
// fs.Options.NegativeTimeout, one for the whole mount.
func (r *rawFS) Lookup(cancel <-chan struct{}, header *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	st := r.RawFileSystem.Lookup(cancel, header, name, out)
	if st == fuse.ENOENT && out.NodeId == 0 && out.EntryTimeout() > 0 {
		return fuse.OK
	}
	return st
}

// maxNegatives bounds the names one directory remembers as cached
// missing.
const maxNegatives = 4096

// longNegative sets out, the answer to a lookup of name in directory n
// (at p) that found nothing, to be cached for ObservedTimeout when every
// change of p is heard and none came since m.hostGen was gen, and records
// the name.
func (n *node) longNegative(name, p string, gen uint64, out *fuse.EntryOut) {
	m := n.m
	if m.opts.EntryTimeout != 0 || m.opts.AttrTimeout != 0 || m.opts.NegativeTimeout != 0 || !m.hostCovered(p) {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.negs) >= maxNegatives || m.hostGen.Load() != gen {
		return
	}
	if n.negs == nil {
		n.negs = map[string]struct{}{}
	}
	n.negs[name] = struct{}{}
	out.SetEntryTimeout(ObservedTimeout)
}

// dropNegative forgets that name was answered missing in directory in,
// and reports whether it was (the kernel may cache that answer).
func dropNegative(in *fs.Inode, name string) bool {
	n, ok := in.Operations().(*node)
	if !ok {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.negs[name]; !ok {
		return false
	}
	delete(n.negs, name)
	return true
}

// dropNegatives has the kernel drop every negative entry directory in
// was answered for long with, and forgets them.
func dropNegatives(in *fs.Inode) {
	n, ok := in.Operations().(*node)
	if !ok {
		return
	}
	n.mu.Lock()
	names := n.negs
	n.negs = nil
	n.mu.Unlock()
	for name := range names {
		in.NotifyEntry(name)
	}
}
