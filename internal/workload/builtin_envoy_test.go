package workload

import "testing"

func TestEnvoyMatchesReferenceModel(t *testing.T) {
	w, err := buildEnvoy(DefaultSeed, 500)
	if err != nil {
		t.Fatal(err)
	}
	if reasons := checkAgainstOPA(t, w); len(reasons) < 3 {
		t.Errorf("denies come from %d rules, want at least 3: %v", len(reasons), reasons)
	}
}

func TestEnvoyCedarAgrees(t *testing.T) {
	w, err := buildEnvoy(DefaultSeed, 500)
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstCedar(t, w)
}

// A grant's prefix is a prefix, not a segment: "/people/" does not match "/people", and
// "/people" matches "/peoplex" in both languages.
func TestEnvoyCedarPrefixEdges(t *testing.T) {
	w, err := buildEnvoy(DefaultSeed, 1)
	if err != nil {
		t.Fatal(err)
	}
	e := prepareCedar(t, w)
	for _, tc := range []struct {
		user, method, path string
		allow              bool
	}{
		{"ben", "PUT", "/people/42", true},
		{"ben", "PUT", "/people", false},
		{"ann", "GET", "/peoplex", true},
		{"ann", "POST", "/people", false},
		{"dan", "DELETE", "/anything", true},
		{"zed", "GET", "/people", false},
		{"eve", "GET", "/people", false},
	} {
		model, _ := envoyDecide(&envoyTables, tc.user, tc.method, tc.path)
		allow, errs, err := cedarDecide(e, envoyCedarRequest(tc.user, tc.method, tc.path, "app.example"))
		if err != nil || len(errs) > 0 || allow != tc.allow || model != tc.allow {
			t.Errorf("%s %s %s: Cedar %v (errors %v, %v), model %v; want %v", tc.user, tc.method, tc.path, allow, errs, err, model, tc.allow)
		}
	}
}
