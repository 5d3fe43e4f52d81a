// Package pgserver starts a throwaway PostgreSQL server from the machine's installation: initdb
// in a temporary directory, postgres listening on a free loopback port, stopped by its PID. It
// is the database the history store's tests and the engines' --datastore postgres run against
// when no running database is named.
//
// It is not a way to manage a database anyone keeps: everything it starts is removed when it
// stops.
package pgserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Package is the Debian package that installs PostgreSQL where Find looks.
const Package = "postgresql"

// Where is the pattern Find looks for PostgreSQL's programs under: where Debian's and Ubuntu's
// postgresql package puts each major version. A variable so that tests can look where nothing
// is installed.
var Where = "/usr/lib/postgresql/*/bin/initdb"

// NotInstalledError says PostgreSQL is not installed where Find looks.
type NotInstalledError struct{ Looked string }

func (e *NotInstalledError) Error() string {
	return fmt.Sprintf("no PostgreSQL installed (looked for %s; install Debian's %s package)", e.Looked, Package)
}

// Find returns the directory of the newest PostgreSQL's programs installed, or a
// *NotInstalledError.
func Find() (string, error) {
	bins, _ := filepath.Glob(Where)
	if len(bins) == 0 {
		return "", &NotInstalledError{Looked: Where}
	}
	// Newest major version last: compared as numbers, so 9.6 sorts before 15.
	sort.Slice(bins, func(i, j int) bool { return majorOf(bins[i]) < majorOf(bins[j]) })
	return filepath.Dir(bins[len(bins)-1]), nil
}

func majorOf(initdb string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(filepath.Dir(initdb))), 64)
	return v
}

// Options are how the server is started. The zero value is a durable server, PostgreSQL's own
// defaults for writes.
type Options struct {
	// NotDurable turns off what makes a commit survive a crash (fsync, synchronous_commit,
	// full_page_writes): faster loads, for tests and for measurements that say so. Off by
	// default, as a production database runs.
	NotDurable bool
	// MaxConnections is postgres's max_connections; 0 is 100, PostgreSQL's default.
	MaxConnections int
}

// Server is a running PostgreSQL that Start started.
type Server struct {
	Bin  string // the directory of its programs
	Dir  string // its data and log, removed by Stop
	Port int
	// Version is the server's, as `postgres --version` says it ("postgres (PostgreSQL) 15.8").
	Version string
	// Settings are the ones it was started with that decide what it measures: fsync,
	// synchronous_commit, full_page_writes, max_connections.
	Settings map[string]string

	cmd      *exec.Cmd
	exited   chan error // postgres's Wait, once it has started
	stopOnce sync.Once
	stopErr  error
}

// User is the superuser initdb makes; connections from loopback are trusted.
const User = "authzbench"

// Start runs initdb in a new temporary directory and starts postgres on a free loopback port,
// waiting until it answers (at most 30 s). As root, PostgreSQL's programs, which refuse to run
// as root, run as the postgres user. Stop ends it.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin, err := Find()
	if err != nil {
		return nil, err
	}
	s := &Server{Bin: bin, Settings: map[string]string{}}
	cred, uid, gid, err := runAs()
	if err != nil {
		return nil, err
	}
	if s.Dir, err = os.MkdirTemp("", "authzbench-pg-"); err != nil {
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			s.Stop()
		}
	}()
	if cred != nil {
		if err := os.Chmod(s.Dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.Chown(s.Dir, uid, gid); err != nil {
			return nil, err
		}
	}
	as := func(c *exec.Cmd) *exec.Cmd {
		// A process group of its own: a terminal's Ctrl-C reaches authzbench, which stops it
		// in order, not the server first.
		c.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
		return c
	}
	if out, err := as(exec.CommandContext(ctx, filepath.Join(bin, "postgres"), "--version")).Output(); err == nil {
		s.Version = strings.TrimSpace(string(out))
	}
	data := filepath.Join(s.Dir, "data")
	// --no-sync: initdb's own files need not reach the disk, they are thrown away with the
	// directory; the server's durability is its settings below.
	if out, err := as(exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", User, "--auth=trust", "--no-sync", "-E", "UTF8")).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb in %s: %v: %s", data, err, out)
	}
	if s.Port, err = freePort(); err != nil {
		return nil, err
	}
	durable := "on"
	if opts.NotDurable {
		durable = "off"
	}
	maxConns := opts.MaxConnections
	if maxConns == 0 {
		maxConns = 100
	}
	s.Settings = map[string]string{"fsync": durable, "synchronous_commit": durable, "full_page_writes": durable,
		"max_connections": strconv.Itoa(maxConns)}
	args := []string{"-D", data, "-p", strconv.Itoa(s.Port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + s.Dir}
	for _, k := range []string{"fsync", "synchronous_commit", "full_page_writes", "max_connections"} {
		args = append(args, "-c", k+"="+s.Settings[k])
	}
	log, err := os.Create(filepath.Join(s.Dir, "postgres.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	s.cmd = as(exec.Command(filepath.Join(bin, "postgres"), args...))
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := s.ping(ctx)
		if err == nil {
			started = true
			s.exited = exited
			return s, nil
		}
		select {
		case werr := <-exited:
			s.cmd = nil
			out, _ := os.ReadFile(filepath.Join(s.Dir, "postgres.log"))
			return nil, fmt.Errorf("postgres exited before answering (%v); its log: %s", werr, out)
		case <-ctx.Done():
			s.exited = exited
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.exited = exited
			out, _ := os.ReadFile(filepath.Join(s.Dir, "postgres.log"))
			return nil, fmt.Errorf("postgres did not answer on 127.0.0.1:%d in 30 s: %v; its log: %s", s.Port, err, out)
		}
	}
}

// runAs is the user PostgreSQL's programs run as: this process's, unless that is root.
func runAs() (cred *syscall.Credential, uid, gid int, err error) {
	if os.Geteuid() != 0 {
		return nil, -1, -1, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, -1, -1, fmt.Errorf("running as root, and no postgres user to run PostgreSQL as (initdb refuses root): %w", err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, uid, gid, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

// URL is the address of database db on the server, as its clients take it.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", User, s.Port, db)
}

// CreateDatabase creates an empty database and returns its URL.
func (s *Server) CreateDatabase(ctx context.Context, name string) (string, error) {
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return s.URL(name), nil
}

// Stop ends the server by its PID (a fast shutdown, SIGINT; SIGKILL after 20 s) and removes its
// directory. It is safe to call more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil && s.exited != nil {
			_ = s.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-s.exited:
			case <-time.After(20 * time.Second):
				_ = s.cmd.Process.Kill()
				<-s.exited
				s.stopErr = errors.New("postgres did not stop in 20 s of SIGINT: killed")
			}
		}
		if s.Dir != "" {
			if err := os.RemoveAll(s.Dir); err != nil && s.stopErr == nil {
				s.stopErr = err
			}
		}
	})
	return s.stopErr
}
