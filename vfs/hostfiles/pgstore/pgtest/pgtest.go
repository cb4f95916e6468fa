// Package pgtest gives tests a real PostgreSQL: [URL] returns the server
// scripts/test started (JULYFS_TEST_POSTGRES), and [Start] starts a
// private throwaway server (initdb and pg_ctl in a temporary directory, on
// a loopback port) for tests that stop and restart it.
//
// Without JULYFS_TEST_POSTGRES a test is skipped, unless CI is set: in CI
// the PostgreSQL tests must run, so a missing server fails them.
package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the environment variable holding the shared server's URL.
const EnvURL = "JULYFS_TEST_POSTGRES"

// Password is the password of the julyfs role of servers Start makes.
const Password = "julyfs-test-secret"

// URL returns the shared server's URL, skipping t when there is none and
// CI is unset, failing it when CI is set.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		Missing(t, EnvURL+" is not set (scripts/test starts a server and sets it)")
	}
	return u
}

// Missing skips t, or fails it under CI, for a missing PostgreSQL.
func Missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("PostgreSQL tests must run in CI: %s", why)
	}
	t.Skip(why)
}

// Server is a private PostgreSQL cluster.
type Server struct {
	Dir  string // the cluster's directory (data, socket, log)
	Port int
	URL  string // postgres://julyfs:Password@127.0.0.1:Port/julyfs
	bin  string
	asPG bool // run the server as the postgres user (we are root)
}

// Bin returns the directory of the newest installed PostgreSQL's
// programs, or "".
func Bin() string {
	if d := os.Getenv("JULYFS_TEST_PGBIN"); d != "" {
		return d
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		a, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		b, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return a < b
	})
	if len(dirs) == 0 {
		return ""
	}
	return dirs[len(dirs)-1]
}

// Start makes and starts a private cluster with a julyfs role (password
// Password) and database, stopped and removed by t.Cleanup. settings are
// extra server settings ("fsync=off").
func Start(t testing.TB, settings ...string) *Server {
	t.Helper()
	bin := Bin()
	if bin == "" {
		Missing(t, "no PostgreSQL installed under /usr/lib/postgresql")
	}
	dir, err := os.MkdirTemp("", "julyfs-pg-")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Dir: dir, bin: bin, asPG: os.Geteuid() == 0}
	t.Cleanup(func() {
		s.Stop()
		os.RemoveAll(dir)
	})
	if s.asPG {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte(Password+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := s.run("initdb", "-D", filepath.Join(dir, "data"), "-U", "julyfs", "--pwfile="+pw,
		"--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	conf := "listen_addresses = '127.0.0.1'\nunix_socket_directories = '" + dir + "'\n"
	for _, kv := range settings {
		conf += kv + "\n"
	}
	f, err := os.OpenFile(filepath.Join(dir, "data", "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(conf)
	f.Close()
	for attempt := 0; ; attempt++ {
		s.Port = freePort(t)
		if err := s.Start(); err == nil {
			break
		} else if attempt == 4 {
			log, _ := os.ReadFile(filepath.Join(dir, "log"))
			t.Fatalf("pg_ctl start: %v\n%s", err, log)
		}
	}
	s.URL = fmt.Sprintf("postgres://julyfs:%s@127.0.0.1:%d/julyfs?sslmode=disable", Password, s.Port)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://julyfs:%s@127.0.0.1:%d/postgres?sslmode=disable", Password, s.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE julyfs"); err != nil {
		t.Fatal(err)
	}
	return s
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (s *Server) run(prog string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	path := filepath.Join(s.bin, prog)
	var cmd *exec.Cmd
	if s.asPG {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	return cmd.CombinedOutput()
}

// Start starts the stopped server and waits until it accepts connections.
func (s *Server) Start() error {
	out, err := s.run("pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-l", filepath.Join(s.Dir, "log"),
		"-o", "-p "+strconv.Itoa(s.Port), "-w", "-t", "30", "start")
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// Stop stops the server (fast mode: connections are cut).
func (s *Server) Stop() error {
	out, err := s.run("pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-m", "fast", "-w", "-t", "30", "stop")
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}
