package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
)

// A plan takes the workloads validation built and builds the rest, with each engine of its
// targets preparing every workload once; it writes nothing back into the scenario. A second
// plan given the first one's store (a capacity search's next probe) compiles nothing again.
func TestPlanPreparesOnceAndWritesNothingBack(t *testing.T) {
	s, err := scenario.FromFlags(scenario.AdHoc{Targets: []string{"opa/inproc", "cedar/inproc"}, Workloads: []string{"rbac"}})
	if err != nil {
		t.Fatal(err)
	}
	s.SetFloor(true) // nop, added after validation: not built yet
	validated := s.Workloads[1].Built
	if validated == nil || s.Workloads[0].Built != nil {
		t.Fatalf("built by validation: %+v", s.Workloads)
	}
	p, err := NewPlan(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Workloads) != 2 || p.Workloads[1] != validated || p.Workloads[0].Name != "nop" {
		t.Fatalf("planned %v; want a nop built and validation's rbac (%p)", p.Workloads, validated)
	}
	if s.Workloads[0].Built != nil {
		t.Error("the plan wrote the nop it built back into the scenario")
	}
	for _, w := range p.Workloads {
		// The engines of the run's targets: OpenFGA, which rbac is written for too, has no
		// target here, and nothing need be prepared for it.
		for _, target := range s.Targets {
			e := engine.For(target.Kind().Engine)
			if !e.Written(w) {
				continue
			}
			if _, err := p.Prepared.Of(e.Name(), w, func() (any, error) {
				t.Errorf("%s: %s prepared again after the plan", w.Name, e.Name())
				return nil, nil
			}); err != nil {
				t.Error(err)
			}
		}
	}
	again, err := NewPlan(context.Background(), s, Options{Common: kinds.Common{Prepared: p.Prepared}})
	if err != nil {
		t.Fatal(err)
	}
	if again.Prepared != p.Prepared || again.Workloads[1] != validated {
		t.Errorf("second plan: store %p workloads %v; want the first's store %p and validation's rbac", again.Prepared, again.Workloads, p.Prepared)
	}
}

// A plan finds what is wrong before anything starts: settings that cannot work, a policy that
// does not compile. Run then measures nothing and starts nothing.
func TestPlanRefusesBeforeAnyLoad(t *testing.T) {
	cedarServer, err := kinds.Lookup("cedar/server")
	if err != nil {
		t.Fatal(err)
	}
	mtlsAuthz, err := cedarServer.Configure(map[string]any{"mtls_authz": true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	policy := filepath.Join(dir, "broken.rego")
	if err := os.WriteFile(policy, []byte("package broken\n\nallow if no_such_function(input.id)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := userWorkload(t, 4)
	spec.Policies = []string{policy}
	for _, tc := range []struct {
		name string
		s    *scenario.Scenario
		want string
	}{
		{"settings", &scenario.Scenario{Name: "x", Source: "test", Repeat: 1, Workloads: []scenario.WorkloadRef{{Name: "rbac"}},
			Targets: []scenario.TargetRef{{Name: "cedar/server", Config: mtlsAuthz, Timeout: time.Second, Load: load.Spec{Workers: 1, Requests: 1}}}},
			"target cedar/server: mtls_authz is not supported"},
		{"policy", &scenario.Scenario{Name: "x", Source: "test", Repeat: 1, Workloads: []scenario.WorkloadRef{{Name: spec.Name, User: spec}},
			Targets: []scenario.TargetRef{{Name: "opa/inproc", Timeout: time.Second, Load: load.Spec{Workers: 1, Requests: 1}}}},
			"broken.rego:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := &result.Document{}
			err := Run(context.Background(), tc.s, Options{}, doc)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one saying %q", err, tc.want)
			}
			if len(doc.Runs) != 0 {
				t.Errorf("%d runs recorded, want none: nothing may start", len(doc.Runs))
			}
		})
	}
}

// OPA's compiled query and data, which a served OPA reads only as the check before it starts, is
// let go before the load where no target of the run decides with it, and kept where one does
// (opa/inproc); the served target's check, asked again, does not compile it again.
func TestPlanDropsWhatOnlyChecksRead(t *testing.T) {
	for _, tc := range []struct {
		targets []string
		kept    bool
	}{
		{[]string{"opa/server"}, false},
		{[]string{"opa/server", "opa/sdk"}, false},
		{[]string{"opa/server", "opa/inproc"}, true},
	} {
		s, err := scenario.FromFlags(scenario.AdHoc{Targets: tc.targets, Workloads: []string{"rbac"}})
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlan(context.Background(), s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		w := p.Workloads[0]
		if !p.Prepared.Holds("opa", w) {
			t.Fatalf("%v: the plan compiled nothing", tc.targets)
		}
		p.DropChecked()
		if got := p.Prepared.Holds("opa", w); got != tc.kept {
			t.Errorf("%v: compiled query held after DropChecked %v, want %v", tc.targets, got, tc.kept)
		}
		err = engine.Check(context.Background(), p.Prepared, engine.For("opa"), w)
		if err != nil || p.Prepared.Holds("opa", w) != tc.kept {
			t.Errorf("%v: the check after DropChecked: err %v, held %v; want nil, answered without compiling", tc.targets, err, p.Prepared.Holds("opa", w))
		}
	}
}
