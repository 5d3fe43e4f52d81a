package workload

import (
	"bytes"
	"reflect"
	"testing"
)

// TestBuiltinsAreDeterministic builds every built-in twice with the same seed and once with
// another: the same seed must give the same workload, byte for byte (policies, data, the Cedar
// version, every input with its expectation, reason and Cedar request), so that every run and
// every machine sends the same requests; another seed must give other inputs, or the seed is
// not used.
func TestBuiltinsAreDeterministic(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			build := func(seed int64) *Workload {
				t.Helper()
				w, err := builtins[name].Build(seed, 300)
				if err != nil {
					t.Fatalf("build with seed %d: %v", seed, err)
				}
				if len(w.Inputs) != 300 {
					t.Fatalf("build with seed %d: %d inputs, want 300", seed, len(w.Inputs))
				}
				return w
			}
			a, b := build(DefaultSeed), build(DefaultSeed)
			assertSameWorkload(t, a, b)
			if c := build(DefaultSeed + 1); bytes.Equal(c.Inputs[0].JSON, a.Inputs[0].JSON) {
				t.Errorf("another seed gave the same first input %s; is the seed used?", a.Inputs[0].JSON)
			}
		})
	}
}

// assertSameWorkload fails unless two builds produced the same workload: the same query, policy
// and data files, the same Cedar version, and the same inputs in the same order, with the same
// expectations, reasons and Cedar requests.
func assertSameWorkload(t *testing.T, a, b *Workload) {
	t.Helper()
	if a.Name != b.Name || a.Description != b.Description {
		t.Errorf("workload %s: name or description differ between two builds with the same seed", a.Name)
	}
	if !reflect.DeepEqual(a.Model, b.Model) || !reflect.DeepEqual(a.Versions, b.Versions) {
		t.Errorf("workload %s: the model or an engine's version differs between two builds with the same seed", a.Name)
	}
	if len(a.Inputs) != len(b.Inputs) {
		t.Fatalf("workload %s: %d inputs, then %d", a.Name, len(a.Inputs), len(b.Inputs))
	}
	for i := range a.Inputs {
		x, y := a.Inputs[i], b.Inputs[i]
		if !bytes.Equal(x.JSON, y.JSON) || x.Expect != y.Expect || x.Reason != y.Reason {
			t.Fatalf("workload %s input %d differs between two builds with the same seed:\n%s %s (%s)\n%s %s (%s)",
				a.Name, i, x.JSON, x.Expect, x.Reason, y.JSON, y.Expect, y.Reason)
		}
		if !reflect.DeepEqual(x.Model, y.Model) || !reflect.DeepEqual(x.Requests, y.Requests) {
			t.Fatalf("workload %s input %d: its model or an engine's request differs between two builds with the same seed:\n%v %v\n%v %v",
				a.Name, i, x.Model, x.Requests, y.Model, y.Requests)
		}
	}
}
