package bench

import (
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/workload"
)

// Runs of a scaling family land in a series per engine: the style the workload names for the
// engine (OPA's Rego, Cedar's), and for a registered engine whose version the workload does not
// name (one its own package writes) the engine's own name; never none, or the scaling report
// would fit the other engines and leave that engine's rows unfitted. Each engine's series is
// its own. A workload of no family, and an engine with no version of it, get no series.
func TestSeriesOfEveryEngine(t *testing.T) {
	w, err := workload.Builtin("rbac-data-10")
	if err != nil {
		t.Fatal(err)
	}
	for engine, want := range map[string]string{
		"opa": "rbac-data/rego", "cedar": "rbac-data/cedar",
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
	seen := map[string]string{}
	for _, e := range engine.All() {
		got := seriesOf(e.Name(), w)
		switch {
		case !e.Written(w) && got != "":
			t.Errorf("%s, with no version of rbac-data-10: series %q, want none", e.Name(), got)
		case e.Written(w) && !strings.HasPrefix(got, "rbac-data/"):
			t.Errorf("%s on rbac-data-10: series %q, want one of the rbac-data family", e.Name(), got)
		case got != "" && seen[got] != "":
			t.Errorf("%s and %s on rbac-data-10: both series %q, want one each", seen[got], e.Name(), got)
		}
		seen[got] = e.Name()
		if !e.Written(api) {
			if got := seriesOf(e.Name(), api); got != "" {
				t.Errorf("%s on api, with no version of it: series %q, want none", e.Name(), got)
			}
		}
	}
	if len(seen) < 3 {
		t.Errorf("series %v: want OPA's, Cedar's and the other engines'", seen)
	}
}
