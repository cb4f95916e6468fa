package pgstore

// SetReadChunk sets the chunk size of Open's reader for a test and
// returns the function that restores it.
func SetReadChunk(n int64) (restore func()) {
	old := readChunk
	readChunk = n
	return func() { readChunk = old }
}
