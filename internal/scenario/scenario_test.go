package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/workload"
)

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
		"opa/inproc w0 r100 c64", "opa/inproc w0 r1000 c64", "opa/cli w0 r100 c8", "opa/cli w0 r500 c32"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("steps:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, bad := range []struct{ yaml, want string }{
		{"load: {rates: [100], workers_sweep: [1]}\nworkloads: [rbac]\ntargets: [opa/server]\n", "s.yaml:1: one sweep at a time"},
		{"load: {load_points: [100y8]}\nworkloads: [rbac]\ntargets: [opa/server]\n", `s.yaml:1: load point "100y8"`},
		{"load: {rates: [0]}\nworkloads: [rbac]\ntargets: [opa/server]\n", "rates: must be positive, got 0"},
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
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Parsing builds each built-in workload, and the big-data experiments name rbac-data
		// sizes that take minutes and gigabytes to build (400 MB of data: 3.5 min here): their
		// files are checked with a small size in place of each big one, the rest as written.
		small := bigData.ReplaceAllStringFunc(string(b), func(name string) string {
			if n, _ := strconv.Atoi(strings.TrimPrefix(name, "rbac-data-")); n > 100_000 {
				return "rbac-data-1000"
			}
			return name
		})
		if _, err := Parse(f, []byte(small), filepath.Dir(f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

var bigData = regexp.MustCompile(`rbac-data-[0-9]+`)

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

// Turned off (run -f --floor=false, capacity -f), the floor takes away the nop workload it
// added, and only that one: a nop the scenario lists is the user's, and stays.
func TestFloorOffTakesAwayOnlyTheNopItAdded(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want []string
	}{
		{"workloads: [rbac, api]\ntargets: [opa/server]\n", []string{"rbac", "api"}},
		{"workloads: [nop, rbac]\ntargets: [opa/server]\n", []string{"nop", "rbac"}},
		{"workloads: [rbac, nop]\ntargets: [opa/server]\n", []string{"rbac", "nop"}},
	} {
		s, err := Parse("s.yaml", []byte(tc.yaml), "")
		if err != nil {
			t.Fatal(err)
		}
		s.SetFloor(false)
		var got []string
		for _, w := range s.Workloads {
			got = append(got, w.Name)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") || s.Floor {
			t.Errorf("%q with the floor turned off: workloads %v (floor %v), want %v", tc.yaml, got, s.Floor, tc.want)
		}
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

// A scenario's stages are one open-loop schedule: its duration is their total unless the same
// load gives one, a target's stages replace the scenario's rate (and workers), and --stages
// over a file's workers is the open loop.
func TestStagesKey(t *testing.T) {
	s, err := Parse("s.yaml", []byte(`load: {rate: 100, workers: 3, duration: 10s}
workloads: [nop]
targets:
  - opa/server
  - target: opa/inproc
    load: {stages: "1s:0-100,2s:100"}
  - target: opa/cli
    load:
      stages: [500ms:10, 500ms:10-0]
`), "")
	if err == nil {
		t.Fatal("a scenario load with both workers and rate accepted")
	}
	s, err = Parse("s.yaml", []byte(`load: {rate: 100, duration: 10s}
workloads: [nop]
targets:
  - opa/server
  - target: opa/inproc
    load: {stages: "1s:0-100,2s:100"}
  - target: opa/cli
    load:
      stages: [500ms:10, 500ms:10-0]
`), "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tg := range s.Targets {
		got = append(got, fmt.Sprintf("%s r%g %s %s", tg.Name, tg.Load.Rate, load.FormatStages(tg.Load.Stages), tg.Load.Duration))
	}
	want := []string{"opa/server r100  10s", "opa/inproc r0 1s:0-100,2s:100 3s", "opa/cli r0 500ms:10,500ms:10-0 1s"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("targets\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	seven := 7
	if err := s.Apply(Overrides{Workers: &seven}); err != nil {
		t.Fatal(err)
	}
	if l := s.Targets[1].Load; l.Open() || l.Workers != 7 {
		t.Errorf("--workers over a target's stages: %+v, want the closed loop", l)
	}
	stages, _ := load.ParseStages("1s:50")
	if err := s.Apply(Overrides{Stages: stages}); err != nil {
		t.Fatal(err)
	}
	if l := s.Targets[0].Load; !l.Open() || l.Workers != 0 || l.Duration != time.Second {
		t.Errorf("--stages over the flags' workers: %+v, want the stages over their 1s", l)
	}
}

// A scenario names its testbed, kept for the result; the same built-in listed twice (the floor
// before and after a sweep) is one workload measured twice, and stays allowed.
func TestTestbedAndBuiltinTwice(t *testing.T) {
	s, err := Parse("s.yaml", []byte("testbed: ci-4core.v2\nworkloads: [nop, rbac, nop]\ntargets: [opa/inproc]\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Testbed != "ci-4core.v2" || len(s.Workloads) != 3 {
		t.Fatalf("testbed %q, %d workloads; want ci-4core.v2 and nop, rbac, nop", s.Testbed, len(s.Workloads))
	}
}

// A built-in is built with the versions of the engines the targets decide with and no other:
// an OPA run of a big rbac-data workload must not also build Cedar's entities and OpenFGA's
// tuples, and a Cedar target must still find its version.
func TestBuiltinsCarryTheTargetsEnginesOnly(t *testing.T) {
	has := func(w *workload.Workload) (opa, cedar, openfga bool) {
		return len(w.Policies) > 0, w.VersionFor("cedar") != nil, w.VersionFor("openfga") != nil
	}
	cases := []struct {
		name                string
		targets             []string
		opa, cedar, openfga bool
	}{
		{"opa alone", []string{"opa/server"}, true, false, false},
		{"cedar alone", []string{"cedar/inproc"}, false, true, false},
		{"opa and openfga", []string{"opa/inproc", "openfga/inproc"}, true, false, true},
		{"every one", []string{"opa/inproc", "cedar/inproc", "openfga/inproc"}, true, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file, err := Parse("s.yaml", []byte("floor: false\nworkloads: [rbac]\ntargets: ["+strings.Join(tc.targets, ", ")+"]\n"), "")
			if err != nil {
				t.Fatal(err)
			}
			flags, err := FromFlags(AdHoc{Workloads: []string{"rbac"}, Targets: tc.targets})
			if err != nil {
				t.Fatal(err)
			}
			for from, s := range map[string]*Scenario{"scenario file": file, "flags": flags} {
				opa, cedar, openfga := has(s.Workloads[0].Built)
				if opa != tc.opa || cedar != tc.cedar || openfga != tc.openfga {
					t.Errorf("%s: versions opa %v, cedar %v, openfga %v; want %v, %v, %v", from, opa, cedar, openfga, tc.opa, tc.cedar, tc.openfga)
				}
			}
		})
	}
}
