package full

import (
	"fmt"
	"log"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/fusemount"
	"github.com/julyfs/julyfs/internal/julyfscli"
	"github.com/julyfs/julyfs/rootspec"
	"github.com/julyfs/julyfs/vfs"
)

// mount is 'julyfs mount DIR', its arguments checked.
func mount(c *cli.Context, dir string) error {
	table, err := julyfscli.LoadTable(c)
	if err != nil {
		return err
	}
	// Check the mountpoint before opening any tree.
	if _, err := fusemount.CheckMountpoint(dir); err != nil {
		return err
	}
	root, err := table.Open(c.Context)
	if err != nil {
		return err
	}
	defer root.Close()
	// --index: the index serves Search and follows the mount's writes.
	fsys, closeIndex := vfs.FileSystem(root.FS), func() error { return nil }
	if idx := c.String("index"); idx != "" {
		if fsys, closeIndex, err = openIndex(c, root.FS, idx); err != nil {
			return err
		}
	}
	defer closeIndex()
	logger := log.New(c.App.ErrWriter, "julyfs: ", log.LstdFlags)
	opts := fusemount.Options{
		ReadOnly:        c.Bool("read-only") || !writable(table),
		Debug:           c.Bool("debug"),
		Logger:          logger,
		EntryTimeout:    cacheTimeout(c, "entry-timeout"),
		AttrTimeout:     cacheTimeout(c, "attr-timeout"),
		NegativeTimeout: cacheTimeout(c, "negative-timeout"),
		AllowOther:      c.Bool("allow-other"),
		// --passthrough asks for it on any tree (on by default where
		// the mount can keep every open working); --passthrough=false
		// turns it off.
		Passthrough:   c.IsSet("passthrough") && c.Bool("passthrough"),
		NoPassthrough: c.IsSet("passthrough") && !c.Bool("passthrough"),
		WriteInPlace:  c.Bool("write-in-place"),
		FsName:        c.String("fsname"),
		// This process exists to serve the mount.
		SpareProcs: true,
	}
	// Under systemd, STOPPING=1 once the mount is going away (the unit's
	// stop, an unmount).
	defer notifySystemd(logger, daemon.SdNotifyStopping)
	return fusemount.Serve(c.Context, dir, fsys, opts, func(s *fusemount.Server) {
		// The mount answers: READY=1 for a Type=notify unit.
		notifySystemd(logger, daemon.SdNotifyReady)
		mode := "read-write"
		if opts.ReadOnly {
			mode = "read-only"
		}
		fmt.Fprintf(c.App.ErrWriter, "julyfs: serving %d mount(s) on %s (%s); stop with Ctrl-C or 'julyfs unmount %s'\n",
			len(table), s.Dir(), mode, s.Dir())
	})
}

// notifySystemd sends state to systemd's notification socket when the
// process runs under a unit that listens (NOTIFY_SOCKET set); elsewhere
// it does nothing. A failure to send is logged: the mount still serves.
func notifySystemd(logger *log.Logger, state string) {
	if _, err := daemon.SdNotify(false, state); err != nil {
		logger.Printf("telling systemd %s: %v", state, err)
	}
}

// unmount is 'julyfs unmount [--lazy] DIR'.
func unmount(_ *cli.Context, dir string, lazy bool) error {
	return fusemount.Unmount(dir, lazy)
}

// writable reports whether any mount of the table accepts writes.
func writable(t rootspec.Table) bool {
	for _, m := range t {
		if m.Spec.Writable() {
			return true
		}
	}
	return false
}

// cacheTimeout is the timeout flag name asks for as fusemount has it: 0
// (fusemount's defaults, which cache entries the mount hears every change
// of for fusemount.ObservedTimeout) when the flag is not given, and the
// flag's 0 ("no caching") as fusemount's negative.
func cacheTimeout(c *cli.Context, name string) time.Duration {
	if !c.IsSet(name) {
		return 0
	}
	if d := c.Duration(name); d > 0 {
		return d
	}
	return -1
}
