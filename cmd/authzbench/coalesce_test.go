package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/load"
)

// --coalesce (and a scenario's coalesce key) is the user's trade of lateness for generator CPU:
// an open-loop run over plain HTTP/1.1 records it with the engine that honoured it, and a value
// that cannot be honoured is refused before any load, named by flag or line, leaving no result.
func TestCoalesceIsRecordedAndBadValuesRefused(t *testing.T) {
	dir := t.TempDir()
	fast := []string{"--target", "opa/server", "--workload", "nop", "--warmup", "0s", "--duration", "300ms", "--connections", "4", "--no-progress"}
	doc, _ := runOK(t, filepath.Join(dir, "ok.json"), append([]string{"run", "--rate", "200", "--coalesce", "100us"}, fast...)...)
	r := doc.Runs[0]
	if r.Load.CoalesceUS != 100 {
		t.Errorf("load %+v: want coalesce_us 100", r.Load)
	}
	if r.Summary.Open == nil || r.Summary.Open.Sender != load.SenderEventLoop {
		t.Errorf("open summary %+v: want the event loop's", r.Summary.Open)
	}
	// At 200 req/s a loop's sends are 5 ms apart: the window sent none together, and the user
	// is told why, with the run kept as it is.
	code, _, stderr := run(t, append([]string{"run", "--rate", "200", "--coalesce", "100us", "-o", filepath.Join(dir, "apart.json")}, fast...)...)
	if code != 0 || !strings.Contains(stderr, "target opa/server: coalesce 100µs had no effect: no two of an event loop's sends fell due within it") {
		t.Errorf("--coalesce 100us at 200 req/s: exit %d, stderr %q; want 0 and a warning that no sends fell due within the window", code, stderr)
	}

	// In process there is no event loop: the window is kept in the result, beside the sender
	// that ignored it, and the user is told.
	inproc := []string{"run", "--rate", "200", "--coalesce", "100us", "--target", "opa/inproc", "--workload", "nop", "--warmup", "0s", "--duration", "300ms", "--no-progress"}
	code, _, stderr = run(t, append(inproc, "-o", filepath.Join(dir, "inproc.json"))...)
	if code != 0 || !strings.Contains(stderr, "target opa/inproc: coalesce 100µs had no effect") {
		t.Errorf("opa/inproc with --coalesce: exit %d, stderr %q; want 0 and a warning that it had no effect", code, stderr)
	}

	file := filepath.Join(dir, "closed.yaml")
	if err := os.WriteFile(file, []byte("load: {workers: 2, coalesce: 50us}\nworkloads: [nop]\ntargets: [opa/inproc]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"negative", append([]string{"run", "--rate", "200", "--coalesce", "-1us"}, fast...), "--coalesce -1µs: want 0 (each send at its time) to 1ms"},
		{"above a late send's bound", append([]string{"run", "--rate", "200", "--coalesce", "2ms"}, fast...), "--coalesce 2ms: want 0"},
		{"closed loop", append([]string{"run", "--workers", "2", "--coalesce", "100us"}, fast...), "--coalesce 100µs applies to an open loop"},
		{"a file's closed loop", []string{"run", "-f", file}, "closed.yaml:1: coalesce 50µs applies to an open loop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			code, _, stderr := run(t, append(tc.args, "-o", out)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitUsage, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused load left %s", out)
			}
		})
	}
}
