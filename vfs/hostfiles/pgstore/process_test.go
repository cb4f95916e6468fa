package pgstore_test

import (
	"context"
	"os"
	"testing"

	"github.com/julyfs/julyfs/vfs/hostfiles"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore/pgtest"
	"github.com/julyfs/julyfs/vfs/hostfiles/storetest"
)

func TestMain(m *testing.M) {
	storetest.HelperMain(func(url string) (hostfiles.Store, error) {
		return pgstore.Open(context.Background(), url, pgstore.Options{})
	})
	os.Exit(m.Run())
}

func TestLostUpdateProcesses(t *testing.T) {
	url := pgtest.URL(t)
	storetest.CounterProcesses(t, openStore(t, url), url, freshScope(t), 4, 25)
}

func TestKillWriter(t *testing.T) {
	url := pgtest.URL(t)
	storetest.KillWriter(t, openStore(t, url), url, freshScope(t), 4<<20, 5)
}

func TestDeleteProcesses(t *testing.T) {
	url := pgtest.URL(t)
	storetest.DeleteProcesses(t, openStore(t, url), url, freshScope(t))
}
