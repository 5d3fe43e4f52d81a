package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A history with the committed quickstart in it.
func quickstartHistory(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "h.db")
	if code, _, stderr := run(t, "history", "add", "--history", db, "--branch", "main", "../../docs/results/quickstart-2026-11-23.json"); code != 0 {
		t.Fatalf("history add: %d %s", code, stderr)
	}
	return db
}

// serve refuses, before it listens, what it must not serve: an address other machines can
// reach without --allow-remote, a port out of range or taken, a history that is not there or
// cannot be read. Each exits 2 and says which flag is wrong; no file is created or changed.
func TestServeBadInput(t *testing.T) {
	db := quickstartHistory(t)
	dir := t.TempDir()
	corrupt, newer := badHistories(t, dir)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := fmt.Sprint(taken.Addr().(*net.TCPAddr).Port)

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"any address", []string{"--history", db, "--host", "0.0.0.0"}, "--host 0.0.0.0: not a loopback address"},
		{"a LAN address", []string{"--history", db, "--host", "192.168.1.10"}, "add --allow-remote to mean it"},
		{"a name", []string{"--history", db, "--host", "bench.example"}, `--host "bench.example": not an IP address`},
		{"port out of range", []string{"--history", db, "--port", "70000"}, "--port 70000"},
		{"port taken", []string{"--history", db, "--port", takenPort}, "--port " + takenPort},
		{"no timeout", []string{"--history", db, "--timeout", "0s"}, "--timeout 0s"},
		{"no such history", []string{"--history", filepath.Join(dir, "none.db")}, "no history database there"},
		{"corrupted database", []string{"--history", corrupt}, "is not a SQLite database"},
		{"newer schema", []string{"--history", newer}, "use a newer authzbench"},
		{"an argument", []string{"--history", db, "extra"}, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := serveRefuses(t, append([]string{"serve", "--port", "0"}, tc.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 saying %q", code, stderr, tc.want)
			}
		})
	}
	if got, _ := os.ReadFile(corrupt); !bytes.Equal(got, notADatabase) {
		t.Error("the corrupted database was changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "none.db")); err == nil {
		t.Error("serve created the history it was pointed at")
	}
}

// serveRefuses runs serve in this process and fails the test if it is still running after a
// while: then it took what it should have refused and is serving.
func serveRefuses(t *testing.T, args ...string) (code int, stderr string) {
	t.Helper()
	type ended struct {
		code   int
		stderr string
	}
	done := make(chan ended, 1)
	go func() {
		var out, errb bytes.Buffer
		done <- ended{execute(args, &out, &errb), errb.String()}
	}()
	select {
	case e := <-done:
		return e.code, e.stderr
	case <-time.After(20 * time.Second):
		t.Fatalf("serve %q is serving after 20 s: it should have refused", args)
	}
	return 0, ""
}

// serve as a process: it says where it listens, serves the series list and a stored report,
// and stops on SIGTERM and on Ctrl-C (SIGINT) with status 0, its port closed.
func TestServeStopsOnSignal(t *testing.T) {
	db := quickstartHistory(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "serve", "--history", db, "--port", "0")
			cmd.Env = append(os.Environ(), "AUTHZBENCH_TEST_MAIN=1")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill() // only if the test failed before it stopped
			lines := bufio.NewReader(stdout)
			first, err := lines.ReadString('\n')
			if err != nil {
				t.Fatalf("serve said nothing: %v\n%s", err, stderr.String())
			}
			url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(first)
			if url == "" {
				t.Fatalf("serve's first line %q names no loopback URL", first)
			}
			client := &http.Client{Timeout: 30 * time.Second}
			for _, path := range []string{"", "report/1"} {
				res, err := client.Get(url + path)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "opa/server") {
					t.Fatalf("GET /%s = %d:\n%.1000s", path, res.StatusCode, body)
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			rest, _ := io.ReadAll(lines)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("after %s: %v\n%s", sig, err, stderr.String())
			}
			if !strings.Contains(string(rest), "stopped") {
				t.Errorf("after %s serve said %q, want stopped", sig, rest)
			}
			if _, err := client.Get(url); err == nil {
				t.Errorf("%s still answers after serve stopped", url)
			}
		})
	}
}
