package vfstest

import (
	"github.com/julyfs/julyfs/vfs"
)

// Checks returns the conformance cases that apply to a backend with opts,
// in a stable order. Capabilities opts declares missing get checks that
// they fail with the right error; none is skipped silently.
func Checks(opts Options) []Check {
	var cs []Check
	add := func(name string, run func(t T, newFS NewFunc)) {
		cs = append(cs, Check{Name: name, Run: run})
	}
	if opts.NoFiles {
		add("Empty/walks", checkEmptyWalks)
		add("Empty/reads", checkEmptyReads)
	} else {
		add("List/children", checkListChildren)
		add("List/fileOrMissing", checkListFileOrMissing)
		add("List/agreesWithReference", checkListReference)
		add("Stat/files", checkStatFiles)
		add("Stat/dirsAndMissing", checkStatDirs)
		add("Glob/relativeToDir", checkGlobRelative)
		add("Glob/dialect", checkGlobDialect)
		add("Glob/agreesWithReference", checkGlobReference)
		add("Read/files", checkReadFiles)
		add("Read/missingOrDir", checkReadMissing)
		add("Normalize/walks", func(t T, newFS NewFunc) { checkNormalizeWalks(t, newFS, opts) })
		add("Normalize/reads", checkNormalizeReads)
		add("Grep/order", checkGrepOrder)
		add("Grep/scope", func(t T, newFS NewFunc) { checkGrepScope(t, newFS, opts) })
		add("Grep/filter", checkGrepFilter)
		add("Grep/maxResults", checkGrepMax)
		add("Grep/agreesWithReference", checkGrepReference)
	}
	add("Stat/root", checkStatRoot)
	add("Glob/invalidPattern", checkGlobInvalid)
	add("Grep/invalidPattern", checkGrepInvalid)
	if opts.HasIndex {
		add("Search/order", checkSearchIndexed)
	} else {
		add("Search/noIndex", checkSearchEmpty)
	}
	switch {
	case opts.readOnly():
		add("Write/readOnly", checkWriteReadOnly)
		add("Delete/readOnly", checkDeleteReadOnly)
	default:
		add("Write/roundTrip", checkWriteRoundTrip)
		add("Write/overwrite", checkWriteOverwrite)
		add("Write/newDirs", checkWriteNewDirs)
		add("Write/ownership", checkWriteOwnership)
		add("Write/etag", checkWriteETag)
		add("Write/invalidTargets", checkWriteInvalid)
		add("Write/normalize", checkWriteNormalize)
		add("Write/visibleToWalks", checkWriteVisible)
		if opts.NoDelete {
			add("Delete/notSupported", checkDeleteNotSupported)
		} else {
			add("Delete/file", func(t T, newFS NewFunc) { checkDeleteFile(t, newFS, opts.KeepsEmptyDirs) })
			add("Delete/missingOrDir", checkDeleteMissing)
			add("Delete/normalize", checkDeleteNormalize)
		}
	}
	add("Capability/readAt", func(t T, newFS NewFunc) { checkRangeRead(t, newFS, opts) })
	add("Capability/writeIf", func(t T, newFS NewFunc) { checkWriteIf(t, newFS, opts) })
	add("Capability/watch", func(t T, newFS NewFunc) { checkWatch(t, newFS, opts) })
	add("Capability/openFile", func(t T, newFS NewFunc) { checkOpenFile(t, newFS, opts) })
	add("Capability/stage", func(t T, newFS NewFunc) { checkStage(t, newFS, opts) })
	add("Capability/dirs", func(t T, newFS NewFunc) { checkDirs(t, newFS, opts) })
	add("Capability/rename", func(t T, newFS NewFunc) { checkRename(t, newFS, opts) })
	add("Capability/meta", func(t T, newFS NewFunc) { checkMeta(t, newFS, opts) })
	add("Capability/everyPath", func(t T, newFS NewFunc) { checkEveryPath(t, newFS, opts) })
	add("Capability/links", func(t T, newFS NewFunc) { checkLinks(t, newFS, opts) })
	add("Stream/breakEarly", func(t T, newFS NewFunc) { checkBreakEarly(t, newFS, opts) })
	add("Stream/cancelled", func(t T, newFS NewFunc) { checkCancelled(t, newFS, opts) })
	if !opts.NoFiles {
		add("Stream/cancelMidway", checkCancelMidway)
	}
	add("Concurrent", func(t T, newFS NewFunc) { checkConcurrent(t, newFS, opts) })
	return cs
}

// seeded returns a fresh fixture tree.
func seeded(t T, newFS NewFunc) vfs.FileSystem {
	t.Helper()
	return newFS(t, fixture())
}
