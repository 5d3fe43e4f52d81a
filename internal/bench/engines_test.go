package bench

import (
	"context"
	"errors"
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
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/workload"
)

// kindOf is the kind of a target the test names.
func kindOf(t *testing.T, name string) *kinds.Kind {
	t.Helper()
	k, err := kinds.LookupAny(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// setOptions sets target options on the scenario as the command line's flags do.
func setOptions(t *testing.T, s *scenario.Scenario, values map[string]any) {
	t.Helper()
	if err := s.SetOptions(values); err != nil {
		t.Fatal(err)
	}
}

// Every built-in workload gives the expected decision through every OPA deployment mode: the
// same files, loaded the same way, must decide the same in-process, per process and served.
func TestBuiltinWorkloadsVerifyInEveryMode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts OPA processes")
	}
	for _, tc := range []struct {
		target   string
		requests int64
	}{{"opa/inproc", 2000}, {"opa/server", 2000}, {"opa/cli", 12}, {"cedar/inproc", 2000}, {"cedar/server", 2000}} {
		t.Run(strings.ReplaceAll(tc.target, "/", "_"), func(t *testing.T) {
			s := &scenario.Scenario{Name: "all", Source: "test", Repeat: 1}
			names := workload.NamesWhere(engine.For(kindOf(t, tc.target).Engine).Written)
			if len(names) == 0 {
				t.Fatalf("no built-in workload is written for %s", tc.target)
			}
			for _, name := range names {
				s.Workloads = append(s.Workloads, scenario.WorkloadRef{Name: name})
			}
			s.Targets = []scenario.TargetRef{{Name: tc.target, Timeout: 30 * time.Second,
				Load: load.Spec{Workers: 2, Requests: tc.requests, MaxTime: 2 * time.Minute}}}
			doc := &result.Document{}
			if err := Run(context.Background(), s, Options{}, doc); err != nil {
				t.Fatal(err)
			}
			for _, r := range doc.Runs {
				launched := kindOf(t, r.Target).Placement == kinds.LaunchedServer
				if r.SUT.Placement != kindOf(t, r.Target).Placement {
					t.Errorf("%s on %s: placement %q recorded, want %q", r.Workload, r.Target, r.SUT.Placement, kindOf(t, r.Target).Placement)
				}
				if launched != (r.SUTResources != nil) {
					t.Errorf("%s on %s: server resources %+v; want them for the server only", r.Workload, r.Target, r.SUTResources)
				}
				if r.Summary.OK != uint64(tc.requests) || r.Summary.Errors != 0 {
					t.Errorf("%s on %s: ok %d errors %d %v, want %d ok", r.Workload, r.Target,
						r.Summary.OK, r.Summary.Errors, r.Summary.ErrorClasses, tc.requests)
				}
			}
		})
	}
}

// A server that exits during the run aborts it with the server's last words, and what was
// measured before is kept, marked partial.
func TestServerDyingMidRunIsReported(t *testing.T) {
	if testing.Short() {
		t.Skip("starts OPA processes")
	}
	s := &scenario.Scenario{Name: "die", Source: "test", Repeat: 1,
		Workloads: []scenario.WorkloadRef{{Name: "rbac"}},
		Targets: []scenario.TargetRef{{Name: "opa/server", Timeout: 2 * time.Second,
			Load: load.Spec{Workers: 2, Duration: 20 * time.Second}}}}
	killed := make(chan int, 1)
	opts := Options{}
	var once bool
	opts.Progress = func(st Status) {
		if !st.Load.Warmup && st.Load.OK > 100 && !once {
			once = true
			killed <- 1
		}
	}
	doc := &result.Document{}
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), s, opts, doc) }()
	select {
	case <-killed:
	case <-time.After(30 * time.Second):
		t.Fatal("no progress")
	}
	// The server is the only child process in our process group's children: find it by the
	// port in its command line via /proc would be fragile; instead kill every opa server child.
	killOPAChildren(t)
	var err error
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("run did not stop after the server died")
	}
	var stopped *StoppedError
	if !errors.As(err, &stopped) || !strings.Contains(err.Error(), "opa server") {
		t.Fatalf("err = %v, want a StoppedError naming the opa server", err)
	}
	if len(doc.Runs) != 1 || !doc.Runs[0].Partial || doc.Runs[0].Summary.OK == 0 {
		t.Fatalf("want one partial run with the requests measured before the exit, got %+v", doc.Runs)
	}
}

// killOPAChildren kills this process's child processes running "opa run".
func killOPAChildren(t *testing.T) {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	me := os.Getpid()
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// stat: pid (comm) state ppid ...
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 2 || fields[1] != itoa(me) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(cmdline), "run\x00--server") {
			p, _ := os.FindProcess(atoi(e.Name()))
			p.Kill()
			return
		}
	}
	t.Fatal("no opa server child found")
}

func TestBadPolicyIsReportedWithFileAndLine(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "broken.rego")
	os.WriteFile(policy, []byte("package broken\n\nallow if {\n  input.x ==\n}\n"), 0o644)
	inputs := filepath.Join(dir, "in.jsonl")
	os.WriteFile(inputs, []byte(`{"input": {"x": 1}, "expect": true}`+"\n"), 0o644)
	s := &scenario.Scenario{Name: "bad", Source: "test", Repeat: 1,
		Workloads: []scenario.WorkloadRef{{Name: "broken", User: &workload.UserSpec{Name: "broken",
			Policies: []string{policy}, Inputs: inputs, Query: "data.broken.allow"}}},
		Targets: []scenario.TargetRef{{Name: "opa/server", Timeout: time.Second, Load: load.Spec{Workers: 1, Requests: 1}}}}
	doc := &result.Document{}
	err := Run(context.Background(), s, Options{}, doc)
	if err == nil || !strings.Contains(err.Error(), "broken.rego:") {
		t.Fatalf("err = %v, want the file and line of the error", err)
	}
	if len(doc.Runs) != 0 {
		t.Errorf("nothing should have run, got %d runs", len(doc.Runs))
	}
}

// --opa-bin runs another opa executable for the cli and server modes; here a wrapper script
// around this test binary stands in for it.
func TestExternalOPABinary(t *testing.T) {
	if testing.Short() {
		t.Skip("starts OPA processes")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(t.TempDir(), "opa")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nexec '"+self+"' opa \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// As --opa-bin is checked: the wrapper answers `opa version` as OPA does.
	if err := kinds.CheckOption("opa_bin", "--opa-bin", wrapper); err != nil {
		t.Fatal(err)
	}
	s := &scenario.Scenario{Name: "external", Source: "test", Repeat: 1,
		Workloads: []scenario.WorkloadRef{{Name: "rbac"}},
		Targets: []scenario.TargetRef{
			{Name: "opa/server", Timeout: 10 * time.Second, Load: load.Spec{Workers: 2, Requests: 100}},
			{Name: "opa/cli", Timeout: 10 * time.Second, Load: load.Spec{Workers: 1, Requests: 3}},
		}}
	if err := s.SetOptions(map[string]any{"opa_bin": wrapper}); err != nil {
		t.Fatal(err)
	}
	doc := &result.Document{}
	if err := Run(context.Background(), s, Options{}, doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Runs {
		if r.SUT.Version != "1.22.2" || r.SUT.Command[0] != wrapper || len(r.SUT.Command) < 5 || r.Summary.Errors != 0 {
			t.Errorf("%s: version %q, command %v, errors %d", r.Target, r.SUT.Version, r.SUT.Command, r.Summary.Errors)
		}
	}
	if err := kinds.CheckOption("opa_bin", "--opa-bin", filepath.Join(t.TempDir(), "missing-opa")); err == nil {
		t.Error("a missing --opa-bin was accepted")
	}
}

// On a small machine, scenarios pin the generator and a server apart, and leave an in-process
// engine every CPU; each run says what it did.
func TestAutoPinning(t *testing.T) {
	if testing.Short() {
		t.Skip("starts OPA processes")
	}
	plan := AutoPinning()
	if plan == nil {
		t.Skip("auto pinning applies to machines of 2 to 4 CPUs")
	}
	defer sut.PinProcess(sut.AllCPUs()) // leave the test process on every CPU
	s := &scenario.Scenario{Name: "pin", Source: "test", Repeat: 1,
		Workloads: []scenario.WorkloadRef{{Name: "nop"}},
		Targets: []scenario.TargetRef{
			{Name: "opa/server", Timeout: 5 * time.Second, Load: load.Spec{Workers: 2, Requests: 200}},
			{Name: "opa/inproc", Timeout: 5 * time.Second, Load: load.Spec{Workers: 2, Requests: 200}},
		}}
	doc := &result.Document{}
	if err := Run(context.Background(), s, Options{AutoPin: plan}, doc); err != nil {
		t.Fatal(err)
	}
	server, inproc := doc.Runs[0], doc.Runs[1]
	if !strings.Contains(server.Pinning, "server on CPUs 1") || server.Load.GeneratorProcs != 1 || server.Summary.OK != 200 {
		t.Errorf("server run: pinning %q, procs %d, ok %d", server.Pinning, server.Load.GeneratorProcs, server.Summary.OK)
	}
	if !strings.HasPrefix(inproc.Pinning, "none") || inproc.Load.GeneratorProcs != sut.MachineCPUs() {
		t.Errorf("in-process run: pinning %q, procs %d", inproc.Pinning, inproc.Load.GeneratorProcs)
	}
}
