package workload

import (
	"strconv"
	"strings"
	"testing"
)

// From the smallest directory to a large one, the inputs keep rbac's variety of reasons (OPA's
// version is checked against the model in internal/engine/opa).
func TestRBACDataMatchesReferenceModel(t *testing.T) {
	sizes := []int{MinDataUsers, 1000, 20_000}
	if testing.Short() {
		sizes = sizes[:2]
	}
	for _, n := range sizes {
		name := "rbac-data-" + itoa(n)
		t.Run(name, func(t *testing.T) {
			w, err := buildRBACData(name, DefaultSeed, 500)
			if err != nil {
				t.Fatal(err)
			}
			if w.Name != name || !strings.Contains(w.Description, itoa(n)+" users") {
				t.Errorf("workload identity: name %q, description %q", w.Name, w.Description)
			}
			if s := w.Scale; s == nil || s.N != n || s.Param != "users" {
				t.Errorf("scale %+v", s)
			}
			if got := len(w.Model.(*RBACData).Users); got != n {
				t.Errorf("the data holds %d users; want %d", got, n)
			}
			reasons := checkInputs(t, w)
			wants := []string{"deny: unknown user", "deny: unknown resource", "deny: no permission"}
			if n >= 1000 {
				wants = append(wants, "deny: suspended") // one user in 20; ten users may have none
			}
			for _, want := range wants {
				if reasons[want] == 0 {
					t.Errorf("no input is denied for %q; deny reasons %v", want, reasons)
				}
			}
			owner := 0
			for _, in := range w.Inputs {
				if in.Reason == "allow: owner" {
					owner++
				}
			}
			if owner < len(w.Inputs)/10 {
				t.Errorf("%d of %d inputs allowed as owner; the mix must not thin out as N grows", owner, len(w.Inputs))
			}
		})
	}
}

func TestRBACDataNames(t *testing.T) {
	bad := map[string]string{
		"rbac-data-9":        "N is 9; rbac-data-<N> takes N from 10 to 10000000",
		"rbac-data-10000001": "N is 10000001",
		"rbac-data-":         "want rbac-data-<N>, N a whole number from 10 to 10000000",
		"rbac-data-1k":       "N a whole number",
		"rbac-data-0100":     "without leading zeros",
	}
	for name, want := range bad {
		if _, err := Builtin(name); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `"`+name+`"`) {
			t.Errorf("%s: error %v; want one naming the workload and saying %q", name, err, want)
		}
	}
	a, _ := buildRBACData("rbac-data-50", DefaultSeed, 200)
	b, _ := buildRBACData("rbac-data-50", DefaultSeed, 200)
	assertSameWorkload(t, a, b)
}

func itoa(n int) string { return strconv.Itoa(n) }
