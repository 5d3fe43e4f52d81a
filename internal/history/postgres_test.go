package history

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// A throwaway PostgreSQL server for the store suite: initdb in a temporary directory, listening
// on loopback at a free port, stopped by its PID when the tests end (TestMain). Where no
// PostgreSQL is installed (Debian's postgresql package puts it under /usr/lib/postgresql/*/bin),
// the Postgres half of the suite skips, saying so.

type pgServer struct {
	dir  string
	port int
	cmd  *exec.Cmd
	err  error // why there is none
}

var (
	pgOnce sync.Once
	pg     pgServer
	pgDBs  atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	pg.stop()
	os.Exit(code)
}

// postgresURL starts the server on first use and returns the URL of a new, empty database on
// it, or skips the test saying why there is no server.
func postgresURL(t *testing.T) string {
	t.Helper()
	pgOnce.Do(func() { pg.err = pg.start() })
	if pg.err != nil {
		t.Skipf("Postgres half skipped: %v", pg.err)
	}
	admin := fmt.Sprintf("postgres://bench@127.0.0.1:%d/postgres?sslmode=disable", pg.port)
	db, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), pgDBs.Add(1))
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	return fmt.Sprintf("postgres://bench@127.0.0.1:%d/%s?sslmode=disable", pg.port, name)
}

func (s *pgServer) start() error {
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		return fmt.Errorf("no PostgreSQL found (/usr/lib/postgresql/*/bin/initdb); .ci/run installs Debian's postgresql")
	}
	bin := filepath.Dir(bins[len(bins)-1])
	// initdb and postgres refuse to run as root: as root, they run as the postgres user, in a
	// directory it owns.
	var cred *syscall.Credential
	var uid, gid = -1, -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("running as root and no postgres user to run PostgreSQL as: %w", err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	dir, err := os.MkdirTemp("", "authzbench-pg-")
	if err != nil {
		return err
	}
	s.dir = dir
	if cred != nil {
		if err := os.Chmod(dir, 0o755); err != nil {
			return err
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return err
		}
	}
	as := func(c *exec.Cmd) *exec.Cmd {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
		return c
	}
	data := filepath.Join(dir, "data")
	if out, err := as(exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "bench", "--auth=trust", "--no-sync", "-E", "UTF8")).CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v: %s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	log, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return err
	}
	s.cmd = as(exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+dir, "-c", "fsync=off", "-c", "max_connections=50"))
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		db, _ := sql.Open("pgx", fmt.Sprintf("postgres://bench@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", s.port))
		err := db.PingContext(context.Background())
		db.Close()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
			return fmt.Errorf("postgres did not answer on 127.0.0.1:%d in 30 s: %v; its log: %s", s.port, err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop ends the server by its PID (a fast shutdown: SIGINT) and removes its directory.
func (s *pgServer) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			s.cmd.Process.Kill()
			<-done
		}
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}
