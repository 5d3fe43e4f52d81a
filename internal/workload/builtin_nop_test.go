package workload

import "testing"

// Cedar's version is internal/engine/cedar's to check (TestNopAllowsEverything there).
func TestNopAllowsEverything(t *testing.T) {
	w, err := buildNop(DefaultSeed, 200)
	if err != nil {
		t.Fatal(err)
	}
	pq := prepareOPA(t, w)
	for i, in := range w.Inputs {
		if in.Expect != ExpectAllow {
			t.Fatalf("input %d expects %s; nop expects allow everywhere", i, in.Expect)
		}
		if allow, defined, err := opaDecide(pq, in.JSON); err != nil || !defined || !allow {
			t.Fatalf("OPA on input %d: allow %v, defined %v, error %v", i, allow, defined, err)
		}
	}
}
