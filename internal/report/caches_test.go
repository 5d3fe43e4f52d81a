package report

import (
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// Each run's notes say which caches were on, set or the engine's default, and how often they
// hit; a workload measured on engines whose caches differ gets a finding saying so, and one
// whose engines ran alike gets none.
func TestCacheNotesAndFindings(t *testing.T) {
	fga := result.Run{Workload: "rbac", Target: "openfga/inproc", SUT: result.SUT{Caches: []result.Cache{
		{Name: "check_query_cache", On: true, TTLS: 10, Set: true, Counted: true, Lookups: 2000, Hits: 1500},
		{Name: "check_iterator_cache"}, {Name: "cache_controller"}}}}
	spice := result.Run{Workload: "rbac", Target: "spicedb/server", SUT: result.SUT{Caches: []result.Cache{
		{Name: "dispatch_cache", On: true, Counted: true, Lookups: 400, Hits: 100}}}}
	notes := strings.Join(runNotes(&fga), "\n")
	for _, want := range []string{"caches: check_query_cache on (ttl 10s): 75.0 % of 2000 lookups hit", "check_iterator_cache off (the engine's default)"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q do not say %q", notes, want)
		}
	}
	doc := &result.Document{Runs: []result.Run{fga, spice}}
	if got := cacheFindings(doc); len(got) != 0 {
		t.Errorf("OpenFGA's query cache against SpiceDB's dispatch cache, both a cache on yet different ones: %q", got)
	}
	fga.SUT.Caches[0].On = false
	doc = &result.Document{Runs: []result.Run{fga, spice, {Workload: "rbac", Target: "opa/inproc"}}}
	got := strings.Join(cacheFindings(doc), "\n")
	if !strings.Contains(got, "rbac: the engines ran with different caches (openfga/inproc with no cache; spicedb/server with dispatch_cache on, dispatch_cache hit 25 %)") {
		t.Errorf("findings %q: want the caches that differ said", got)
	}
	doc = &result.Document{Runs: []result.Run{fga, {Workload: "rbac", Target: "spicedb/inproc", SUT: result.SUT{Caches: []result.Cache{{Name: "dispatch_cache", Why: "none"}}}}}}
	if got := cacheFindings(doc); len(got) != 0 {
		t.Errorf("two engines with no cache on: %q", got)
	}
}
