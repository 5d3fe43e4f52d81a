package pgserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestStartStop: a server started answers on loopback with the settings it reports, its
// database is made empty, and Stop ends its process and removes its directory.
func TestStartStop(t *testing.T) {
	if _, err := Find(); err != nil {
		var none *NotInstalledError
		if !errors.As(err, &none) {
			t.Fatal(err)
		}
		t.Skipf("PostgreSQL not installed: %v", err)
	}
	ctx := context.Background()
	s, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	url, err := s.CreateDatabase(ctx, "bench")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	var fsync, commit string
	if err := conn.QueryRow(ctx, "SELECT current_setting('fsync'), current_setting('synchronous_commit')").Scan(&fsync, &commit); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if fsync != "on" || commit != "on" || s.Settings["fsync"] != "on" {
		t.Errorf("durable by default: server says fsync=%s synchronous_commit=%s, reports %v", fsync, commit, s.Settings)
	}
	pid := s.cmd.Process.Pid
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("postgres %d still there after Stop: %v", pid, err)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Errorf("%s left behind: %v", s.Dir, err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// TestNotDurable: asked not to be durable, the server runs with fsync off, and says so.
func TestNotDurable(t *testing.T) {
	if _, err := Find(); err != nil {
		t.Skipf("PostgreSQL not installed: %v", err)
	}
	ctx := context.Background()
	s, err := Start(ctx, Options{NotDurable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var fsync string
	if err := conn.QueryRow(ctx, "SHOW fsync").Scan(&fsync); err != nil {
		t.Fatal(err)
	}
	if fsync != "off" || s.Settings["fsync"] != "off" {
		t.Errorf("server says fsync=%s, reports %v", fsync, s.Settings)
	}
}

// TestNotInstalledSays: the error names the package and where it looked.
func TestNotInstalledSays(t *testing.T) {
	msg := (&NotInstalledError{Looked: Where}).Error()
	for _, want := range []string{"postgresql package", filepath.Dir(Where)} {
		if !contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
