package diskstore_test

import (
	"os"
	"testing"

	"github.com/julyfs/julyfs/vfs/hostfiles"
	"github.com/julyfs/julyfs/vfs/hostfiles/diskstore"
	"github.com/julyfs/julyfs/vfs/hostfiles/storetest"
)

func TestMain(m *testing.M) {
	storetest.HelperMain(func(dir string) (hostfiles.Store, error) { return diskstore.Open(dir, diskstore.Options{}) })
	os.Exit(m.Run())
}

func TestLostUpdateProcesses(t *testing.T) {
	dir := t.TempDir()
	storetest.CounterProcesses(t, openStore(t, dir), dir, hostfiles.Deployment, 4, 25)
}

func TestKillWriter(t *testing.T) {
	dir := t.TempDir()
	storetest.KillWriter(t, openStore(t, dir), dir, hostfiles.Deployment, 4<<20, 5)
}

func TestDeleteProcesses(t *testing.T) {
	dir := t.TempDir()
	storetest.DeleteProcesses(t, openStore(t, dir), dir, hostfiles.Deployment)
}
