package report

import (
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// A run over a chosen datastore says which, how it was started, and what loading it took; a run
// without one says nothing of it.
func TestDatastoreNote(t *testing.T) {
	r := &result.Run{}
	for _, n := range runNotes(r) {
		if strings.Contains(n, "datastore") {
			t.Errorf("a run on the engine's default datastore: %q", n)
		}
	}
	r.SUT.Datastore = &result.Datastore{Engine: "postgres", Started: true, Settings: map[string]string{"fsync": "on"},
		Tuples: 1376, LoadSeconds: 0.25, TuplesPerSecond: 5504, BulkPath: "OpenFGA Write", SizeBytes: 9157991, AnalyzeSeconds: 0.114,
		Pool: "OpenFGA --datastore-max-open-conns 30"}
	got := strings.Join(runNotes(r), "\n")
	for _, want := range []string{"datastore postgres started by authzbench (fsync on)", "1,376 tuples loaded in 0.25 s, 5,504 a second, through OpenFGA Write",
		"database 9.2 MB", "ANALYZE 0.11 s", "pool: OpenFGA --datastore-max-open-conns 30"} {
		if !strings.Contains(got, want) {
			t.Errorf("notes %q do not say %q", got, want)
		}
	}
	r.SUT.Datastore = &result.Datastore{Engine: "postgres", URI: "postgres://bench:xxxxx@db:5432/x", Tuples: 3,
		AnalyzeError: "ANALYZE after the load: permission denied"}
	got = strings.Join(runNotes(r), "\n")
	for _, want := range []string{"datastore postgres at postgres://bench:xxxxx@db:5432/x: 3 tuples", "not analyzed (ANALYZE after the load: permission denied)"} {
		if !strings.Contains(got, want) {
			t.Errorf("a running database not analyzed: notes %q do not say %q", got, want)
		}
	}
}
