package plugins

// Fallbacks reports whether fsys has given up copying reads out of the
// plugin's memory (noDirect) or through memory files (noShared): a test
// that reads a large file checks that the way it meant to test was taken.
func Fallbacks(fsys FS) (noDirect, noShared bool) {
	c := fsys.(interface{ client() *Client }).client()
	return c.noDirect.Load(), c.noShared.Load()
}
