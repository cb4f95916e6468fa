package plugins

// Fallbacks reports whether fsys has given up copying reads out of the
// plugin's memory (noDirect) or through memory files (noShared): a test
// that reads a large file checks that the way it meant to test was taken.
func Fallbacks(fsys FS) (noDirect, noShared bool) {
	c := fsys.(interface{ client() *Client }).client()
	return c.noDirect.Load(), c.noShared.Load()
}

// Ways reports how many Reads of fsys got their contents in chunks, a
// memory file, the plugin's memory and the plugin's open host file.
func Ways(fsys FS) (chunks, memoryFile, processMemory, hostFile int64) {
	c := fsys.(interface{ client() *Client }).client()
	return c.ways[wayChunks].Load(), c.ways[wayMemoryFile].Load(), c.ways[wayProcessMemory].Load(), c.ways[wayHostFile].Load()
}

// NoHostFile reports whether fsys has given up reading the files its
// plugin has open.
func NoHostFile(fsys FS) bool {
	return fsys.(interface{ client() *Client }).client().noFile.Load()
}

// HeldMax is how many descriptors of handed-over files the host keeps per
// tree.
const HeldMax = heldMax

// BeneathReads reports how many Reads and ReadAts of fsys the host
// answered itself, beneath the tree's root directory.
func BeneathReads(fsys FS) int64 {
	return fsys.(interface{ client() *Client }).client().ways[wayBeneath].Load()
}

// ReadBeneath and ReadAtBeneath are the host's reads beneath a root
// directory (ok false: the plugin is asked).
var (
	ReadBeneath   = readBeneath
	ReadAtBeneath = readAtBeneath
)

// ReadFD and ReadAtFD are how the host reads a file its open beneath the
// root answered (a test pairs them with a mutant of that open).
var (
	ReadFD   = readFD
	ReadAtFD = readAtFD
)
