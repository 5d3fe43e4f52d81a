package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/bench"
	"github.com/authzbench/authzbench/internal/result"
)

// sweepFile writes a result holding a fitted replica sweep of rbac on opa/inproc, as merge or
// run would have written it: throughput 1.0, 1.9 and 2.6 times one replica's.
func sweepFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "replicas.json")
	doc := &result.Document{Schema: result.Schema, Scalability: []result.USLFit{{
		Workload: "rbac", Target: "opa/inproc", Param: "replicas", Fitted: true, Lambda: 1000, Sigma: 0.075, Kappa: 0.0125, R2: 0.99,
		Points: []result.USLPoint{{N: 1, RPS: 1000}, {N: 2, RPS: 1900}, {N: 3, RPS: 2600}},
	}}}
	if err := result.Write(path, doc); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCapacityPlansReplicasFromAFit(t *testing.T) {
	sweep := sweepFile(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"need without a model", []string{"capacity", "--need", "5000"}, "give --usl-from RESULT.json too"},
		{"no such sweep", []string{"capacity", "--target", "opa/server", "--usl-from", sweep}, "no replica sweep of rbac on opa/server; it has rbac on opa/inproc"},
		{"no file", []string{"capacity", "--usl-from", filepath.Join(t.TempDir(), "none.json")}, "--usl-from: read result"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitUsage, tc.want)
			}
		})
	}
	// One replica held the SLO at 600 req/s: the plan scales it by the model.
	doc, err := result.Read(sweep)
	if err != nil {
		t.Fatal(err)
	}
	model, err := bench.ReplicaModelFrom(doc, sweep, "rbac", "opa/inproc")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		need float64
		want []string
	}{
		{1000, []string{"replicas, from the USL fitted to " + sweep, " 1 replica(s): about 600 req/s", " 4 replica(s): about", "(extrapolated)",
			"one replica cannot meet 1000 req/s; the model says 2 replicas can"}},
		{500, []string{"one replica already meets 500 req/s"}},
		{1e6, []string{"no replica count reaches 1000000 req/s: the model peaks at 8.6 replicas with 2162 req/s"}},
	} {
		var out strings.Builder
		printReplicaPlan(&out, bench.Knee{Pass: &bench.Probe{Rate: 600}}, model, replicaPlanFlags{from: sweep, need: tc.need, maxReplicas: 10})
		for _, want := range tc.want {
			if !strings.Contains(out.String(), want) {
				t.Errorf("need %g: output lacks %q:\n%s", tc.need, want, out.String())
			}
		}
	}
}
