//go:build !unix

package main

import "os"

// mapFile reads the file at path (no mapping on this system).
func mapFile(path string) (data []byte, unmap func(), err error) {
	data, err = os.ReadFile(path)
	return data, func() {}, err
}

// fileIdentity is empty here: size and mtime key the cache.
func fileIdentity(os.FileInfo) string { return "" }
