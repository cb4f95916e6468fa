package vfs

// NormalizePattern is normalizePattern, for the tests of package vfs_test.
var NormalizePattern = normalizePattern
