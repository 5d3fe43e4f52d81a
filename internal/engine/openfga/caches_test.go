package openfga

import (
	"slices"
	"testing"
)

// The caches a target sets reach OpenFGA's run as its own flags, only those set, and its run
// command takes every one of them; the record keeps OpenFGA's defaults for the rest.
func TestCacheSettingsReachTheServer(t *testing.T) {
	c := CacheSettings{CheckQueryCache: "on", CheckQueryCacheTTL: "30s", CacheController: "on", CacheControllerTTL: "2s"}
	if errs := c.Check(); len(errs) != 0 {
		t.Fatalf("Check: %v", errs)
	}
	args := c.Args()
	want := []string{"--check-query-cache-enabled=true", "--check-query-cache-ttl=30s", "--cache-controller-enabled=true", "--cache-controller-ttl=2s"}
	if !slices.Equal(args, want) {
		t.Errorf("Args() = %q, want %q", args, want)
	}
	cmd := newRunCommand(nil)
	if err := cmd.Flags().Parse(args); err != nil {
		t.Errorf("authzbench openfga run refuses %q: %v", args, err)
	}
	rec := c.Record()
	if len(rec) != 3 || !rec[0].On || rec[0].TTLS != 30 || !rec[0].Set || rec[1].On || rec[1].Set || !rec[2].On || rec[2].TTLS != 2 {
		t.Errorf("Record() = %+v", rec)
	}
	if errs := (&CacheSettings{CheckIteratorCacheTTL: "5s"}).Check(); len(errs) != 1 {
		t.Errorf("a TTL for a cache left off: %v, want one error", errs)
	}
	if (&CacheSettings{}).Chosen() || len((&CacheSettings{}).Args()) != 0 {
		t.Error("no setting given still chose something")
	}
}
