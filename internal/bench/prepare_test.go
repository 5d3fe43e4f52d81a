package bench

import (
	"context"
	"testing"

	"github.com/authzbench/authzbench/internal/scenario"
)

// A run takes the workloads validation built, and builds the rest once: checks before the run
// and the run itself get the same workload, with its policy compiled once.
func TestPrepareBuildsEachWorkloadOnce(t *testing.T) {
	s, err := scenario.FromFlags(scenario.AdHoc{Targets: []string{"opa/inproc"}, Workloads: []string{"rbac"}})
	if err != nil {
		t.Fatal(err)
	}
	s.SetFloor(true) // nop, added after validation: not built yet
	validated := s.Workloads[1].Built
	if validated == nil || s.Workloads[0].Built != nil {
		t.Fatalf("built by validation: %+v", s.Workloads)
	}
	first, err := Prepare(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Prepare(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 2 || first[1] != validated || again[0] != first[0] || again[1] != first[1] {
		t.Errorf("prepared %p %p then %p %p; want validation's rbac (%p) and one nop", first[0], first[1], again[0], again[1], validated)
	}
	for _, w := range first {
		if _, err := w.Prepared("opa", func() (any, error) {
			t.Errorf("%s: compiled again", w.Name)
			return nil, nil
		}); err != nil {
			t.Error(err)
		}
	}
}
