package openfga

import (
	"context"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/workload"
)

// Every built-in workload with an OpenFGA version decides every input as its Go reference
// model says, in OpenFGA's own server in process: the model and tuples are the same rules as
// the Rego and the Cedar, not a table of answers.
func TestBuiltinsDecideAsTheirReferenceModel(t *testing.T) {
	names := workload.NamesWhere(Registered.Written)
	for _, want := range []string{"nop", "rbac"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Fatalf("built-ins with an OpenFGA version: %v; want %s among them", names, want)
		}
	}
	for _, name := range append(names, "rbac-data-50") {
		t.Run(name, func(t *testing.T) {
			w, err := workload.Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			l, err := Load(context.Background(), nil, w)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Engine.Close()
			allow, deny := 0, 0
			for i, req := range l.Requests {
				got, err := l.Engine.Check(context.Background(), req)
				if err != nil {
					t.Fatalf("input %d: %v", i+1, err)
				}
				if want := w.Inputs[i].Expect == workload.ExpectAllow; got != want {
					t.Fatalf("input %d %s: allowed %v, reference model %s (%s)", i+1, Registered.Request(w.Inputs[i]), got, w.Inputs[i].Expect, w.Inputs[i].Reason)
				}
				if got {
					allow++
				} else {
					deny++
				}
			}
			if name != "nop" && (allow == 0 || deny == 0) {
				t.Errorf("%d allowed, %d denied: want both", allow, deny)
			}
		})
	}
}

// A workload without an OpenFGA version is refused with the ones that have one.
func TestNoOpenFGAVersionNamesTheBuiltins(t *testing.T) {
	w := &workload.Workload{Name: "mine", Policies: []workload.File{{Name: "p.rego"}}}
	_, err := engine.Prepare(context.Background(), nil, Registered, w)
	if err == nil || !strings.Contains(err.Error(), "workload mine has no OpenFGA version") || !strings.Contains(err.Error(), "rbac") {
		t.Errorf("got %v", err)
	}
}
