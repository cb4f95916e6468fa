// Package rootspec describes a composed julyfs tree as data and builds it.
//
// A root spec is a mount table: an ordered list of prefixes, each bound to a
// tree. It is written in one of two forms that share one grammar:
//
// Mount flags, one per mount (the julyfs CLI's repeatable --mount):
//
//	PREFIX=KIND:ARG[?OPTION,OPTION=VALUE...]
//	/=temp:                  an empty in-memory tree at the root
//	/repo=local:./src        the host directory ./src at /repo
//	/docs=local:./docs?ro    the same, read-only
//
// [ParseMount] parses one value, [ParseMounts] a repeated flag. The kinds a
// flag can name are temp: (ARG empty) and local:DIR (a host directory;
// relative to the base directory given, the working directory for the CLI).
// The options after the last '?' are comma-separated; ro makes the mount
// read-only. hostfiles:DIR and hostfiles:postgres://URL (durable host
// files with etag CAS, vfs/hostfiles) take scope=deployment|session; see
// hostfiles.go.
//
// YAML config files (julyfs --config, and root: in agent.yaml):
//
//	mounts:
//	  /repo: { local: ./src }
//	  /notes: { temp: {} }              # or temp: { /a.md: "seed content" }
//	  /docs:
//	    overlay:                        # same-root layers, earlier layers win
//	      - local: ./docs-local
//	      - local: ./docs
//	  /ext:
//	    union:                          # a nested mount table
//	      /a: { local: ./a, ro: true }
//	      /b: local:./b?ro             # a scalar entry is the flag form
//
// An entry is a mapping with exactly one kind key (temp, local, overlay,
// union) and optional options (ro or readonly: true), or a scalar in the
// flag's KIND:ARG[?OPTIONS] form. Relative directories resolve against the
// config file's own directory. [LoadFile] reads a file whose top level is
// the mounts: mapping; [DecodeMounts] decodes the mapping itself from a
// *yaml.Node with a base directory, which is how a caller embeds the same
// grammar under another key (the runner's root: in agent.yaml) and reports
// errors with line numbers. [DecodeMountsFile] does the same and names the
// file in errors.
//
// [Table.Override] combines a config with flags: a flag for a prefix the
// config already has replaces that entry in place; other flags are appended.
//
// # Errors
//
// Every malformed value is an error that names where it was written (the
// --mount value, or file:line and the prefix) and what is wrong: a missing
// '=', a relative prefix, an unknown kind (listing the known ones), an
// unknown option or key, a missing directory, a duplicate prefix. Unknown
// kinds and keys are errors, never ignored. Parse and decode errors are
// *[Error] values.
//
// # Building
//
// [Table.Open] turns a table into one vfs.FileSystem, held by a [Root]
// whose Close releases what the trees hold (directory handles); [Table.Build]
// is the same for callers that keep the tree for the life of the process. A
// single mount at "/" is that tree itself; anything else is a vfs/union of
// the mounts, in which each path is served by the mount with the longest
// prefix (a deeper mount shadows a shallower one whatever the table order).
// local is vfs/local, temp is vfs/temp, overlay is vfs/overlay, union is
// vfs/union, and the ro option wraps the tree with vfs/readonly. Parsing
// checks that local directories exist; Open checks again, since the disk
// may have changed since. plugin starts a plugin binary through the opener
// package plugins/pluginkind registers ([RegisterPluginOpener]); without
// it a plugin mount fails with [ErrNoPluginSupport], so binaries that do
// not mount plugins link no gRPC.
// A plugin that cannot start does not fail Open: the opener binds a tree
// whose calls answer the start error, and Open warns once per such mount
// (naming its origin and prefix) to standard error or to the function
// [WithWarn] put in the context. [Table.CheckPlugins] checks the plugin
// binaries without running them (july validate).
//
// # Adding a kind or an option
//
// A kind is a row in the kinds table (whether it has a flag form, and its
// usage line), a case in parseSpec for the flag's ARG, a case in the YAML
// entry decoder for its value, a case in [Spec.Arg] for messages and the
// mounts table, and a case in Root.spec that builds it. An option (such as
// ro) is a row in the options table: a function applying "" (a bare
// ?option), "true"/"false" or ?option=value to the spec; it is accepted
// after '?' in flags and as a key next to the kind in YAML entries. Kinds
// and options not in the tables are errors listing the known ones.
//
// # Plugins
//
// The plugin: kind opens through an opener that plugins/pluginkind
// registers ([RegisterPluginOpener], [RegisterPluginChecker]), so rootspec
// itself links no gRPC; without one a plugin: mount fails with
// [ErrNoPluginSupport].
//
// # Concurrency
//
// Tables and specs are plain values: safe to read from many goroutines,
// not to mutate while others read. The package holds no mutable state.
package rootspec
