// Package buildinfo says which build a julyfs binary is: its module
// version, the version-control revision and time it was built from, whether
// the work tree had uncommitted changes, and the Go toolchain. Everything
// comes from the build information the Go linker records in every binary
// (runtime/debug.ReadBuildInfo), so `go install …@v0.1.0`, `go build` in a
// git checkout and `go run` each report what they are without a release
// step. A packager may set the version with
//
//	go build -ldflags '-X github.com/julyfs/julyfs/internal/buildinfo.version=v0.1.0'
//
// which wins over the module version (a `go build` in a checkout records
// "(devel)" there); buildinfo.date likewise records the build's time,
// which Go leaves out so that builds reproduce.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// version and date, when set at link time (-ldflags -X), are the version
// reported and the time of the build (RFC 3339).
var version, date string

// Info is what a binary knows about its own build.
type Info struct {
	// Path is the main package's import path, such as
	// github.com/julyfs/julyfs/cmd/julyfs.
	Path string
	// Version is the module version ("v0.1.0", a pseudo-version, or
	// "(devel)" for a build in a work tree).
	Version string
	// Revision is the version-control commit the binary was built from,
	// "" when the build did not record one (go run, -buildvcs=false).
	Revision string
	// Time is the commit time of Revision; zero when unknown.
	Time time.Time
	// Built is the time of the build, when the build set it at link
	// time (Go records none of its own, so that builds reproduce).
	Built time.Time
	// Modified reports that the work tree had uncommitted changes.
	Modified bool
	// GoVersion is the toolchain that built the binary, such as go1.26.8.
	GoVersion string
	// Platform is GOOS/GOARCH.
	Platform string
}

// Read returns the running binary's build information.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "(unknown)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	}
	return fromBuildInfo(bi, version, date)
}

// fromBuildInfo is Read's work on a given build info and link-time
// version.
func fromBuildInfo(bi *debug.BuildInfo, linked, built string) Info {
	in := Info{Path: bi.Path, Version: bi.Main.Version, GoVersion: bi.GoVersion}
	in.Built, _ = time.Parse(time.RFC3339, built)
	if in.Version == "" {
		in.Version = "(devel)"
	}
	if linked != "" {
		in.Version = linked
	}
	var goos, goarch string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time, _ = time.Parse(time.RFC3339, s.Value)
		case "vcs.modified":
			in.Modified = s.Value == "true"
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	if goos == "" {
		goos, goarch = runtime.GOOS, runtime.GOARCH
	}
	in.Platform = goos + "/" + goarch
	return in
}

// Short is the one-line version: the module version, then the first 12
// digits of the revision with "-dirty" for a modified tree, when known.
// It is what --version prints: "v0.1.0", "(devel) a61c9b6f2e1d-dirty".
func (in Info) Short() string {
	s := in.Version
	if in.Revision != "" {
		rev := in.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		s += " " + rev
		if in.Modified {
			s += "-dirty"
		}
	}
	return s
}

// String is the full report the version commands print, one fact a line:
//
//	julyfs v0.1.0
//	commit   a61c9b6f2e1d4c0b9d6a3c1e5f7a9b0c2d4e6f80 (modified)
//	date     2026-12-01T12:00:00Z (the commit's)
//	built    2026-12-02T09:30:00Z
//	go       go1.26.8 linux/amd64
//	module   github.com/julyfs/julyfs/cmd/julyfs
//
// prog is the command's name.
func (in Info) String(prog string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", prog, in.Version)
	rev := in.Revision
	if rev == "" {
		rev = "unknown (built without version control information)"
	} else if in.Modified {
		rev += " (modified)"
	}
	fmt.Fprintf(&b, "commit   %s\n", rev)
	if !in.Time.IsZero() {
		fmt.Fprintf(&b, "date     %s (the commit's)\n", in.Time.UTC().Format(time.RFC3339))
	}
	if !in.Built.IsZero() {
		fmt.Fprintf(&b, "built    %s\n", in.Built.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(&b, "go       %s %s\n", in.GoVersion, in.Platform)
	if in.Path != "" {
		fmt.Fprintf(&b, "module   %s\n", in.Path)
	}
	return b.String()
}
