package kinds

import (
	"context"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/workload"
)

// Every target of a run takes the policy compiled once: after the Cedar targets (and every
// other registered engine's) have started, the run's store holds one loaded policy set per
// engine for the workload, and nothing is built again. (OPA's, whose targets share one compiled
// query: internal/engine/opa's TestPolicyIsCompiledOncePerWorkload.)
func TestPolicyIsCompiledOncePerWorkload(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	common := Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared()}
	names := []string{"cedar/inproc", "cedar/inproc"}
	// Every other engine of the registry with a version of the workload, in each of its
	// in-process modes (its served and ext_authz modes take the same prepared artefact, and
	// some refuse a workload whose inputs are not their protocol's).
	covered := map[string]bool{}
	for _, name := range names {
		covered[kinds[name].Engine] = true
	}
	for _, k := range Kinds() {
		if _, written := engine.WrittenFor(k.Engine, w); written && k.LoadsPolicy && k.Placement == InProcess && !covered[k.Engine] {
			names = append(names, k.Name)
		}
	}
	for _, name := range names {
		tg, err := New(name, common, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := tg.Start(context.Background(), w); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer tg.Stop(context.Background())
	}
	for _, key := range engine.Names() {
		if _, written := engine.WrittenFor(key, w); !written {
			continue // nothing of the workload to prepare for it
		}
		if _, err := common.Prepared.Of(key, w, func() (any, error) {
			t.Errorf("%s: built again after the targets started", key)
			return nil, nil
		}); err != nil {
			t.Errorf("%s: %v", key, err)
		}
	}
}
