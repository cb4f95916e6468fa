package vfs

import (
	"crypto/sha256"
	"encoding/hex"
)

// ContentETag returns the etag of data for trees that have no etag of
// their own: the first 16 bytes of its SHA-256, in hex.
func ContentETag(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}
