package bench

import (
	"testing"

	"github.com/authzbench/authzbench/internal/workload"
)

// Runs of a scaling family land in a series per engine: the style the workload names for OPA,
// Cedar and OpenFGA, and for SpiceDB, whose version the workload does not name (its package
// writes it from the OpenFGA one), the engine's own name; never none, or the tuple-scaling
// report would fit the other engines and leave SpiceDB's rows unfitted. A workload of no
// family, and an engine with no version of it, get no series.
func TestSeriesOfEveryEngine(t *testing.T) {
	w, err := workload.Builtin("rbac-data-10")
	if err != nil {
		t.Fatal(err)
	}
	for engine, want := range map[string]string{
		"opa": "rbac-data/rego", "cedar": "rbac-data/cedar", "openfga": "rbac-data/tuples", "spicedb": "rbac-data/spicedb",
		"http": "", // a plain endpoint is no engine of the registry: no version to name
	} {
		if got := seriesOf(engine, w); got != want {
			t.Errorf("%s on rbac-data-10: series %q, want %q", engine, got, want)
		}
	}
	api, err := workload.Builtin("api")
	if err != nil {
		t.Fatal(err)
	}
	if got := seriesOf("spicedb", api); got != "" {
		t.Errorf("spicedb on api: series %q, want none", got)
	}
}
