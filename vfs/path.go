package vfs

import (
	"path"
	"strings"
)

// Clean normalizes p into the contract's form: absolute, '/'-separated,
// "." and ".." resolved, no trailing slash except "/". "" is "/"; a path
// that climbs above "/" stays at "/".
func Clean(p string) string {
	if p == "" || p == "/" {
		return "/"
	}
	if p[0] == '/' && isClean(p) {
		return p
	}
	return path.Clean("/" + p)
}

// isClean reports whether an absolute p is already clean, so Clean can
// avoid an allocation on the hot path.
func isClean(p string) bool {
	if len(p) > 1 && p[len(p)-1] == '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		rest := p[i+1:]
		if rest == "" || rest[0] == '/' || rest == "." || rest == ".." ||
			strings.HasPrefix(rest, "./") || strings.HasPrefix(rest, "../") {
			return len(p) == 1
		}
	}
	return true
}

// HasPrefix reports whether clean path p is prefix or under it, by path
// segment: "/agent" covers "/agent" and "/agent/skills", not "/agent-tools".
// Both arguments must be clean.
func HasPrefix(p, prefix string) bool {
	if prefix == "/" {
		return true
	}
	if !strings.HasPrefix(p, prefix) {
		return false
	}
	return len(p) == len(prefix) || p[len(prefix)] == '/'
}

// Rel returns clean p relative to dir, without a leading slash: "" for dir
// itself. ok is false when p is not under dir.
func Rel(p, dir string) (rel string, ok bool) {
	if !HasPrefix(p, dir) {
		return "", false
	}
	if dir == "/" {
		return p[1:], true
	}
	if len(p) == len(dir) {
		return "", true
	}
	return p[len(dir)+1:], true
}

// Join joins a clean absolute dir and a relative or absolute child path and
// cleans the result. Join("/a", "/b") is "/a/b".
func Join(dir, child string) string {
	if child == "" || child == "/" {
		return dir
	}
	if dir == "/" {
		return Clean(child)
	}
	if child[0] == '/' {
		return Clean(dir + child)
	}
	return Clean(dir + "/" + child)
}

// Parent returns the directory containing clean p; the parent of "/" is "/".
func Parent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// Base returns the last segment of clean p; "" for "/".
func Base(p string) string {
	return p[strings.LastIndexByte(p, '/')+1:]
}

// Split returns the segments of clean p; none for "/".
func Split(p string) []string {
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}
