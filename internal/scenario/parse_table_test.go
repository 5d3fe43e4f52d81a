package scenario

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/workload"
)

// targetRef builds the TargetRef a test expects.
func targetRef(name string, workers int, duration, warmup, timeout time.Duration) TargetRef {
	return TargetRef{Name: name, Timeout: timeout,
		Load: load.Spec{Workers: workers, Connections: DefaultConnections, Duration: duration, Warmup: warmup}}
}

// plan is the part of a Scenario these tests pin down exactly: what runs, where, under which
// load. Fields added later (and tested by whoever adds them) do not break these tables.
type plan struct {
	Name, Description, Source string
	Repeat                    int
	Floor                     bool
	Workloads                 []WorkloadRef
	Targets                   []TargetRef
}

func planOf(s *Scenario) plan {
	// What a workload was built into is checked apart (TestValidationBuildsEachWorkloadOnce).
	var workloads []WorkloadRef
	for _, w := range s.Workloads {
		w.Built = nil
		workloads = append(workloads, w)
	}
	return plan{Name: s.Name, Description: s.Description, Source: s.Source, Repeat: s.Repeat, Floor: s.Floor,
		Workloads: workloads, Targets: s.Targets}
}

func TestParseValidTable(t *testing.T) {
	defaults := func(name string) TargetRef {
		return targetRef(name, DefaultWorkers, DefaultDuration, DefaultWarmup, DefaultTimeout)
	}
	nop, rbac, api := WorkloadRef{Name: "nop"}, WorkloadRef{Name: "rbac"}, WorkloadRef{Name: "api"}
	for _, tc := range []struct {
		name string
		yaml string
		want Scenario
	}{
		{
			name: "string forms take the defaults",
			yaml: "workloads: [rbac]\ntargets: [opa/server]\n",
			want: Scenario{Name: "s", Source: "s.yaml", Repeat: 1, Floor: true,
				Workloads: []WorkloadRef{nop, rbac}, Targets: []TargetRef{defaults("opa/server")}},
		},
		{
			name: "object forms",
			yaml: "workloads:\n  - name: api\n  - {name: rbac}\ntargets:\n  - target: opa/inproc\n  - {target: opa/cli}\n",
			want: Scenario{Name: "s", Source: "s.yaml", Repeat: 1, Floor: true,
				Workloads: []WorkloadRef{nop, api, rbac}, Targets: []TargetRef{defaults("opa/inproc"), defaults("opa/cli")}},
		},
		{
			name: "mixed forms keep their order",
			yaml: "name: mixed\ndescription: both forms\nrepeat: 2\nfloor: false\nworkloads: [api, {name: nop}, rbac]\n" +
				"targets: [opa/cli, {target: opa/server}, opa/inproc]\n",
			want: Scenario{Name: "mixed", Description: "both forms", Source: "s.yaml", Repeat: 2,
				Workloads: []WorkloadRef{api, nop, rbac},
				Targets:   []TargetRef{defaults("opa/cli"), defaults("opa/server"), defaults("opa/inproc")}},
		},
		{
			name: "top-level load overrides the defaults",
			yaml: "load: {workers: 2, duration: 3s, warmup: 0s, timeout: 750ms}\nworkloads: [nop]\ntargets: [opa/server, {target: opa/cli}]\n",
			want: Scenario{Name: "s", Source: "s.yaml", Repeat: 1, Floor: true, Workloads: []WorkloadRef{nop},
				Targets: []TargetRef{
					targetRef("opa/server", 2, 3*time.Second, 0, 750*time.Millisecond),
					targetRef("opa/cli", 2, 3*time.Second, 0, 750*time.Millisecond),
				}},
		},
		{
			name: "a target's load overrides the top-level load, field by field",
			yaml: `
load:
  workers: 2
  duration: 3s
  warmup: 1s
workloads: [nop]
targets:
  - opa/cli
  - target: opa/server
    load:
      workers: 16
      timeout: 2s
  - target: opa/inproc
    load: {warmup: 0s, requests: 5000}
`,
			want: Scenario{Name: "s", Source: "s.yaml", Repeat: 1, Floor: true, Workloads: []WorkloadRef{nop},
				Targets: []TargetRef{
					targetRef("opa/cli", 2, 3*time.Second, time.Second, DefaultTimeout),
					targetRef("opa/server", 16, 3*time.Second, time.Second, 2*time.Second),
					{Name: "opa/inproc", Timeout: DefaultTimeout, Load: load.Spec{Workers: 2, Connections: DefaultConnections,
						Duration: 3 * time.Second, Requests: 5000}},
				}},
		},
		{
			name: "floor already listed, load at both levels",
			yaml: `
name: mix
repeat: 3
load: {workers: 2, duration: 5s, warmup: 500ms}
workloads:
  - rbac
  - name: nop
targets:
  - opa/cli
  - target: opa/server
    load: {workers: 8, requests: 1000, timeout: 1s}
`,
			want: Scenario{Name: "mix", Source: "s.yaml", Repeat: 3, Floor: true, Workloads: []WorkloadRef{rbac, nop},
				Targets: []TargetRef{
					targetRef("opa/cli", 2, 5*time.Second, 500*time.Millisecond, DefaultTimeout),
					{Name: "opa/server", Timeout: time.Second, Load: load.Spec{Workers: 8, Connections: DefaultConnections,
						Duration: 5 * time.Second, Warmup: 500 * time.Millisecond, Requests: 1000}},
				}},
		},
		{
			name: "open loop",
			yaml: "load: {rate: 500, connections: 8}\nworkloads: [nop]\ntargets: [opa/server]\n",
			want: Scenario{Name: "s", Source: "s.yaml", Repeat: 1, Floor: true, Workloads: []WorkloadRef{nop},
				Targets: []TargetRef{{Name: "opa/server", Timeout: DefaultTimeout, Load: load.Spec{
					Rate: 500, Connections: 8, Duration: DefaultDuration, Warmup: DefaultWarmup}}}},
		},
		{
			// A user workload's files are taken from the scenario's directory.
			name: "user workload",
			yaml: "workloads:\n  - name: mine\n    policy: [user/authz.rego]\n    inputs: user/inputs.jsonl\ntargets: [opa/inproc]\n",
			want: Scenario{Name: "s", Source: "s.yaml", Repeat: 1, Floor: true,
				Workloads: []WorkloadRef{nop, {Name: "mine", User: &workload.UserSpec{Name: "mine",
					Policies: []string{filepath.Join("testdata", "user", "authz.rego")},
					Inputs:   filepath.Join("testdata", "user", "inputs.jsonl")}}},
				Targets: []TargetRef{defaults("opa/inproc")}},
		},
		{
			// How to read the policy travels with the workload; without a name it is named
			// after its policy file.
			name: "user workload in Rego v0, without a default",
			yaml: "workloads:\n  - policy: [../../engine/opa/testdata/rego-apps/v0/authz.rego]\n    inputs: ../../engine/opa/testdata/rego-apps/v0/inputs.jsonl\n" +
				"    v0_compatible: true\n    undefined_as: deny\ntargets: [opa/inproc]\n",
			want: Scenario{Name: "s", Source: "s.yaml", Repeat: 1, Floor: true,
				Workloads: []WorkloadRef{nop, {Name: "authz", User: &workload.UserSpec{Name: "authz",
					Policies:     []string{filepath.Join("..", "engine", "opa", "testdata", "rego-apps", "v0", "authz.rego")},
					Inputs:       filepath.Join("..", "engine", "opa", "testdata", "rego-apps", "v0", "inputs.jsonl"),
					V0Compatible: true, UndefinedAs: "deny"}}},
				Targets: []TargetRef{defaults("opa/inproc")}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse("s.yaml", []byte(tc.yaml), "testdata")
			if err != nil {
				t.Fatal(err)
			}
			if g, w := planOf(got), planOf(&tc.want); !reflect.DeepEqual(g, w) {
				t.Errorf("parsed\n %+v\nwant\n %+v", g, w)
			}
		})
	}
}

// TestParseUserWorkloadQuery: the query of a user workload is derived when the scenario gives
// none.
func TestParseUserWorkloadQuery(t *testing.T) {
	s, err := Load(filepath.Join("testdata", "user.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Workloads) != 2 || s.Workloads[1].User == nil {
		t.Fatalf("workloads %+v, want the floor and the user workload", s.Workloads)
	}
	w, err := workload.FromFiles(*s.Workloads[1].User)
	if err != nil {
		t.Fatal(err)
	}
	if w.Query != "data.scenariotest.authz.allow" || len(w.Inputs) != 2 || w.Name != "mine" {
		t.Errorf("user workload: name %q, query %q, %d inputs; want mine, data.scenariotest.authz.allow, 2", w.Name, w.Query, len(w.Inputs))
	}
	if s.Name != "user" || s.Source != filepath.Join("testdata", "user.yaml") {
		t.Errorf("name %q, source %q", s.Name, s.Source)
	}
}

func TestParseErrorsNameSourceAndLine(t *testing.T) {
	knownTargets := strings.Join(kinds.Names(), ", ")
	knownWorkloads := strings.Join(workload.Names(), ", ")
	for _, tc := range []struct {
		name string
		yaml string
		// want is the whole error text, one line per error.
		want string
	}{
		{"unknown workload", "workloads:\n  - rbac\n  - rbca\ntargets: [opa/server]\n",
			`s.yaml:3: unknown workload "rbca"; known: ` + knownWorkloads},
		{"unknown workload in flow form", "workloads: [rbac, rbca]\ntargets: [opa/server]\n",
			`s.yaml:1: unknown workload "rbca"; known: ` + knownWorkloads},
		{"unknown workload in object form", "workloads:\n  - name: rbca\ntargets: [opa/server]\n",
			`s.yaml:2: unknown workload "rbca"; known: ` + knownWorkloads},
		{"unknown target", "workloads: [rbac]\ntargets:\n  - opa/server\n  - opa/grpc\n",
			`s.yaml:4: unknown target "opa/grpc"; known: ` + knownTargets},
		{"unknown target in object form", "workloads: [rbac]\ntargets:\n  - target: opa/grpc\n    load: {workers: 2}\n",
			`s.yaml:3: unknown target "opa/grpc"; known: ` + knownTargets},
		{"workers 0 at top level", "workloads: [rbac]\nload:\n  workers: 0\ntargets: [opa/server]\n",
			"s.yaml:3: workers must be at least 1, got 0"},
		{"workers 0 in a target", "workloads: [rbac]\ntargets:\n  - target: opa/server\n    load:\n      workers: 0\n",
			"s.yaml:5: workers must be at least 1, got 0"},
		{"negative warmup at top level", "load: {warmup: -1s}\nworkloads: [rbac]\ntargets: [opa/server]\n",
			"s.yaml:1: warmup must not be negative, got -1s"},
		{"negative warmup in a target", "workloads: [rbac]\ntargets:\n  - target: opa/server\n    load:\n      warmup: -500ms\n",
			"s.yaml:5: warmup must not be negative, got -500ms"},
		// One load names one model (load.Spec's rule): both in one place are refused, on either line.
		{"workers and rate in one load", "load: {workers: 1, rate: 100}\nworkloads: [rbac]\ntargets: [opa/server]\n",
			"s.yaml:1: rate and workers given together: workers sets the closed loop, rate the open loop (whose requests in flight connections bounds); give one or the other"},
		{"workers and rate on two lines", "workloads: [rbac]\ntargets:\n  - target: opa/server\n    load:\n      rate: 100\n      workers: 2\n",
			"s.yaml:5: rate and workers (line 6) given together: workers sets the closed loop, rate the open loop (whose requests in flight connections bounds); give one or the other"},
		{"workers sweep and rate", "load: {rate: 100, workers_sweep: [1, 2]}\nworkloads: [rbac]\ntargets: [opa/server]\n",
			"s.yaml:1: rate and workers given together: workers sets the closed loop, rate the open loop (whose requests in flight connections bounds); give one or the other"},
		{"rate above the ceiling", "load: {rate: 1e12}\nworkloads: [rbac]\ntargets: [opa/server]\n",
			"s.yaml:1: rate 1e+12/s is above the pacer's ceiling of 1e+09/s (one send a nanosecond, the resolution of its clock)"},
		{"rates above the ceiling", "workloads: [rbac]\ntargets:\n  - target: opa/server\n    load:\n      rates: [100, 2e9]\n",
			"s.yaml:5: rates: 2e+09/s is above the pacer's ceiling of 1e+09/s (one send a nanosecond, the resolution of its clock)"},
		{"repeat 0", "repeat: 0\nworkloads: [rbac]\ntargets: [opa/server]\n",
			"s.yaml:1: repeat must be at least 1, got 0"},
		{"repeat negative", "workloads: [rbac]\nrepeat: -3\ntargets: [opa/server]\n",
			"s.yaml:2: repeat must be at least 1, got -3"},
		{"zero timeout", "workloads: [rbac]\ntargets:\n  - target: opa/cli\n    load: {timeout: 0s}\n",
			"s.yaml:4: timeout must be positive, got 0s"},
		{"no workloads", "targets: [opa/server]\n", "s.yaml: no workloads: list at least one (known: " + knownWorkloads + ")"},
		{"no targets", "workloads: [rbac]\n", "s.yaml: no targets: list at least one (known: " + knownTargets + ")"},
		{"empty file", "", "s.yaml: empty scenario"},
		{"only a comment", "# nothing here\n", "s.yaml: empty scenario"},
		// YAML syntax errors: the line named is the one to fix, from the parser and the scanner.
		{"unclosed flow sequence", "workloads: [rbac]\ntargets: [opa/server\nrepeat: 2\n",
			"s.yaml:2: did not find expected ',' or ']'"},
		{"unclosed flow mapping", "workloads: [rbac]\ntargets: [opa/server]\nload: {workers: 2\nrepeat: 2\n",
			"s.yaml:3: did not find expected ',' or '}'"},
		{"key out of its indentation", "workloads:\n  - rbac\n targets: [opa/server]\n", "s.yaml:3: did not find expected key"},
		{"tab indentation", "workloads: [rbac]\n\ttargets: [opa/server]\n", "s.yaml:2: found character that cannot start any token"},
		{"several errors in flow form", "workloads: [rbca]\ntargets: [opa/grpc]\n",
			`s.yaml:1: unknown workload "rbca"; known: ` + knownWorkloads + "\n" +
				`s.yaml:2: unknown target "opa/grpc"; known: ` + knownTargets},
		{
			name: "several errors at once",
			yaml: "repeat: 0\nload:\n  workers: 0\nworkloads: [rbca, nop]\ntargets:\n  - opa/grpc\n  - opa/server\n",
			want: "s.yaml:1: repeat must be at least 1, got 0\n" +
				`s.yaml:4: unknown workload "rbca"; known: ` + knownWorkloads + "\n" +
				`s.yaml:6: unknown target "opa/grpc"; known: ` + knownTargets + "\n" +
				"s.yaml:3: workers must be at least 1, got 0",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("s.yaml", []byte(tc.yaml), "")
			if err == nil {
				t.Fatalf("accepted: %+v", s)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n%s\nwant\n%s", err, tc.want)
			}
		})
	}
}

// TestParseRejectsUnknownFields: a misspelt key is an error naming it and its line, in the
// "s.yaml:N: ..." form of every other scenario error, never silently ignored (a typo in
// "workers" would otherwise run with the default).
func TestParseRejectsUnknownFields(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       string // the start of the error
	}{
		{"top level", "workloads: [rbac]\ntargets: [opa/server]\nworkres: 8\n", `s.yaml:3: unknown field "workres"`},
		{"top level, a known key misspelt", "workload: [rbac]\ntargets: [opa/server]\n", `s.yaml:1: unknown field "workload"`},
		{"top-level load", "load:\n  workers: 2\n  duratoin: 5s\nworkloads: [rbac]\ntargets: [opa/server]\n", `s.yaml:3: unknown field "duratoin"`},
		{"inside a target's load", "workloads: [rbac]\ntargets:\n  - target: opa/server\n    load:\n      wrokers: 2\n", `s.yaml:5: unknown field "wrokers"`},
		{"inside a target's load in flow form", "workloads: [rbac]\ntargets:\n  - target: opa/server\n    load: {wrokers: 2}\n", `s.yaml:4: unknown field "wrokers"`},
		{"inside a target", "workloads: [rbac]\ntargets:\n  - target: opa/server\n    lod: {workers: 2}\n", `s.yaml:4: unknown field "lod"`},
		{"inside a workload", "workloads:\n  - name: rbac\n    polcy: [x.rego]\ntargets: [opa/server]\n", `s.yaml:3: unknown field "polcy"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("s.yaml", []byte(tc.yaml), "")
			if err == nil {
				t.Fatalf("unknown field ignored: %+v", s)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %q, want it to start %q", err, tc.want)
			}
		})
	}
}

// TestParseRejectsNonFiniteRate: a rate of .inf or .nan cannot be scheduled.
func TestParseRejectsNonFiniteRate(t *testing.T) {
	for _, rate := range []string{".nan", ".inf"} {
		t.Run(rate, func(t *testing.T) {
			if s, err := Parse("s.yaml", []byte("load: {rate: "+rate+"}\nworkloads: [rbac]\ntargets: [opa/server]\n"), ""); err == nil {
				t.Errorf("rate %s accepted: %+v", rate, s.Targets)
			}
		})
	}
}

func TestEmbeddedQuickstartShape(t *testing.T) {
	s, err := Embedded("quickstart")
	if err != nil {
		t.Fatal(err)
	}
	var workloads []string
	for _, w := range s.Workloads {
		workloads = append(workloads, w.Name)
	}
	if got, want := strings.Join(workloads, " "), "nop rbac api risk"; got != want {
		t.Errorf("workloads %q, want %q", got, want)
	}
	want := []TargetRef{
		targetRef("opa/cli", 2, 2*time.Second, 500*time.Millisecond, DefaultTimeout),
		targetRef("opa/server", 4, 2*time.Second, 500*time.Millisecond, DefaultTimeout),
		targetRef("opa/inproc", 2, 2*time.Second, 500*time.Millisecond, DefaultTimeout),
		targetRef("cedar/server", 4, 2*time.Second, 500*time.Millisecond, DefaultTimeout),
		targetRef("cedar/inproc", 2, 2*time.Second, 500*time.Millisecond, DefaultTimeout),
		targetRef("openfga/inproc", 2, 2*time.Second, 500*time.Millisecond, DefaultTimeout),
		targetRef("spicedb/inproc", 2, 2*time.Second, 500*time.Millisecond, DefaultTimeout),
	}
	if !reflect.DeepEqual(s.Targets, want) {
		t.Errorf("targets\n %+v\nwant\n %+v", s.Targets, want)
	}
	if s.Name != "quickstart" || s.Source != "embedded:quickstart" || s.Repeat != 1 || !s.Floor {
		t.Errorf("name %q source %q repeat %d floor %t", s.Name, s.Source, s.Repeat, s.Floor)
	}
	// Its budget: every step's warm-up and measured time, plus about a second to start each
	// target, must stay within about two minutes (the first `go run` adds the compile to it).
	var total time.Duration
	for _, tg := range s.Targets {
		total += time.Duration(len(s.Workloads)) * (tg.Load.Warmup + tg.Load.Duration + time.Second)
	}
	if total > 120*time.Second {
		t.Errorf("quickstart takes about %s, want under 2 minutes", total)
	}
	if _, err := Embedded("quickstrat"); err == nil || err.Error() != `no embedded scenario "quickstrat"` {
		t.Errorf("unknown embedded scenario: %v", err)
	}
}

func TestFromFlags(t *testing.T) {
	workers, repeat := 16, 4
	for _, tc := range []struct {
		name string
		in   AdHoc
		want Scenario
	}{
		{"defaults", AdHoc{}, Scenario{Name: "ad-hoc", Source: "flags", Repeat: 1,
			Workloads: []WorkloadRef{{Name: "rbac"}},
			Targets:   []TargetRef{targetRef("opa/server", DefaultWorkers, DefaultDuration, DefaultWarmup, DefaultTimeout)}}},
		{"targets, workloads and overrides", AdHoc{Targets: []string{"opa/inproc", "opa/cli"}, Workloads: []string{"nop"},
			Overrides: Overrides{Workers: &workers, Repeat: &repeat}},
			Scenario{Name: "ad-hoc", Source: "flags", Repeat: 4, Workloads: []WorkloadRef{{Name: "nop"}},
				Targets: []TargetRef{targetRef("opa/inproc", 16, DefaultDuration, DefaultWarmup, DefaultTimeout),
					targetRef("opa/cli", 16, DefaultDuration, DefaultWarmup, DefaultTimeout)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := FromFlags(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := planOf(s), planOf(&tc.want); !reflect.DeepEqual(g, w) {
				t.Errorf("scenario\n %+v\nwant\n %+v", g, w)
			}
		})
	}
}

func TestFromFlagsErrors(t *testing.T) {
	knownTargets := strings.Join(kinds.Names(), ", ")
	zero := 0
	for _, tc := range []struct {
		name string
		in   AdHoc
		want string
	}{
		// The known targets spelt out once, so that one missing from target.Names shows here.
		{"unknown target", AdHoc{Targets: []string{"opa/grpc"}},
			`--target: unknown target "opa/grpc"; known: ` + knownTargets},
		{"unknown workload", AdHoc{Workloads: []string{"rbca"}},
			`--workload: unknown workload "rbca"; known: ` + strings.Join(workload.Names(), ", ")},
		{"both at once", AdHoc{Targets: []string{"opa/server", "no/such-target"}, Workloads: []string{"nop", "nosuchworkload"}},
			`--target: unknown target "no/such-target"; known: ` + knownTargets + "\n" +
				`--workload: unknown workload "nosuchworkload"; known: ` + strings.Join(workload.Names(), ", ")},
		{"zero workers", AdHoc{Overrides: Overrides{Workers: &zero}}, "target opa/server: --workers must be at least 1, got 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := FromFlags(tc.in)
			if err == nil {
				t.Fatalf("accepted: %+v", s)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n%s\nwant\n%s", err, tc.want)
			}
		})
	}
}

func TestApplyOverrides(t *testing.T) {
	ptr := func(v int) *int { return &v }
	dur := func(d time.Duration) *time.Duration { return &d }
	base := func() *Scenario {
		s, err := Parse("s.yaml", []byte("load: {requests: 100}\nworkloads: [nop]\ntargets: [opa/cli, opa/server]\n"), "")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	withRequests := func(name string) TargetRef {
		r := targetRef(name, DefaultWorkers, DefaultDuration, DefaultWarmup, DefaultTimeout)
		r.Load.Requests = 100
		return r
	}
	rate, requests := 250.0, int64(42)
	for _, tc := range []struct {
		name       string
		o          Overrides
		wantRepeat int
		want       func(TargetRef) TargetRef
	}{
		{"nothing", Overrides{}, 1, func(r TargetRef) TargetRef { return r }},
		{"workers", Overrides{Workers: ptr(32)}, 1, func(r TargetRef) TargetRef { r.Load.Workers = 32; return r }},
		{"repeat", Overrides{Repeat: ptr(5)}, 5, func(r TargetRef) TargetRef { return r }},
		// A duration on the command line replaces a request budget from the scenario.
		{"duration", Overrides{Duration: dur(7 * time.Second)}, 1, func(r TargetRef) TargetRef {
			r.Load.Duration, r.Load.Requests = 7*time.Second, 0
			return r
		}},
		{"requests", Overrides{Requests: &requests}, 1, func(r TargetRef) TargetRef { r.Load.Requests = 42; return r }},
		{"warmup", Overrides{Warmup: dur(0)}, 1, func(r TargetRef) TargetRef { r.Load.Warmup = 0; return r }},
		{"timeout", Overrides{Timeout: dur(time.Second)}, 1, func(r TargetRef) TargetRef { r.Timeout = time.Second; return r }},
		{"open loop", Overrides{Rate: &rate, Connections: ptr(4), Duration: dur(time.Second)}, 1, func(r TargetRef) TargetRef {
			// The rate names the open loop: the workers the scenario had are not this load's.
			r.Load.Rate, r.Load.Workers, r.Load.Connections, r.Load.Duration, r.Load.Requests = 250, 0, 4, time.Second, 0
			return r
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			if err := s.Apply(tc.o); err != nil {
				t.Fatal(err)
			}
			want := []TargetRef{tc.want(withRequests("opa/cli")), tc.want(withRequests("opa/server"))}
			if !reflect.DeepEqual(s.Targets, want) {
				t.Errorf("targets\n %+v\nwant\n %+v", s.Targets, want)
			}
			if s.Repeat != tc.wantRepeat {
				t.Errorf("repeat %d, want %d", s.Repeat, tc.wantRepeat)
			}
		})
	}
}

func TestApplyRejects(t *testing.T) {
	ptr := func(v int) *int { return &v }
	dur := func(d time.Duration) *time.Duration { return &d }
	negRate := -1.0
	for _, tc := range []struct {
		name string
		o    Overrides
		want string
	}{
		{"repeat 0", Overrides{Repeat: ptr(0)}, "--repeat must be at least 1, got 0"},
		{"workers 0", Overrides{Workers: ptr(0)}, "target opa/server: --workers must be at least 1, got 0"},
		{"negative warmup", Overrides{Warmup: dur(-time.Second)}, "target opa/server: --warmup must not be negative, got -1s"},
		{"zero timeout", Overrides{Timeout: dur(0)}, "target opa/server: --timeout must be positive, got 0s"},
		{"negative rate", Overrides{Rate: &negRate}, "target opa/server: --rate must be positive, got -1"},
		{"two sweeps", Overrides{Sweep: Sweep{Workers: []int{1, 2}, Rates: []float64{10}}},
			"one sweep at a time: --workers with several values, --rates or --load-points"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := FromFlags(AdHoc{})
			if err != nil {
				t.Fatal(err)
			}
			err = s.Apply(tc.o)
			if err == nil || err.Error() != tc.want {
				t.Errorf("Apply = %v, want %q", err, tc.want)
			}
		})
	}
}

// FuzzParse: Parse never panics, and what it accepts can run.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"workloads: [rbac]\ntargets: [opa/server]\n",
		"name: x\nrepeat: 2\nfloor: false\nload: {workers: 2, duration: 1s, warmup: 0s, timeout: 1s}\nworkloads: [nop, {name: api}]\n" +
			"targets: [opa/cli, {target: opa/inproc, load: {workers: 1, requests: 10}}]\n",
		"load: {rate: 100, connections: 2}\nworkloads: [nop]\ntargets: [opa/server]\n",
		"load: {workers: 2}\nworkloads: [{name: x, policy: [a.rego], inputs: i.jsonl}]\ntargets: [{target: opa/cli, load: {duration: 1s}}]\n",
		"repeat: -1\n",
		"load: {workers_sweep: [1, 2]}\nworkloads: [nop]\ntargets: [opa/server]\n",
		"load: {load_points: [10x1]}\nworkloads: [nop]\ntargets: [opa/server]\n",
		"workloads:\n  - name: u\n    policy: [p.rego]\n    inputs: i.jsonl\ntargets: [opa/server]\n",
		"repeat: 0\nworkloads: [rbca]\ntargets: [opa/grpc]\n",
		"targets:\n  - target: opa/server\n    load:\n      wrokers: 2\n",
		"- a\n- b\n",
		"workloads: !!map {}\n",
		"&a [*a]",
		"",
	} {
		f.Add([]byte(seed))
	}
	baseDir := f.TempDir() // empty: every file a scenario names is missing
	f.Fuzz(func(t *testing.T, b []byte) {
		// File loading is not the parser's business and a path such as / or ../.. would make
		// the fuzzer walk the disk: keep to inputs that name no files outside the temp dir.
		if bytes.Contains(b, []byte("/.")) || bytes.Contains(b, []byte("..")) ||
			((bytes.Contains(b, []byte("policy")) || bytes.Contains(b, []byte("data"))) && bytes.Contains(b, []byte(": /"))) {
			t.Skip()
		}
		s, err := Parse("fuzz.yaml", b, baseDir)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		if len(s.Targets) == 0 || len(s.Workloads) == 0 || s.Repeat < 1 {
			t.Fatalf("accepted a scenario that cannot run: %+v", s)
		}
		for _, tg := range s.Targets {
			if err := tg.Load.Validate(); err != nil {
				t.Fatalf("accepted target %s whose load does not validate: %v", tg.Name, err)
			}
			if tg.Timeout <= 0 {
				t.Fatalf("accepted target %s with timeout %s", tg.Name, tg.Timeout)
			}
		}
	})
}

// A scenario may mix a workload written only in Rego with targets of both engines: the pair that
// does not apply is skipped with its reason, once although a sweep expands the target into
// several. A workload no target can run, or a target that can run no workload, is refused at
// load time naming the workload's line and the target.
func TestParseMixesEnginesAndRefusesWhatCannotRun(t *testing.T) {
	const notCheckRequests = `its inputs are not Envoy CheckRequests ({"attributes": {"request": {"http": ...}}})`
	const mine = "  - name: mine\n    policy: [authz.rego]\n    inputs: inputs.jsonl\n"
	for _, tc := range []struct {
		name, yaml string
		skips      []Skip
		err        string
	}{
		{name: "mix", yaml: "workloads:\n  - rbac\n" + mine + "targets:\n  - opa/inproc\n  - target: cedar/inproc\n    load: {workers_sweep: [1, 2]}\n",
			skips: []Skip{{Workload: "mine", Target: "cedar/inproc", Reason: "the workload has no Cedar version"}}},
		{name: "no target runs the workload", yaml: "workloads:\n  - rbac\n" + mine + "targets:\n  - cedar/inproc\n",
			err: "s.yaml:3: workload mine has no Cedar version, and target cedar/inproc reads Cedar; add cedar_policies and requests (with entities and schema if it uses them)"},
		{name: "the target runs no workload", yaml: "workloads:\n" + mine + "  - name: mine2\n    policy: [authz.rego]\n    inputs: inputs.jsonl\ntargets:\n  - opa/inproc\n  - cedar/server\n",
			err: "s.yaml:2: workload mine has no Cedar version, and target cedar/server reads Cedar; add cedar_policies and requests (with entities and schema if it uses them)\n" +
				"s.yaml:5: workload mine2 has no Cedar version, and target cedar/server reads Cedar; add cedar_policies and requests (with entities and schema if it uses them)"},
		{name: "ext_authz skips a workload of plain inputs", yaml: "workloads:\n  - rbac\n  - envoy\ntargets:\n  - opa/inproc\n  - opa/extauthz\n",
			skips: []Skip{{Workload: "rbac", Target: "opa/extauthz", Reason: notCheckRequests}}},
		{name: "ext_authz runs no workload", yaml: "workloads:\n  - rbac\ntargets:\n  - opa/extauthz\n",
			err: "s.yaml:2: target opa/extauthz cannot run workload rbac: " + notCheckRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("s.yaml", []byte(tc.yaml), filepath.Join("testdata", "user"))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Errorf("error\n%v\nwant\n%s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s.Skips, tc.skips) {
				t.Errorf("skips %+v, want %+v", s.Skips, tc.skips)
			}
			for _, k := range tc.skips {
				if s.Skipped(k.Workload, k.Target) != k.Reason || s.Skipped(k.Workload, "opa/inproc") != "" {
					t.Errorf("Skipped disagrees with %+v", s.Skips)
				}
			}
		})
	}
}

// A running OPA (--url) already has its policy: inputs and the query to ask are all it needs,
// and a --policy only names that query; it is loaded nowhere.
func TestFromFlagsRunningServerNeedsNoPolicy(t *testing.T) {
	dir := filepath.Join("testdata", "user")
	policy, inputs := filepath.Join(dir, "authz.rego"), filepath.Join(dir, "inputs.jsonl")
	const url = "http://127.0.0.1:8181"
	for _, tc := range []struct {
		name     string
		targets  []string
		url      string
		user     workload.UserSpec
		wantErr  string // substring; empty: accepted
		query    string // the workload's query, when accepted
		policies int    // policy files the workload keeps
	}{
		{name: "inputs and query", targets: []string{"opa/server"}, url: url,
			user: workload.UserSpec{Inputs: inputs, Query: "data.x.allow"}, query: "data.x.allow"},
		{name: "a policy only names the query", targets: []string{"opa/server"}, url: url,
			user: workload.UserSpec{Inputs: inputs, Policies: []string{policy}}, query: "data.scenariotest.authz.allow"},
		{name: "a --url path is the decision", targets: []string{"opa/server"}, url: url + "/v1/data/x/allow",
			user: workload.UserSpec{Inputs: inputs}},
		{name: "no query to ask", targets: []string{"opa/server"}, url: url,
			user: workload.UserSpec{Inputs: inputs}, wantErr: "--target opa/server --url " + url + ": give --query"},
		{name: "a server authzbench starts needs the policy", targets: []string{"opa/server"},
			user: workload.UserSpec{Inputs: inputs, Query: "data.x.allow"}, wantErr: "--target opa/server: your workload has no Rego version"},
		{name: "so does an in-process engine beside it", targets: []string{"opa/inproc", "opa/server"}, url: url,
			user: workload.UserSpec{Inputs: inputs, Query: "data.x.allow"}, wantErr: "--target opa/inproc: your workload has no Rego version"},
		{name: "the policy is kept for the in-process engine", targets: []string{"opa/inproc", "opa/server"}, url: url,
			user: workload.UserSpec{Inputs: inputs, Policies: []string{policy}}, query: "data.scenariotest.authz.allow", policies: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user := tc.user
			s, err := FromFlags(AdHoc{Targets: tc.targets, Options: map[string]any{"url": tc.url}, User: &user})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			u := s.Workloads[0].User
			w, err := workload.FromFiles(*u)
			if err != nil {
				t.Fatal(err)
			}
			if w.Query != tc.query || len(w.PolicyPaths) != tc.policies || len(w.Inputs) == 0 {
				t.Errorf("query %q, %d policies, %d inputs; want %q and %d", w.Query, len(w.PolicyPaths), len(w.Inputs), tc.query, tc.policies)
			}
		})
	}
}
