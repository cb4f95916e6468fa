// Command loopback mounts go-fuse's own loopback filesystem
// (fs.NewLoopbackRoot) of SRC on DIR with the mount options julyfs uses, as
// the peer for bench/fuse/run.sh. It serves until SIGINT or SIGTERM. It is
// built against the go-fuse copy in third_party/go-fuse and does not set
// that copy's one addition (fuse.MountOptions.PollReaders), so it runs
// go-fuse as released.
//
//	loopback [-passthrough=false] SRC DIR
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/julyfs/julyfs/third_party/go-fuse/fs"
	"github.com/julyfs/julyfs/third_party/go-fuse/fuse"
)

func main() {
	passthrough := flag.Bool("passthrough", true, "let the kernel read and write the backing files directly (FUSE passthrough; needs root)")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: loopback [-passthrough=false] SRC DIR")
		os.Exit(2)
	}
	root, err := fs.NewLoopbackRoot(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	sec := time.Second
	opts := &fs.Options{
		EntryTimeout: &sec,
		AttrTimeout:  &sec,
		MountOptions: fuse.MountOptions{
			FsName:       "loopback",
			Name:         "loopback",
			DirectMount:  true,
			MaxWrite:     1 << 20,
			MaxReadAhead: 1 << 20,
		},
	}
	if !*passthrough {
		opts.MountOptions.DisabledCapabilities = fuse.CAP_PASSTHROUGH
	}
	srv, err := fs.Mount(flag.Arg(1), root, opts)
	if err != nil {
		log.Fatal(err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sig
		srv.Unmount()
	}()
	fmt.Println("ready")
	srv.Wait()
}
