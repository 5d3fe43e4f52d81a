package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/pacing"
)

// The recording server, run as authzbench itself, sees a paced sequence the test sends with a
// 20 ms pause in the middle: it counts every arrival, finds the arrivals after the pause late by
// about 20 ms, and writes its report when interrupted.
func TestServeJudgesPacing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "pacing.json")
	cmd := exec.Command(os.Args[0], "calibrate", "--serve", "127.0.0.1:0", "--serve-for", "60s",
		"--pacing-rate", "1000", "--pacing-out", out)
	cmd.Env = append(os.Environ(), "AUTHZBENCH_TEST_MAIN=1")
	stderr, _ := cmd.StderrPipe()
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	addrs := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := regexp.MustCompile(`trivial server on (127\.0\.0\.1:\d+)`).FindStringSubmatch(sc.Text()); m != nil {
				addrs <- m[1]
			}
		}
	}()
	var addr string
	select {
	case addr = <-addrs:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not say where it listens within 30 s")
	}

	// 200 requests on a 1 ms schedule over 4 keep-alive connections; from the 100th on, the
	// schedule is 20 ms later, as if the generator had stalled. Each connection's answers are
	// read by a goroutine of its own, so a slow answer never delays a send.
	const requests, pause = 200, 20 * time.Millisecond
	conns := make([]net.Conn, 4)
	answered := make(chan error, len(conns))
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
		go func() {
			r := bufio.NewReader(c)
			for range requests / len(conns) {
				resp, err := http.ReadResponse(r, nil)
				if err != nil {
					answered <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			answered <- nil
		}()
	}
	req := "POST /v1/data/nop HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{\"input\":{}}"
	start := time.Now()
	for k := range requests {
		due := start.Add(time.Duration(k) * time.Millisecond)
		if k >= requests/2 {
			due = due.Add(pause)
		}
		time.Sleep(time.Until(due))
		if _, err := io.WriteString(conns[k%len(conns)], req); err != nil {
			t.Fatal(err)
		}
	}
	for range conns {
		select {
		case err := <-answered:
			if err != nil {
				t.Fatalf("reading an answer: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("not every request was answered within 30 s")
		}
	}
	cmd.Process.Signal(os.Interrupt)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("exit: %v, want 0 once stopped and reported; stdout %s", err, stdout.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not stop within 30 s of Ctrl-C")
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep pacing.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("the server's summary:\n%s", stdout.String())
	if rep.Seen != requests || rep.Arrivals != requests || rep.CapReached {
		t.Errorf("seen %d, judged %d, cap reached %v; want every one of %d judged", rep.Seen, rep.Arrivals, rep.CapReached, requests)
	}
	// The 100 after the pause are late by about 20 ms: they are the slowest tenth and more,
	// so p90 is one of them. The margins are wide, for a busy machine: this test's own sends
	// can be late, and if every one before the pause was, the schedule starts later and the
	// pause shows less.
	if p90 := rep.LatenessUS.P90; p90 < 10_000 || p90 > 500_000 {
		t.Errorf("lateness p90 %.0f µs, want about 20,000: the pause", p90)
	}
	if rep.LateOver1ms < requests/2-5 {
		t.Errorf("%d arrivals more than 1 ms late, want the %d after the pause", rep.LateOver1ms, requests/2)
	}
	// 20 ms at 1,000 req/s is 20 slots that went by with nothing sent.
	if rep.Missing < 10 {
		t.Errorf("%d missing, want about 20: the slots of the pause", rep.Missing)
	}
	if !strings.Contains(stdout.String(), "lateness against the ideal schedule: p50") {
		t.Errorf("stdout has no summary: %q", stdout.String())
	}
}

// Flags that cannot work, or a report that would replace a file, are refused before anything is
// served. --serve-for bounds each case, so a server that starts anyway ends the test with the
// wrong status rather than hanging it.
func TestServeUsageErrors(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "kept.json")
	os.WriteFile(existing, []byte("kept\n"), 0o644)
	serve := []string{"calibrate", "--serve", "127.0.0.1:0", "--serve-for", "100ms"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"pacing without serve", []string{"calibrate", "--pacing-rate", "1000", "--duration", "1ms"}, "--pacing-rate applies to --serve ADDR"},
		{"zero rate", append(serve, "--pacing-rate", "0"), "--pacing-rate 0: want the rate"},
		{"out without rate", append(serve, "--pacing-out", filepath.Join(dir, "new.json")), "--pacing-out needs --pacing-rate"},
		{"existing out", append(serve, "--pacing-rate", "1000", "--pacing-out", existing), "kept.json already exists: name a new file, or give --force"},
		{"out is a directory", append(serve, "--pacing-rate", "1000", "--pacing-out", dir), "is a directory"},
		{"out under a file", append(serve, "--pacing-rate", "1000", "--pacing-out", filepath.Join(existing, "p.json")), "kept.json is not a directory"},
		{"negative serve-for", []string{"calibrate", "--serve", "127.0.0.1:0", "--serve-for", "-1s"}, "--serve-for -1s"},
		{"negative skip", append(serve, "--pacing-rate", "1000", "--pacing-skip", "-1s"), "--pacing-skip -1s"},
		{"zero cap", append(serve, "--pacing-rate", "1000", "--pacing-cap", "0"), "--pacing-cap 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type result struct {
				code   int
				stderr string
			}
			done := make(chan result, 1)
			go func() {
				var out, errb strings.Builder
				done <- result{execute(tc.args, &out, &errb), errb.String()}
			}()
			var code int
			var stderr string
			select {
			case r := <-done:
				code, stderr = r.code, r.stderr
			case <-time.After(20 * time.Second):
				t.Fatalf("still serving after 20 s; want exit %d and %q before serving", exitUsage, tc.want)
			}
			if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "trivial server on") {
				t.Errorf("exit %d, stderr %q; want exit %d and %q, before serving", code, stderr, exitUsage, tc.want)
			}
		})
	}
	if b, _ := os.ReadFile(existing); string(b) != "kept\n" {
		t.Errorf("the existing file was changed: %q", b)
	}
}

// With --force an existing file is replaced, whole; a server nothing reached says so and fails,
// and its report, with nothing judged, is still written.
func TestServeForceReplacesAndNothingArrivedFails(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.json")
	os.WriteFile(existing, []byte("old\n"), 0o644)
	code, _, stderr := run(t, "calibrate", "--serve", "127.0.0.1:0", "--serve-for", "100ms", "--pacing-rate", "1000",
		"--pacing-out", existing, "--force")
	if code != exitFailed || !strings.Contains(stderr, "no arrivals to judge") {
		t.Errorf("exit %d, stderr %q; want exit 1 saying nothing arrived", code, stderr)
	}
	var rep pacing.Report
	b, err := os.ReadFile(existing)
	if err == nil {
		err = json.Unmarshal(b, &rep)
	}
	if err != nil || rep.AskedRPS != 1000 || rep.Seen != 0 {
		t.Errorf("report %q (%v): want the new, empty report", b, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the directory, want the report alone (no temporary file left)", len(entries))
	}
}

// --serve-for alone serves the plain trivial server for that long, then exits 0.
func TestServeForStops(t *testing.T) {
	code, _, stderr := run(t, "calibrate", "--serve", "127.0.0.1:0", "--serve-for", "50ms")
	if code != 0 || !strings.Contains(stderr, "it stops at Ctrl-C or SIGTERM, or after 50ms") || strings.Contains(stderr, "recording") {
		t.Errorf("exit %d, stderr %q; want 0 after serving, not recording, for 50ms", code, stderr)
	}
}
