package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// TestBuildComputesRowsAsNumbers: the view holds each row's figures as numbers, so any format
// can show them its own way; the cells are only their text.
func TestBuildComputesRowsAsNumbers(t *testing.T) {
	v := Build(sampleDocument())
	if len(v.Rows) != 6 || v.CrossEngine != "" {
		t.Fatalf("%d rows, cross engine %q; want 6 rows of one engine", len(v.Rows), v.CrossEngine)
	}
	nopCLI, nopServer, rbacCLI, partial, open := v.Rows[0], v.Rows[1], v.Rows[3], v.Rows[4], v.Rows[5]
	if !nopCLI.VsFirst.Base || nopCLI.VsFirst.Value != 1 || nopServer.VsFirst.Base {
		t.Errorf("× vs first: nop opa/cli %+v, nop opa/server %+v; want the first row the base", nopCLI.VsFirst, nopServer.VsFirst)
	}
	if got := nopServer.VsFirst.Value; math.Abs(got-5080/71.1) > 1e-9 || nopServer.VsFirst.CI95 != nil || nopServer.VsFirst.Different {
		t.Errorf("nop opa/server × vs first %+v, want 5080/71.1 without an interval (one repetition a side is no interval)", nopServer.VsFirst)
	}
	if d := rbacCLI.OverFloor; d == nil || d.US != 18170-13600 || d.HasInterval {
		t.Errorf("rbac opa/cli over nop %+v, want +4570 µs without an interval", d)
	}
	if nopCLI.OverFloor != nil || open.OverFloor != nil {
		t.Errorf("over nop on the nop row (%+v) or on an open-loop row without an open-loop nop run (%+v)", nopCLI.OverFloor, open.OverFloor)
	}
	if rbacCLI.Errors != 15 || !rbacCLI.Served || rbacCLI.Latency.P99 != 18170*2 || rbacCLI.Throughput.Mean != 54.7 || rbacCLI.Throughput.N != 5 {
		t.Errorf("rbac opa/cli: %+v", rbacCLI)
	}
	if !partial.Partial || partial.SUT == nil || partial.SUT.CPUCoresMean != 1.234 || partial.RateMissed {
		t.Errorf("partial row: partial %t, sut %+v, rate missed %t", partial.Partial, partial.SUT, partial.RateMissed)
	}
	if !open.RateMissed || open.Load.Model != result.OpenLoop || len(open.Notes) != 4 {
		t.Errorf("open row: rate missed %t, model %q, %d notes: %q", open.RateMissed, open.Load.Model, len(open.Notes), open.Notes)
	}
	if last := v.Notes[len(v.Notes)-1]; last.Kind != EnvNote || !strings.HasPrefix(last.Text, "Test CPU, 2 cores") {
		t.Errorf("the last note is %q, want the environment", last.Text)
	}
}

// TestBuildMarksThinPercentiles: a percentile with fewer than result.FewBeyond ok responses
// beyond it is marked, and the row's note names them with their counts.
func TestBuildMarksThinPercentiles(t *testing.T) {
	v := Build(twoWorkloadsDocument())
	short, long := v.Rows[5], v.Rows[1]
	if want := (Thin{P99: true, P999: true}); short.Thin != want {
		t.Errorf("short run thin %+v, want %+v", short.Thin, want)
	}
	if long.Thin != (Thin{}) || v.Rows[0].Thin != (Thin{}) {
		t.Errorf("thin marks on a long run (%+v) or a document without the counts (%+v)", long.Thin, v.Rows[0].Thin)
	}
	if !strings.Contains(strings.Join(short.Notes, "\n"), "(P99: 4, P99.9: 0)") {
		t.Errorf("short run's notes %q lack the counts", short.Notes)
	}
}

// TestOverFloorShowsItsSpread: the floor column is the difference of two medians, so it carries
// the 95 % interval of that difference, and one whose interval includes 0 is marked, not called.
func TestOverFloorShowsItsSpread(t *testing.T) {
	run := func(workload string, p50s ...float64) result.Run {
		r := result.Run{Target: "opa/inproc", Workload: workload, Load: result.Load{Model: result.ClosedLoop, Workers: 2}}
		for _, p := range p50s {
			r.Repetitions = append(r.Repetitions, result.Repetition{OK: 100, LatencyUS: result.Percentiles{P50: p}})
		}
		var sum float64
		for _, p := range p50s {
			sum += p
		}
		r.Summary = result.Summary{OK: 100 * uint64(len(p50s)), LatencyUS: result.Percentiles{P50: sum / float64(len(p50s))}}
		return r
	}
	for _, tc := range []struct {
		name        string
		floor, runs result.Run
		want        Difference
		zero        bool   // the interval includes 0
		cell        string // as the table shows it
	}{
		// nop 7, 8, 9 (sd 1); rbac 29, 30, 31 (sd 1): 22 ± t(4)·√(2/3) = 22 ± 2.27.
		{"called", run("nop", 7, 8, 9), run("rbac", 29, 30, 31), Difference{US: 22, HalfUS: 2.776 * math.Sqrt(2.0/3), HasInterval: true},
			false, "+22.0µs ±2.27µs"},
		// The same medians' difference, 3 µs, inside a spread of tens: shown, marked, not called.
		{"within the noise", run("nop", 5, 20, 2), run("rbac", 2, 30, 4), Difference{US: 3, HasInterval: true}, true, "+3.00µs ±"},
		{"one repetition: no interval", run("nop", 8), run("rbac", 30), Difference{US: 22}, false, "+22.0µs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Build(&result.Document{Schema: result.Schema, Runs: []result.Run{tc.floor, tc.runs}})
			d := v.Rows[1].OverFloor
			if d == nil {
				t.Fatal("no difference over the floor")
			}
			if math.Abs(d.US-tc.want.US) > 1e-9 || d.HasInterval != tc.want.HasInterval || d.IncludesZero() != tc.zero ||
				(tc.want.HalfUS > 0 && math.Abs(d.HalfUS-tc.want.HalfUS) > 1e-9) {
				t.Errorf("over floor %+v (includes 0: %t), want %+v (%t)", *d, d.IncludesZero(), tc.want, tc.zero)
			}
			cell := cells(v, v.Rows[1], "")[5]
			if !strings.HasPrefix(cell, tc.cell) || strings.HasSuffix(cell, " ~") != tc.zero {
				t.Errorf("cell %q, want it to start %q, marked ~ %t", cell, tc.cell, tc.zero)
			}
		})
	}
}

// Sends that waited for a free worker of an engine inside authzbench are not a server falling
// behind: the engine and the generator share the process's CPU. Where the engine ran is the
// run's recorded placement, or for a file without one, the target's name.
func TestOpenLoopWaitNoteInProcess(t *testing.T) {
	for _, tc := range []struct {
		name, target  string
		placement     result.Placement
		must, mustNot string
	}{
		{"in-process by its name (a file without placements)", "opa/inproc", "", "because all 64 workers were busy", "fell behind"},
		{"in-process by its placement", "opa/wasm", result.InProcess, "because all 64 workers were busy", "fell behind"},
		{"a launched server", "opa/server", result.LaunchedServer, "the server fell behind", "workers were busy"},
		{"a server without a placement", "opa/server", "", "the server fell behind", "workers were busy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := result.Run{Target: tc.target, Workload: "rbac", SUT: result.SUT{Placement: tc.placement},
				Load: result.Load{Model: result.OpenLoop, Rate: 2000, Connections: 64},
				Summary: result.Summary{Requests: 1000, OK: 1000, Open: &result.OpenSummary{Intended: 1000, Sent: 1000,
					LateSends: 100, GeneratorLate: 5, LateAfterUS: 1000}}}
			var b bytes.Buffer
			if err := Table(&b, &result.Document{Schema: result.Schema, Runs: []result.Run{r}}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b.Bytes(), []byte("95 sends waited")) || !bytes.Contains(b.Bytes(), []byte(tc.must)) || bytes.Contains(b.Bytes(), []byte(tc.mustNot)) {
				t.Errorf("want %q and not %q:\n%s", tc.must, tc.mustNot, b.String())
			}
			if bytes.Contains(b.Bytes(), []byte("RATE MISSED")) {
				t.Errorf("5 of 1000 generator-late sends (0.5 %%) marked the run:\n%s", b.String())
			}
		})
	}
}

// A shard asked for its share of the scenario's rate: when its generator fell short, the note
// must not read as though it had sent half of what it was asked.
func TestOpenLoopShortOfCPUNoteInAShard(t *testing.T) {
	for _, tc := range []struct {
		name          string
		shard         *result.Shard
		must, mustNot string
	}{
		{"a whole run", nil, "250/s sent of 500/s asked", "share"},
		{"shard 1 of 2", &result.Shard{Index: 1, Count: 2}, "250/s sent of this shard's 1/2 share of the 500/s asked", "sent of 500/s asked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := result.Run{Target: "opa/server", Workload: "rbac", SUT: result.SUT{Placement: result.LaunchedServer},
				Load: result.Load{Model: result.OpenLoop, Rate: 500, Connections: 64},
				Summary: result.Summary{Requests: 500, OK: 500, Open: &result.OpenSummary{Intended: 500, Sent: 500,
					LateSends: 22, GeneratorLate: 22, LateAfterUS: 1000, RateMissed: true, AchievedRPS: result.Spread{Mean: 250}}}}
			var b bytes.Buffer
			if err := Table(&b, &result.Document{Schema: result.Schema, Shard: tc.shard, Runs: []result.Run{r}}); err != nil {
				t.Fatal(err)
			}
			out := strings.Join(strings.Fields(b.String()), " ") // the notes wrap
			if !strings.Contains(out, tc.must) || strings.Contains(out, tc.mustNot) {
				t.Errorf("want %q and not %q:\n%s", tc.must, tc.mustNot, b.String())
			}
		})
	}
}
