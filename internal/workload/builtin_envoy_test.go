package workload

import "testing"

func TestEnvoyMatchesReferenceModel(t *testing.T) {
	w, err := buildEnvoy(DefaultSeed, 500)
	if err != nil {
		t.Fatal(err)
	}
	if reasons := checkInputs(t, w); len(reasons) < 3 {
		t.Errorf("denies come from %d rules, want at least 3: %v", len(reasons), reasons)
	}
}
