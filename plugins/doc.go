// Package plugins lets a julyfs tree live in another process: a backend
// ships as a binary, and the host mounts it like a built-in tree (the
// rootspec kind plugin:, `julyfs --mount /x=plugin:NAME?k=v`).
//
// A plugin's main is one call:
//
//	func main() { plugins.Serve(mytree) }
//
// or, for a tree built from the mount's parameters,
//
//	plugins.ServeWith(plugins.ServeOptions{Open: func(ctx context.Context, args map[string]string) (vfs.FileSystem, error) { ... }})
//
// The host calls [Open] (or [OpenConfig]) and gets a vfs.FileSystem.
//
// # Protocol
//
// hashicorp/go-plugin over gRPC (pluginpb/julyfs.proto, generated code
// committed), with a magic cookie, AutoMTLS and VersionedPlugins: a host
// and a plugin of different [ProtocolVersion]s fail to start with a
// message naming both versions. List, Glob, Grep and Search are
// server-streaming RPCs carrying batches; when the host breaks out of its
// loop the call's context is cancelled, the plugin's send fails and its
// range over the tree's stream ends, which stops the tree's work. Read
// and Write move files in 1 MiB chunks, so files far above gRPC's 4 MiB
// message limit work and neither side holds more than the file and one
// chunk; on Linux a file of 256 KiB or more is handed over in an
// anonymous memory file instead (memfd, opened by the other side through
// /proc/PID/fd/N), which costs a fraction of the CPU of gRPC and TLS
// (Config.NoSharedMemory turns it off). A Read of such a file goes
// cheaper still: the host copies it with one process_vm_readv straight
// out of a (pooled) buffer of the plugin into the slice it returns, and
// falls back to memory files for good if it may not
// (Config.NoProcessMemory turns it off). Cheapest of all, a tree whose
// vfs.FileOpener readers are [OSFile]s (files of the host's disk) hands
// the host the open descriptor, and the host reads the file itself, one
// copy as in process (Config.NoHostFile turns it off; a host that cannot
// open it falls back for good). For such a tree (announced "host_file") a
// Read is one unary ReadFile call: small files inline, large ones as the
// descriptor, which the host keeps (its one cache: up to 64 descriptors
// per tree, closed after 5 s unused) so that a later Read of the path
// only asks whether the path still names that file (st_dev, st_ino),
// reading the held file meanwhile; a replaced file is handed over anew.
// For a vfs/local tree itself (a *local.FS, not a type embedding one) the
// plugin hands over the tree's root directory once, at Open
// (local.FS.BeneathDir), and the host answers Read and ReadAt of a path
// without asking the plugin whenever its own openat2 beneath that
// directory, with the tree's flags (RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS),
// opens a regular file: the tree resolves an exact path that way first,
// so that is the file it would read. Every other outcome (an error, a
// directory, a FIFO, a link the kernel refuses) goes to the plugin
// (Config.NoHostDir turns it off). The optional capabilities vfs.RangeReader,
// vfs.ConditionalWriter and vfs.Notifier are announced by the plugin's
// Open reply and the host's tree implements exactly those (Watch reports
// the changes made through the host's tree). One plugin process can hold
// several trees; every call names its tree.
//
// # Errors
//
// An error of the plugin's tree crosses as its kind, path, pattern and
// detail and is rebuilt as the same *vfs.PathError, so errors.Is and the
// contract strings are what they are in process; context errors stay
// context errors. A failure of the plugin itself is an [*Error] naming
// the plugin on one line: it cannot start (missing or non-executable
// binary, not a plugin, wrong SHA-256, version mismatch, a parameter its
// Open refuses), it crashed during the call ([ErrCrashed]), it keeps
// crashing ([ErrKeepsCrashing]), it answered nothing within
// [Config.CallTimeout] ([ErrNoAnswer]; see deadline.go), its answer broke
// the filesystem contract ([ErrContract]), or the caller's context ended.
// Crash errors also match vfs.ErrUnavailable.
//
// # Answers are checked
//
// The host checks every answer against the contract before passing it on
// (answers.go): clean absolute paths under what was asked (List: its
// immediate children), listings sorted by path and unique, grep hits in
// path then line order, search results in score then path order, known
// kinds, sizes and line numbers not negative, a Stat of the path asked
// for, a Read of the size it announced. The first violation ends the
// call with one [*Error] naming the plugin, the call and the rule; nothing
// of the bad answer reaches the caller.
//
// With [Config.Deferred] (what a host serving several mounts uses) a
// plugin that cannot start does not fail the open: the tree is returned,
// its calls answer the start error (also matching vfs.ErrUnavailable)
// and retry the start after a backoff, and [Client.StartErr] says why it
// has not started. Such a tree is bound before the plugin's optional
// capabilities are known, so it offers vfs.RangeReader and
// vfs.ConditionalWriter, whose helpers answer for every path (ReadAt is
// the plugin's own once it announces one, else vfs.ReadAt's fallback;
// WriteIf is vfs.WriteIf run by the plugin on its tree), and never
// vfs.Notifier, which has no answer per path. [Check] checks a
// configuration without running the plugin (binary, digest).
//
// # Life cycle
//
// The next call after a crash restarts the plugin (and reopens its tree
// with the same parameters: the contents of a writable in-memory plugin
// tree are lost), after a backoff doubling from 50ms; after 5 crashes in
// a minute calls fail with "keeps crashing" until the minute has passed.
// The plugin dies with its host, also on kill -9: on Linux the kernel
// kills it (Pdeathsig; plugins are forked from one goroutine locked to its
// thread for the life of the host, since Pdeathsig fires when the forking
// thread ends), and every plugin also exits when its parent changes. Nothing the plugin prints to standard output before Serve can
// break the handshake: while it starts, its file descriptor 1 points at
// standard error. Its standard error is logged by the host through hclog
// under "plugin.NAME"; [Logger] gives plugins a logger whose levels the
// host keeps ($JULYFS_PLUGIN_LOG sets the host's level, default warn).
//
// # Concurrency
//
// Both sides are safe for concurrent use; calls run concurrently over one
// connection. A restart happens under the client's lock, so calls that
// race a crash wait for one restart.
package plugins
