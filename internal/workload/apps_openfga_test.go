package workload_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"

	"github.com/authzbench/authzbench/internal/engine/openfga"
	"github.com/authzbench/authzbench/internal/workload"
)

// The apps' tests ask OpenFGA through this checker: OpenFGA's package imports workload, so only
// an external test file may import it.
func init() { workload.CheckAgainstOpenFGA = checkAgainstOpenFGA }

// checkAgainstOpenFGA writes an app's OpenFGA version into OpenFGA's server in this process,
// as the openfga engine does, and fails the test for every check whose decision differs from
// the one the reference model expects.
func checkAgainstOpenFGA(t *testing.T, name string, f *workload.AppFGA) {
	t.Helper()
	if len(f.Checks) == 0 {
		t.Fatalf("%s: no OpenFGA checks", name)
	}
	path := filepath.Join(t.TempDir(), f.Model.Name)
	if err := os.WriteFile(path, f.Model.Content, 0o644); err != nil {
		t.Fatal(err)
	}
	model, err := openfga.LoadModel(path)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	fx := &openfga.Fixture{Source: name, Model: model, ModelOrigin: f.Model.Name}
	tuples := make([]openfga.Tuple, len(f.Tuples))
	for i, tu := range f.Tuples {
		tuples[i] = openfga.Tuple{Key: &openfgav1.TupleKey{User: tu.User, Relation: tu.Relation, Object: tu.Object}, Origin: name}
	}
	fx.TupleSets = []openfga.TupleSet{{Name: "store", Tuples: tuples}}
	ctx := context.Background()
	e, err := openfga.Start(ctx, fx)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer e.Close()
	const maxReported = 20
	wrong := 0
	for i, c := range f.Checks {
		req, err := e.Prepare(openfga.Assertion{User: c.User, Relation: c.Relation, Object: c.Object, Origin: name})
		if err != nil {
			t.Fatal(err)
		}
		allow, err := e.Check(ctx, req)
		if err == nil && allow == (c.Expect == workload.ExpectAllow) {
			continue
		}
		wrong++
		if wrong <= maxReported {
			t.Errorf("%s check %d: %s %s %s: OpenFGA allow %v (error %v); the model expects %s (%s)",
				name, i, c.User, c.Relation, c.Object, allow, err, c.Expect, c.Reason)
		}
	}
	if wrong > maxReported {
		t.Errorf("%s: %d of %d checks wrong, only the first %d shown", name, wrong, len(f.Checks), maxReported)
	}
}
