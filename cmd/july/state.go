package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/schedule"
	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/runner/sessions/pgstore"
)

// This file chooses where an agent's state is kept: a directory (the
// default .july in the agent directory), or a PostgreSQL database named
// by a postgres:// state root (--state-root, or agent.yaml's stateRoot).

// stateRoot returns the state root for agent a: --state-root, else
// agent.yaml's stateRoot (a directory relative to the agent's), else .july
// in the agent directory.
func stateRoot(c *cli.Context, a *runner.Agent) string {
	if d := c.String("state-root"); d != "" {
		return d
	}
	if d := a.Config.StateRoot; d != "" {
		if pgstore.IsURL(d) || filepath.IsAbs(d) {
			return d
		}
		return filepath.Join(a.Dir, d)
	}
	return filepath.Join(a.Dir, DefaultStateDir)
}

// diskStateRoot is stateRoot for the commands that work on a session's
// files directly (the copy-on-write ones): a database is refused.
func diskStateRoot(c *cli.Context, a *runner.Agent) (string, error) {
	root := stateRoot(c, a)
	if pgstore.IsURL(root) {
		return "", fmt.Errorf("july %s works on the session's directory: the state root %s is a database; give --state-root DIR", c.Command.Name, pgstore.Redact(root))
	}
	return root, nil
}

// agentState is where one agent's state is kept.
type agentState struct {
	sessions *sessions.Store
	sched    schedule.Store
}

// databases are the PostgreSQL state roots this process opened, by URL,
// one connection pool each however many agents share it.
var databases = struct {
	sync.Mutex
	m map[string]*pgstore.DB
}{m: map[string]*pgstore.DB{}}

// closeDatabases closes the databases opened by openState.
func closeDatabases() {
	databases.Lock()
	defer databases.Unlock()
	for url, db := range databases.m {
		db.Close()
		delete(databases.m, url)
	}
}

// openState opens agent a's state at root (a directory, or a postgres://
// URL: a's sessions and schedules are then the rows of its name, and the
// sessions' own files stay in .july/sessions in the agent directory).
func openState(ctx context.Context, root string, a *runner.Agent) (agentState, error) {
	if !pgstore.IsURL(root) {
		return agentState{sessions: sessions.New(root), sched: schedule.DiskStore(root)}, nil
	}
	databases.Lock()
	defer databases.Unlock()
	db := databases.m[root]
	if db == nil {
		var err error
		if db, err = pgstore.Open(ctx, root, pgstore.Options{}); err != nil {
			return agentState{}, err
		}
		databases.m[root] = db
	}
	local := filepath.Join(a.Dir, DefaultStateDir, "sessions")
	return agentState{sessions: sessions.NewWithBackend(db.Sessions(a.Config.Name, local)), sched: db.Schedule(a.Config.Name)}, nil
}

// openStore opens the session store of agent a (stateRoot).
func openStore(c *cli.Context, a *runner.Agent) (*sessions.Store, error) {
	st, err := openState(c.Context, stateRoot(c, a), a)
	return st.sessions, err
}
