package bench

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
	"github.com/authzbench/authzbench/internal/sut"
)

// Each run records the CPUs the kernel really allowed the generator and the server during its
// turns: with auto pinning, the server's apart from the generator's, and an in-process engine's
// turns, in between, back on every CPU.
func TestRunsRecordTheirAffinity(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an OPA server")
	}
	if _, err := sut.Affinity(0); err != nil {
		if runtime.GOOS == "linux" {
			t.Fatalf("sched_getaffinity: %v", err)
		}
		// Elsewhere nothing can be read, and nothing is claimed.
		doc := &result.Document{}
		s := &scenario.Scenario{Name: "aff", Source: "test", Repeat: 1, Workloads: []scenario.WorkloadRef{{Name: "nop"}},
			Targets: []scenario.TargetRef{{Name: "opa/inproc", Timeout: 5 * time.Second, Load: load.Spec{Workers: 1, Requests: 10}}}}
		if err := Run(context.Background(), s, Options{}, doc); err != nil || doc.Runs[0].Affinity != nil {
			t.Errorf("err %v, affinity %+v; want none recorded", err, doc.Runs[0].Affinity)
		}
		return
	}
	n := sut.MachineCPUs()
	if n < 2 {
		t.Skip("one CPU: nothing to pin apart")
	}
	procs := runtime.GOMAXPROCS(0)
	t.Cleanup(func() {
		if err := sut.PinProcess(sut.AllCPUs()); err != nil {
			t.Error(err)
		}
		runtime.GOMAXPROCS(procs)
	})
	pin := &Pinning{Load: []int{0}, SUT: []int{n - 1}}
	s := &scenario.Scenario{Name: "aff", Source: "test", Repeat: 2, Order: scenario.Interleaved,
		Workloads: []scenario.WorkloadRef{{Name: "rbac"}},
		Targets: []scenario.TargetRef{
			{Name: "opa/server", Timeout: 10 * time.Second, Load: load.Spec{Workers: 1, Requests: 50, MaxTime: 30 * time.Second}},
			{Name: "opa/inproc", Timeout: 10 * time.Second, Load: load.Spec{Workers: 1, Requests: 50, MaxTime: 30 * time.Second}}}}
	doc := &result.Document{}
	if err := Run(context.Background(), s, Options{AutoPin: pin}, doc); err != nil {
		t.Fatal(err)
	}
	all := sut.FormatCPUs(sut.AllCPUs())
	want := map[string]result.Affinity{
		"opa/server": {Generator: "0", SUT: sut.FormatCPUs([]int{n - 1})},
		"opa/inproc": {Generator: all},
	}
	for _, r := range doc.Runs {
		if r.Affinity == nil || *r.Affinity != want[r.Target] {
			t.Errorf("%s: affinity %+v, want %+v", r.Target, r.Affinity, want[r.Target])
		}
		if len(r.Repetitions) != 2 || r.Summary.Errors != 0 {
			t.Errorf("%s: %d repetitions, %d errors", r.Target, len(r.Repetitions), r.Summary.Errors)
		}
	}
}
