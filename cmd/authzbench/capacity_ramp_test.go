package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/result"
)

// A ramp that cannot run is refused before any load, exit 2, naming the flag: no server is
// asked anything and no result is written.
func TestCapacityRampRefusesBadFlags(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, `{"result": true}`)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"zero", []string{"--ramp", "0"}, "--ramp 0s: want a positive duration"},
		{"negative", []string{"--ramp", "-5s"}, "--ramp -5s: want a positive duration"},
		{"a range of one rate", []string{"--ramp", "5s", "--start", "500", "--max", "500"}, "--ramp 5s: the range --start 500 to --max 500 holds one rate"},
		{"an interval longer than the ramp", []string{"--ramp", "2s", "--ramp-interval", "3s"}, "--ramp-interval 3s: longer than the --ramp 2s"},
		{"too many intervals", []string{"--ramp", "1h", "--ramp-interval", "1s"}, "--ramp-interval 1s: 3600 intervals in the --ramp 1h0m0s, at most 600"},
		{"an interval without a ramp", []string{"--ramp-interval", "1s"}, "--ramp-interval applies to a ramp; give --ramp DURATION too"},
		{"--no-confirm without a ramp", []string{"--no-confirm"}, "--no-confirm applies to a ramp"},
		{"a ramp with the search's bounds", []string{"--ramp", "5s", "--max-steps", "3"}, "--max-steps bounds the probe search; a --ramp is one run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			args := append([]string{"capacity", "--target", "opa/server", "--url", srv.URL, "--workload", "nop", "--warmup", "0s", "--no-progress", "-o", out}, tc.args...)
			code, stdout, stderr := run(t, args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d; stderr %q, want %q; stdout %q", code, exitUsage, stderr, tc.want, stdout)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s written for a refused ramp", out)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server was asked %d times by refused ramps", n)
	}
}

// An SLO no rate meets: the ramp ends as the search does when it finds nothing, the same exit
// status and the same words, its intervals all broken and kept in the result, and no probe to
// confirm an estimate it does not have.
func TestCapacityRampNeverMetEndsAsTheSearchDoes(t *testing.T) {
	if testing.Short() {
		t.Skip("about 2 s of load")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		time.Sleep(10 * time.Millisecond) // every answer slower than the 1 ms the SLO asks
		io.WriteString(w, `{"result": true}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	common := []string{"capacity", "--target", "opa/server", "--url", srv.URL, "--workload", "nop", "--slo", "p99=1ms",
		"--start", "50", "--max", "200", "--warmup", "0s", "--step", "500ms", "--no-progress"}
	searchCode, searchOut, searchErr := run(t, append(common, "--max-steps", "1", "-o", filepath.Join(dir, "search.json"))...)
	rampOut := filepath.Join(dir, "ramp.json")
	code, stdout, stderr := run(t, append(common, "--ramp", "1500ms", "--ramp-interval", "500ms", "-o", rampOut)...)
	if code != searchCode || !strings.Contains(searchOut, "no rate met p99<=1ms") {
		t.Fatalf("ramp exit %d, search exit %d (stderr %q, stdout:\n%s)", code, searchCode, searchErr, searchOut)
	}
	// On a busy machine the generator may fall behind first, and the ramp says so instead.
	want := "no rate met p99<=1ms, errors<=0%: even the ramp's first judged interval, 50.0–100 req/s, broke it (p99 "
	if strings.Contains(stdout, "the generator fell behind") {
		want = "no estimate: in the ramp's first judged interval, 50.0–100 req/s, the generator fell behind: the generator woke up late"
	}
	if !strings.Contains(stdout, want) {
		t.Errorf("stdout lacks %q:\n%s\nstderr %s", want, stdout, stderr)
	}
	doc, err := result.Read(rampOut)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 1 {
		t.Fatalf("%d runs, want the ramp's alone (no estimate, no probe)", len(doc.Runs))
	}
	ivs := doc.Runs[0].Repetitions[0].Intervals
	if len(ivs) != 3 {
		t.Fatalf("%d intervals, want 3", len(ivs))
	}
	for i, iv := range ivs {
		if iv.Verdict != result.Broke || iv.Sent+iv.Unsent != iv.Due {
			t.Errorf("interval %d: %+v, want broke, every due send accounted for", i, iv)
		}
	}
}
