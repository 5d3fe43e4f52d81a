package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/result"
)

// A run that measured nothing does not pass: whatever command measured it (run, capacity, ab),
// a run or a repetition with no served decision exits 1 naming the run and why, --allow-errors
// or not, and the result is still written with the run in it; a window too short for its rate
// exits as usual but says so under the table and in the run's summary.
func TestARunThatMeasuredNothingDoesNotPass(t *testing.T) {
	serve := func(handle func(n int64, w http.ResponseWriter)) string {
		var hits atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			handle(hits.Add(1), w)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	decide := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"result": true}`)
	}
	// Slower than the warm-up's end plus the window: a request that began in the warm-up is
	// answered after the window closed, and none began inside it.
	slow := serve(func(_ int64, w http.ResponseWriter) { time.Sleep(200 * time.Millisecond); decide(w) })
	failing := serve(func(_ int64, w http.ResponseWriter) { http.Error(w, "down", http.StatusInternalServerError) })
	flaky := serve(func(n int64, w http.ResponseWriter) {
		if n%2 == 0 {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		decide(w)
	})
	dir := t.TempDir()
	served := func(url string, more ...string) []string {
		return append([]string{"run", "--target", "opa/server", "--url", url, "--workload", "nop", "--workers", "1", "--timeout", "2s", "--no-progress"}, more...)
	}
	inproc := func(more ...string) []string {
		return append([]string{"run", "--target", "opa/inproc", "--workload", "nop", "--warmup", "0s", "--no-progress"}, more...)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		exit   int
		stderr string // in stderr
		table  string // in stdout, under the table
		file   func(*result.Document) bool
	}{
		{"a window shorter than one decision", served(slow, "--warmup", "300ms", "--duration", "1ns"), exitFailed,
			"measured nothing: nop on opa/server, 1 worker: its repetition served no decision: its 1ns window (--duration) ended before any decision was answered",
			"NOTHING MEASURED", func(d *result.Document) bool {
				return d.Runs[0].Summary.Requests == 0 && len(d.Runs[0].Repetitions) == 1
			}},
		{"every response an error", served(failing, "--warmup", "0s", "--requests", "20"), exitFailed,
			"every one of its 20 responses was an error (http_500: 20)", "NOTHING MEASURED",
			func(d *result.Document) bool { return d.Runs[0].Summary.Errors == 20 && d.Runs[0].Summary.OK == 0 }},
		{"every response an error, --allow-errors", served(failing, "--warmup", "0s", "--requests", "20", "--allow-errors"), exitFailed,
			"every one of its 20 responses was an error", "NOTHING MEASURED", func(d *result.Document) bool { return d.Runs[0].Summary.OK == 0 }},
		{"every repetition of two", served(failing, "--warmup", "0s", "--requests", "20", "--repeat", "2", "--allow-errors"), exitFailed,
			"repetition 1 of 2 served no decision", "", func(d *result.Document) bool { return len(d.Runs[0].Repetitions) == 2 }},
		{"some errors", served(flaky, "--warmup", "0s", "--requests", "40"), exitFailed, "20 responses were not served decisions (see the table); --allow-errors to exit 0 anyway", "",
			func(d *result.Document) bool { return d.Runs[0].Summary.OK == 20 }},
		{"some errors, --allow-errors", served(flaky, "--warmup", "0s", "--requests", "40", "--allow-errors"), exitOK, "", "",
			func(d *result.Document) bool {
				s := d.Runs[0].Summary
				return s.OK == 20 && s.Errors == 20 && s.ShortWindow == nil
			}},
		{"one send due in a window at 10/s", inproc("--rate", "10", "--duration", "50ms"), exitOK, "",
			"req/s from too few sends: its repetition held 1 due in 50.0ms (10.0/s asked), fewer than the 10 a rate is read from",
			func(d *result.Document) bool {
				w := d.Runs[0].Summary.ShortWindow
				return w != nil && w.Fewest == 1 && w.Needed == 10 && w.Repetitions == 1
			}},
		{"one request", inproc("--requests", "1", "--workers", "1"), exitOK, "",
			"req/s from too few responses: its repetition held 1", func(d *result.Document) bool {
				w := d.Runs[0].Summary.ShortWindow
				return w != nil && w.Fewest == 1 && w.Needed == 10
			}},
		{"enough decisions", inproc("--requests", "200", "--workers", "2"), exitOK, "", "",
			func(d *result.Document) bool {
				return d.Runs[0].Summary.ShortWindow == nil && d.Runs[0].Summary.OK == 200
			}},
		{"a calibration window too short for its rate", []string{"calibrate", "--workers", "1", "--duration", "200ms", "--rate", "10"}, exitOK, "",
			"open loop at 10 req/s: not measured (too few sends for a rate: see the notes)", func(d *result.Document) bool {
				w := d.Runs[len(d.Runs)-1].Summary.ShortWindow
				return len(d.Runs) == 2 && d.Runs[0].Summary.ShortWindow == nil && w != nil && w.Fewest == 2
			}},
		{"a capacity step too short for its rate", []string{"capacity", "--target", "opa/inproc", "--workload", "nop", "--start", "10", "--step", "50ms",
			"--warmup", "0s", "--max-steps", "2", "--no-progress"}, exitFailed,
			"measured nothing: the probe at 10.0 req/s: only 1 send was due in its",
			"no knee: the probe at 10 req/s measured no rate", func(d *result.Document) bool { return len(d.Runs) == 1 }},
		{"a capacity probe that served nothing", []string{"capacity", "--target", "opa/server", "--url", failing, "--workload", "nop", "--start", "200",
			"--step", "200ms", "--warmup", "0s", "--max-steps", "2", "--no-progress"}, exitFailed,
			"the probe at 200 req/s: its repetition served no decision: every one of its", "FAIL: its repetition served no decision",
			func(d *result.Document) bool { return len(d.Runs) == 1 && d.Runs[0].Summary.OK == 0 }},
		{"an ab turn that served nothing", []string{"ab", "--workload-a", "nop", "--workload-b", "rbac", "--repeat", "1", "--out-a", "ab-a.json", "--out-b", "ab-b.json",
			"--", "--target", "opa/server", "--url", failing, "--requests", "10", "--warmup", "0s", "--workers", "1", "--allow-errors", "--no-progress"},
			exitFailed, "ab turn 1, side A: authzbench run exited with status 1", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			args := tc.args
			if args[0] == "ab" {
				for i, a := range args {
					if strings.HasPrefix(a, "ab-") {
						args[i] = filepath.Join(dir, a)
					}
				}
			} else {
				args = append(args, "-o", out)
			}
			code, stdout, stderr := run(t, args...)
			if code != tc.exit || !strings.Contains(stderr, tc.stderr) || !strings.Contains(unwrapped(stdout), tc.table) {
				t.Fatalf("exit %d, want %d; stderr %q, want %q; stdout, want %q:\n%s", code, tc.exit, stderr, tc.stderr, tc.table, stdout)
			}
			if tc.file == nil {
				return // ab: its turn's run wrote the turn's result, and the exit is ab's
			}
			doc, err := result.Read(out)
			if err != nil {
				t.Fatalf("the result of what was measured is kept: %v", err)
			}
			if !tc.file(doc) {
				t.Errorf("%s holds %+v", out, doc.Runs)
			}
		})
	}
}
