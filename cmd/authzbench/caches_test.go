package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// cacheOf is the run's record of the cache called name; it fails the test without one.
func cacheOf(t *testing.T, r result.Run, name string) result.Cache {
	t.Helper()
	for _, c := range r.SUT.Caches {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("%s: no %s in its caches %+v", r.Target, name, r.SUT.Caches)
	return result.Cache{}
}

// A run with a cache on records it, and its hit ratio from the engine's own metrics is above 0
// over inputs that repeat (rbac's 1,000, asked 3,000 times); each run's notes say what was on,
// a comparison of engines whose caches differ says so in its findings, allowed and denied are
// recorded apart adding up to ok, and the skew asked for is recorded.
func TestCachesRecordedWithTheirHitRatio(t *testing.T) {
	dir := t.TempDir()
	doc, stdout := runOK(t, filepath.Join(dir, "r.json"), "run", "--target", "openfga/inproc,openfga/server,spicedb/server", "--workload", "rbac",
		"--openfga-check-query-cache", "on", "--openfga-check-query-cache-ttl", "1m", "--openfga-check-iterator-cache", "on",
		"--input-skew", "hot:90/10", "--requests", "3000", "--workers", "2", "--warmup", "0s", "--no-progress")
	if len(doc.Runs) != 3 {
		t.Fatalf("%d runs, want 3", len(doc.Runs))
	}
	for _, r := range doc.Runs {
		if r.Load.InputSkew != "hot:90/10" {
			t.Errorf("%s: load.input_skew %q, want hot:90/10", r.Target, r.Load.InputSkew)
		}
		d := r.Summary.Decisions
		if d == nil || d.Allow.Count == 0 || d.Deny.Count == 0 || d.Allow.Count+d.Deny.Count != r.Summary.OK {
			t.Errorf("%s: decisions %+v, ok %d: want allowed and denied apart, adding up to ok", r.Target, d, r.Summary.OK)
		}
		var c result.Cache
		if strings.HasPrefix(r.Target, "openfga/") {
			c = cacheOf(t, r, "check_query_cache")
			if !c.On || !c.Set || c.TTLS != 60 {
				t.Errorf("%s: check query cache %+v: want on, set, ttl 60 s", r.Target, c)
			}
			if ctl := cacheOf(t, r, "cache_controller"); ctl.On || ctl.Set {
				t.Errorf("%s: cache controller %+v: want off, OpenFGA's default", r.Target, ctl)
			}
		} else {
			c = cacheOf(t, r, "dispatch_cache")
			if !c.On || c.Set {
				t.Errorf("%s: dispatch cache %+v: want on, SpiceDB's default", r.Target, c)
			}
		}
		if ratio, ok := c.HitRatio(); !ok || ratio <= 0 || c.Hits > c.Lookups {
			t.Errorf("%s: %s counted %v lookups, %v hits: want a hit ratio above 0 over repeating inputs", r.Target, c.Name, c.Lookups, c.Hits)
		}
	}
	if flat := strings.Join(strings.Fields(stdout), " "); !strings.Contains(flat, "caches: check_query_cache on (ttl 60s)") ||
		!strings.Contains(flat, "dispatch_cache on (the engine's default)") {
		t.Errorf("the notes do not say what was on:\n%s", stdout)
	}
	if !strings.Contains(stdout, "Allowed and denied apart") {
		t.Errorf("no table of allowed and denied:\n%s", stdout)
	}

	// OpenFGA with every cache off, its default, beside SpiceDB with its dispatch cache: the
	// findings say the comparison is partly one of caches.
	_, stdout = runOK(t, filepath.Join(dir, "apart.json"), "run", "--target", "openfga/inproc,spicedb/inproc,spicedb/server", "--workload", "rbac",
		"--requests", "300", "--warmup", "0s", "--no-progress")
	flat := strings.Join(strings.Fields(stdout), " ") // the findings are wrapped to the terminal
	if !strings.Contains(flat, "rbac: the engines ran with different caches (openfga/inproc with no cache") ||
		!strings.Contains(flat, "with dispatch_cache on, dispatch_cache hit") {
		t.Errorf("a comparison of engines with different caches does not say so:\n%s", stdout)
	}
	if !strings.Contains(flat, "dispatch_cache off (pkg/embedded's checker has none)") {
		t.Errorf("spicedb/inproc's notes do not say it has no dispatch cache:\n%s", stdout)
	}
}

// Bad cache and skew settings exit 2 before any load, naming the flag, and write no result.
func TestCacheAndSkewFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not on or off", []string{"--target", "openfga/inproc", "--openfga-check-query-cache", "yes"}, `--openfga-check-query-cache "yes": want on or off`},
		{"ttl of a cache left off", []string{"--target", "openfga/inproc", "--openfga-check-iterator-cache-ttl", "5s"}, "--openfga-check-iterator-cache-ttl sets how long the entries of a cache the run leaves off live: give --openfga-check-iterator-cache on"},
		{"bad ttl", []string{"--target", "openfga/server", "--openfga-cache-controller", "on", "--openfga-cache-controller-ttl", "soon"}, `--openfga-cache-controller-ttl "soon": want a positive Go duration`},
		{"no openfga target", []string{"--target", "opa/inproc", "--openfga-check-query-cache", "on"}, "--openfga-check-query-cache applies to the openfga/inproc and openfga/server targets, and none is selected"},
		{"dispatch cache", []string{"--target", "spicedb/server", "--spicedb-dispatch-cache", "maybe"}, `--spicedb-dispatch-cache "maybe": want on or off`},
		{"running spicedb", []string{"--target", "spicedb/server", "--url", "grpc://127.0.0.1:1", "--spicedb-key", "k", "--spicedb-dispatch-cache", "off"}, "--spicedb-dispatch-cache sets the dispatch cache of the SpiceDB authzbench starts"},
		{"zipf", []string{"--target", "opa/inproc", "--input-skew", "zipf:0"}, `--input-skew "zipf:0": want zipf:S`},
		{"hot", []string{"--target", "opa/inproc", "--input-skew", "hot:90/100"}, `--input-skew "hot:90/100": want hot:K/H`},
		{"unknown", []string{"--target", "opa/inproc", "--input-skew", "gauss"}, `--input-skew "gauss": want cycle`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			args := append([]string{"run", "--workload", "rbac", "--requests", "10", "--no-progress", "-o", out}, tc.args...)
			code, _, stderr := run(t, args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitUsage, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused run wrote %s", out)
			}
		})
	}
}
