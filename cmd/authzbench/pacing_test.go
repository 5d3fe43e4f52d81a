package main

import (
	"bufio"
	"encoding/json"
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

	"github.com/authzbench/authzbench/internal/pacing"
	"github.com/authzbench/authzbench/internal/result"
)

// The recording server, run as authzbench itself, sees a paced sequence the test sends with a
// 20 ms pause in the middle: it counts every arrival, finds the arrivals after the pause late by
// about 20 ms, and writes its report when interrupted.
// startRecordingServer starts authzbench calibrate --serve 127.0.0.1:0 with these flags as a
// process of its own (so its recording is not slowed by the test's), and returns the address
// it listens on and a stop that interrupts it, waits for it and returns its stdout and the
// report it wrote to out.
func startRecordingServer(t *testing.T, out string, flags ...string) (addr string, stop func() (string, pacing.Report)) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"calibrate", "--serve", "127.0.0.1:0", "--serve-for", "60s", "--pacing-out", out}, flags...)...)
	cmd.Env = append(os.Environ(), "AUTHZBENCH_TEST_MAIN=1")
	stderr, _ := cmd.StderrPipe()
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	addrs := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := regexp.MustCompile(`trivial server on (127\.0\.0\.1:\d+)`).FindStringSubmatch(sc.Text()); m != nil {
				addrs <- m[1]
			}
		}
	}()
	select {
	case addr = <-addrs:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not say where it listens within 30 s")
	}
	return addr, func() (string, pacing.Report) {
		t.Helper()
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
		return stdout.String(), rep
	}
}

func TestServeJudgesPacing(t *testing.T) {
	addr, stop := startRecordingServer(t, filepath.Join(t.TempDir(), "pacing.json"), "--pacing-rate", "1000")

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
	stdout, rep := stop()
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
	if !strings.Contains(stdout, "lateness against the ideal schedule: p50") {
		t.Errorf("stdout has no summary: %q", stdout)
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
	event := func(id, path string) string {
		return fmt.Sprintf(`{"decision_id":%q,"path":%q,"input":{},"result":true,"timestamp":"2026-01-01T00:00:00Z"}`, id, path)
	}
	oneLog, twoPaths, notJSON := filepath.Join(dir, "one.jsonl"), filepath.Join(dir, "two.jsonl"), filepath.Join(dir, "bad.jsonl")
	os.WriteFile(oneLog, []byte(event("1", "a/allow")+"\n"), 0o644)
	os.WriteFile(twoPaths, []byte(event("1", "a/allow")+"\n"+event("2", "b/allow")+"\n"), 0o644)
	os.WriteFile(notJSON, []byte(event("1", "a/allow")+"\nnot json\n"), 0o644)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
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
		{"rate and schedule", append(serve, "--pacing-rate", "1000", "--pacing-schedule", oneLog), "--pacing-rate and --pacing-schedule"},
		{"speed without schedule", append(serve, "--pacing-rate", "1000", "--pacing-speed", "2"), "--pacing-speed applies to --pacing-schedule LOG"},
		{"zero speed", append(serve, "--pacing-schedule", oneLog, "--pacing-speed", "0"), "speed must be a positive number"},
		{"negative skip requests", append(serve, "--pacing-rate", "1000", "--pacing-skip-requests", "-1"), "--pacing-skip-requests -1"},
		{"schedule missing", append(serve, "--pacing-schedule", filepath.Join(dir, "none.jsonl")), "none.jsonl"},
		{"schedule not JSON", append(serve, "--pacing-schedule", notJSON), "bad.jsonl:2: not JSON"},
		{"schedule of two paths", append(serve, "--pacing-schedule", twoPaths), "two.jsonl holds decisions of 2 paths (a/allow, b/allow)"},
		{"schedule is the report", append(serve, "--pacing-schedule", oneLog, "--pacing-out", oneLog, "--force"), "which this command reads (--pacing-schedule)"},
		{"a port taken", []string{"calibrate", "--serve", taken.Addr().String(), "--serve-for", "100ms"}, "--serve " + taken.Addr().String() + ": listen tcp " + taken.Addr().String() + ": bind: address already in use"},
		{"no port", []string{"calibrate", "--serve", "localhost", "--serve-for", "100ms"}, `--serve "localhost": want HOST:PORT`},
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

// A bare --serve says where it listens, port 0's included, and ends with 0 at Ctrl-C or
// SIGTERM, as the README says: it said nothing, and died of either signal (130, 143).
func TestServeBareSaysWhereAndStopsWithZero(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "calibrate", "--serve", "127.0.0.1:0")
			cmd.Env = append(os.Environ(), "AUTHZBENCH_TEST_MAIN=1")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			addrs := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					if m := regexp.MustCompile(`trivial server on (127\.0\.0\.1:\d+); it stops at Ctrl-C or SIGTERM`).FindStringSubmatch(sc.Text()); m != nil {
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
			resp, err := http.Get("http://" + addr + "/")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(body), `"result":true`) {
				t.Errorf("answer %q, want the trivial allow", body)
			}
			cmd.Process.Signal(sig)
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			select {
			case err := <-waited:
				if err != nil {
					t.Errorf("exit after %s: %v, want 0", sig, err)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("still serving 30 s after %s", sig)
			}
		})
	}
}

// --serve-for alone serves the plain trivial server for that long, then exits 0.
func TestServeForStops(t *testing.T) {
	code, _, stderr := run(t, "calibrate", "--serve", "127.0.0.1:0", "--serve-for", "50ms")
	if code != 0 || !strings.Contains(stderr, "it stops at Ctrl-C or SIGTERM, or after 50ms") || strings.Contains(stderr, "recording") {
		t.Errorf("exit %d, stderr %q; want 0 after serving, not recording, for 50ms", code, stderr)
	}
}

// A paced replay, judged by the recording server against the log it replays: the log's uneven
// gaps (30 events 1 ms apart, a 400 ms pause, 30 events 2 ms apart) at --speed 2. Judged against
// any constant rate the pause would make half the arrivals about 100 ms late; judged against the
// log, each arrival is held to its own event's offset / 2. The run's probe is left out by count,
// and the schedule the server judged is the one the result says the run followed.
func TestServeJudgesAReplayAgainstItsLog(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "authz.rego")
	if err := os.WriteFile(policy, []byte("package authz\n\nallow := true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var lines []string
	const events = 60
	for k := range events {
		at := start.Add(time.Duration(k) * time.Millisecond)
		if k >= 30 {
			at = start.Add(29*time.Millisecond + 400*time.Millisecond + time.Duration(k-30)*2*time.Millisecond)
		}
		lines = append(lines, fmt.Sprintf(`{"decision_id":"d%d","path":"authz/allow","input":{"n":%d},"result":true,"timestamp":%q}`,
			k, k, at.Format(time.RFC3339Nano)))
	}
	logPath := filepath.Join(dir, "uneven.jsonl")
	if err := os.WriteFile(logPath, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	addr, stop := startRecordingServer(t, filepath.Join(dir, "pacing.json"),
		"--pacing-schedule", logPath, "--pacing-speed", "2", "--pacing-skip-requests", "1")
	out := filepath.Join(dir, "replay.json")
	code, stdout, stderr := run(t, "run", "--target", "opa/server", "--url", "http://"+addr, "--decision-log", logPath,
		"--policy", policy, "--speed", "2", "--no-progress", "-o", out)
	serverOut, rep := stop()
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s\n%s", code, stdout, stderr)
	}
	doc, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	followed := doc.Runs[0].Load.Replay
	if followed == nil {
		t.Fatal("the result does not record the replay's schedule")
	}
	judged := rep.Replay
	if judged == nil || judged.Path != "authz/allow" || judged.Events != followed.Events || judged.SpanS != followed.SpanS ||
		judged.Speed != followed.Speed || judged.MaxGapS != followed.MaxGapS || judged.GapsShortened != followed.GapsShortened {
		t.Fatalf("the server judged against %+v; the run followed %+v", judged, followed)
	}
	if want := (487 * time.Millisecond).Seconds(); followed.Events != events || followed.SpanS != want || followed.Speed != 2 {
		t.Errorf("the run followed %+v, want %d events over %g s at 2×", followed, events, want)
	}
	if rep.AskedRPS != 0 || rep.Alignment != pacing.ReplayAlignment {
		t.Errorf("asked %g req/s, alignment %q: want the replay's schedule, no rate", rep.AskedRPS, rep.Alignment)
	}
	// The accounting: the probe, then every event once, each held to a slot of the log.
	if rep.Seen != events+1 || rep.Skipped != 1 || rep.Arrivals != events || rep.Expected != events || rep.Missing != 0 || rep.Extra != 0 {
		t.Errorf("seen %d, skipped %d, judged %d, expected %d, missing %d, extra %d; want %d, 1, %d, %d, 0, 0",
			rep.Seen, rep.Skipped, rep.Arrivals, rep.Expected, rep.Missing, rep.Extra, events+1, events, events)
	}
	// Wide margins for a busy machine: against k/rate, or against the log at 1×, the median
	// arrival would be 100 ms late or more.
	if p50 := rep.LatenessUS.P50; p50 > 50_000 {
		t.Errorf("lateness p50 %.0f µs against the log's schedule, want under 50 ms", p50)
	}
	if !strings.Contains(serverOut, "pacing against the replay of 60 events over 487ms at 2× ("+logPath+", path authz/allow)") {
		t.Errorf("the summary does not name the schedule:\n%s", serverOut)
	}
}
