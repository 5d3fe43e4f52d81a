package workload

import "testing"

// OPA's and Cedar's versions are their packages' to check (TestNopAllowsEverything there).
func TestNopAllowsEverything(t *testing.T) {
	w, err := buildNop(DefaultSeed, 200)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range w.Inputs {
		if in.Expect != ExpectAllow {
			t.Fatalf("input %d expects %s; nop expects allow everywhere", i, in.Expect)
		}
	}
}
