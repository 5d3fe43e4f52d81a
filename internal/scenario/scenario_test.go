package scenario

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseValid(t *testing.T) {
	s, err := Parse("s.yaml", []byte(`
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
`), "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "mix" || s.Repeat != 3 || len(s.Workloads) != 2 || s.Workloads[1].Name != "nop" {
		t.Fatalf("parsed %+v", s)
	}
	cli, server := s.Targets[0], s.Targets[1]
	if cli.Name != "opa/cli" || cli.Load.Workers != 2 || cli.Load.Duration != 5*time.Second ||
		cli.Load.Warmup != 500*time.Millisecond || cli.Timeout != DefaultTimeout {
		t.Errorf("cli: %+v", cli)
	}
	if server.Load.Workers != 8 || server.Load.Requests != 1000 || server.Load.Duration != 5*time.Second || server.Timeout != time.Second {
		t.Errorf("server: a target's load must override the scenario's, which overrides the defaults: %+v", server)
	}
}

func TestParseErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"unknown workload", "workloads: [rbac, rbca]\ntargets: [opa/server]\n", []string{`s.yaml:1: unknown workload "rbca"; known: nop, rbac`}},
		{"unknown target", "workloads: [rbac]\ntargets:\n  - opa/server\n  - opa/grpc\n", []string{`s.yaml:4: unknown target "opa/grpc"`}},
		{"zero workers", "workloads: [rbac]\nload:\n  workers: 0\ntargets: [opa/server]\n", []string{"s.yaml:3: workers must be at least 1"}},
		{"negative warmup in a target", "workloads: [rbac]\ntargets:\n  - target: opa/server\n    load:\n      warmup: -1s\n", []string{"s.yaml:5: warmup must not be negative"}},
		{"repeat zero", "repeat: 0\nworkloads: [rbac]\ntargets: [opa/server]\n", []string{"s.yaml:1: repeat must be at least 1"}},
		{"unknown top-level field", "workload: [rbac]\ntargets: [opa/server]\n", []string{`s.yaml:1: unknown field "workload"`}},
		{"unknown field in a target's load", "workloads: [rbac]\ntargets:\n  - target: opa/server\n    load: {wrokers: 2}\n", []string{`s.yaml:4: unknown field "wrokers"`}},
		{"unknown field in a target", "workloads: [rbac]\ntargets:\n  - target: opa/server\n    laod: {}\n", []string{`s.yaml:4: unknown field "laod"`}},
		{"empty", "", []string{"s.yaml: empty scenario"}},
		{"several at once", "workloads: [rbca]\ntargets: [opa/grpc]\n", []string{"s.yaml:1: unknown workload", "s.yaml:2: unknown target"}},
		{"no targets", "workloads: [rbac]\n", []string{"s.yaml: no targets"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tc.yaml), "")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestQuickstart(t *testing.T) {
	s, err := Embedded("quickstart")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Workloads) != 4 || len(s.Targets) != 5 {
		t.Errorf("quickstart has %d workloads and %d targets, want 4 and 5 (three OPA modes, two Cedar)", len(s.Workloads), len(s.Targets))
	}
	// Its budget: every step's warm-up and measured time, plus about a second to start each
	// target, must stay within two and a half minutes.
	var total time.Duration
	for _, tg := range s.Targets {
		total += time.Duration(len(s.Workloads)) * (tg.Load.Warmup + tg.Load.Duration + time.Second)
	}
	if total > 150*time.Second {
		t.Errorf("quickstart takes about %s, want under 2.5 minutes", total)
	}
}

func TestFromFlags(t *testing.T) {
	s, err := FromFlags(AdHoc{})
	if err != nil || len(s.Targets) != 1 || s.Targets[0].Name != "opa/server" || s.Workloads[0].Name != "rbac" {
		t.Fatalf("defaults: %+v %v", s, err)
	}
	workers, repeat := 16, 4
	s, err = FromFlags(AdHoc{Targets: []string{"opa/inproc", "opa/cli"}, Workloads: []string{"nop"},
		Overrides: Overrides{Workers: &workers, Repeat: &repeat}})
	if err != nil || s.Repeat != 4 || s.Targets[1].Load.Workers != 16 {
		t.Fatalf("overrides: %+v %v", s, err)
	}
	_, err = FromFlags(AdHoc{Targets: []string{"opa/grpc"}})
	if err == nil || !strings.Contains(err.Error(), "known: cedar/inproc, cedar/server, http, opa/cli, opa/inproc, opa/server") {
		t.Errorf("unknown target: %v", err)
	}
	zero := 0
	if _, err := FromFlags(AdHoc{Overrides: Overrides{Workers: &zero}}); err == nil {
		t.Error("zero workers accepted")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("workloads: [rbac]\ntargets: [opa/server]\n"))
	f.Add([]byte("load: {workers: 2}\nworkloads: [{name: x, policy: [a.rego], inputs: i.jsonl}]\ntargets: [{target: opa/cli, load: {duration: 1s}}]\n"))
	f.Add([]byte("repeat: -1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse("fuzz.yaml", b, t.TempDir())
		if err == nil && (len(s.Targets) == 0 || len(s.Workloads) == 0 || s.Repeat < 1) {
			t.Fatalf("accepted a scenario that cannot run: %+v", s)
		}
	})
}

func TestSweeps(t *testing.T) {
	s, err := Parse("s.yaml", []byte(`
load: {duration: 2s, workers_sweep: [1, 2, 4]}
workloads: [rbac]
targets:
  - opa/server
  - target: opa/inproc
    load: {rates: [100, 1000]}
  - target: opa/cli
    load: {load_points: [100x8, 500x32]}
`), "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tg := range s.Targets {
		got = append(got, fmt.Sprintf("%s w%d r%g c%d", tg.Name, tg.Load.Workers, tg.Load.Rate, tg.Load.Connections))
	}
	want := []string{"opa/server w1 r0 c64", "opa/server w2 r0 c64", "opa/server w4 r0 c64",
		"opa/inproc w4 r100 c64", "opa/inproc w4 r1000 c64", "opa/cli w4 r100 c8", "opa/cli w4 r500 c32"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("steps:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, bad := range []struct{ yaml, want string }{
		{"load: {rates: [100], workers_sweep: [1]}\nworkloads: [rbac]\ntargets: [opa/server]\n", "s.yaml:1: one sweep at a time"},
		{"load: {load_points: [100y8]}\nworkloads: [rbac]\ntargets: [opa/server]\n", `s.yaml:1: load point "100y8"`},
		{"load: {rates: [0]}\nworkloads: [rbac]\ntargets: [opa/server]\n", "rates must be positive"},
	} {
		if _, err := Parse("s.yaml", []byte(bad.yaml), ""); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err %v, want %q", bad.yaml, err, bad.want)
		}
	}
	s, err = FromFlags(AdHoc{Targets: []string{"opa/server"}, Overrides: Overrides{Sweep: Sweep{Workers: []int{1, 8}}}})
	if err != nil || len(s.Targets) != 2 || s.Targets[1].Load.Workers != 8 {
		t.Errorf("flag sweep: %+v %v", s, err)
	}
}

func TestExperimentsParse(t *testing.T) {
	files, _ := filepath.Glob("../../experiments/*.yaml")
	if len(files) < 4 {
		t.Fatalf("found %d experiment files", len(files))
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestFloorIsOnByDefaultInScenarios(t *testing.T) {
	s, err := Parse("s.yaml", []byte("workloads: [rbac]\ntargets: [opa/server]\n"), "")
	if err != nil || len(s.Workloads) != 2 || s.Workloads[0].Name != "nop" || !s.Floor {
		t.Fatalf("default floor: %+v %v", s, err)
	}
	s, err = Parse("s.yaml", []byte("floor: false\nworkloads: [rbac]\ntargets: [opa/server]\n"), "")
	if err != nil || len(s.Workloads) != 1 || s.Floor {
		t.Fatalf("floor off: %+v %v", s, err)
	}
	s, _ = FromFlags(AdHoc{Workloads: []string{"api"}})
	if len(s.Workloads) != 1 {
		t.Errorf("flags: floor must be asked for, got %+v", s.Workloads)
	}
	s.SetFloor(true)
	s.SetFloor(true)
	if len(s.Workloads) != 2 {
		t.Errorf("floor added twice or not at all: %+v", s.Workloads)
	}
}

func TestPinDefaults(t *testing.T) {
	s, err := Parse("s.yaml", []byte("workloads: [rbac]\ntargets: [opa/server]\n"), "")
	if err != nil || s.Pin != "auto" {
		t.Errorf("scenario files pin apart by default: %q %v", s.Pin, err)
	}
	s, _ = Parse("s.yaml", []byte("pin: none\nworkloads: [rbac]\ntargets: [opa/server]\n"), "")
	if s.Pin != "none" {
		t.Errorf("pin: none gave %q", s.Pin)
	}
	if _, err := Parse("s.yaml", []byte("pin: sometimes\nworkloads: [rbac]\ntargets: [opa/server]\n"), ""); err == nil || !strings.Contains(err.Error(), "s.yaml:1: pin") {
		t.Errorf("bad pin: %v", err)
	}
	if s, _ := FromFlags(AdHoc{}); s.Pin != "none" {
		t.Errorf("flags leave pinning off by default: %q", s.Pin)
	}
}

func TestOrder(t *testing.T) {
	sequential := Sequential
	for _, tc := range []struct {
		name    string
		yaml    string // a scenario file; empty for flags
		flag    *Order
		want    Order
		wantErr string
	}{
		{name: "files interleave by default", yaml: "workloads: [rbac]\ntargets: [opa/server]\n", want: Interleaved},
		{name: "files opt out", yaml: "order: sequential\nworkloads: [rbac]\ntargets: [opa/server]\n", want: Sequential},
		{name: "--order overrides the file", yaml: "order: interleaved\nworkloads: [rbac]\ntargets: [opa/server]\n", flag: &sequential, want: Sequential},
		{name: "flags interleave by default", want: Interleaved},
		{name: "--order sequential", flag: &sequential, want: Sequential},
		{name: "unknown order", yaml: "workloads: [rbac]\norder: random\ntargets: [opa/server]\n",
			wantErr: `s.yaml:2: order "random": want interleaved or sequential`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s *Scenario
			var err error
			if tc.yaml != "" {
				if s, err = Parse("s.yaml", []byte(tc.yaml), ""); err == nil {
					err = s.Apply(Overrides{Order: tc.flag})
				}
			} else {
				s, err = FromFlags(AdHoc{Overrides: Overrides{Order: tc.flag}})
			}
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || s.Order != tc.want {
				t.Fatalf("order %v, err %v; want %v", s.Order, err, tc.want)
			}
		})
	}
	quickstart, err := Embedded("quickstart")
	if err != nil || quickstart.Order != Interleaved {
		t.Errorf("quickstart order %v (%v), want interleaved", quickstart.Order, err)
	}
	if _, err := ParseOrder("Sequential"); err == nil {
		t.Error("orders are lower case, as written in files and flags")
	}
}
