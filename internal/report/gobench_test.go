package report

import (
	"bytes"
	"encoding/csv"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/authzbench/authzbench/internal/result"
)

func committedDoc(t *testing.T, file string) *result.Document {
	t.Helper()
	doc, err := result.Read(filepath.Join("..", "..", "docs", "results", file))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// benchstat must read one result per repetition that served something, each named by its
// workload, target and load, with the repetition's own figures.
func TestGoBenchParsesWithBenchfmt(t *testing.T) {
	for _, file := range []string{"quickstart-2026-11-23.json", "rates-2026-11-23.json", "soak-opa-server-5000rps-2026-11-23.json"} {
		t.Run(file, func(t *testing.T) {
			doc := committedDoc(t, file)
			var out bytes.Buffer
			if err := GoBench(&out, doc); err != nil {
				t.Fatal(err)
			}
			type want struct {
				rep  result.Repetition
				name string
			}
			var wants []want
			for i := range doc.Runs {
				for _, rep := range doc.Runs[i].Repetitions {
					if rep.OK > 0 {
						wants = append(wants, want{rep, "workload=" + doc.Runs[i].Workload})
					}
				}
			}
			r := benchfmt.NewReader(bytes.NewReader(out.Bytes()), "out.txt")
			var got []*benchfmt.Result
			var units []*benchfmt.UnitMetadata
			for r.Scan() {
				switch rec := r.Result().(type) {
				case *benchfmt.Result:
					got = append(got, rec.Clone())
				case *benchfmt.UnitMetadata:
					units = append(units, rec)
				case *benchfmt.SyntaxError:
					t.Fatalf("benchfmt: %v\n%s", rec, out.String())
				}
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(wants) {
				t.Fatalf("%d benchmark results, want one per repetition that served something: %d\n%s", len(got), len(wants), out.String())
			}
			if len(units) != 1 || units[0].Unit != "req/s" || units[0].Key != "Better" || units[0].Value != "higher" {
				t.Errorf("unit metadata %+v, want req/s Better=higher", units)
			}
			for i, res := range got {
				w := wants[i]
				base, parts := res.Name.Parts()
				// The reader drops the "Benchmark" prefix.
				if string(base) != "Authz" || len(parts) != 4 || string(parts[0]) != "/"+w.name ||
					!strings.HasPrefix(string(parts[1]), "/target=") || !strings.HasPrefix(string(parts[2]), "/load=") ||
					!strings.HasPrefix(string(parts[3]), "-") {
					t.Fatalf("result %d: name %s parts %q", i, res.Name, parts)
				}
				if res.Iters != int(w.rep.OK) {
					t.Errorf("%s: iterations %d, want the ok responses %d", res.Name, res.Iters, w.rep.OK)
				}
				checks := map[string]float64{"ns/op": 1e9 / w.rep.ThroughputRPS, "req/s": w.rep.ThroughputRPS,
					"p50-ns": w.rep.LatencyUS.P50 * 1e3, "p99-ns": w.rep.LatencyUS.P99 * 1e3, "p99.9-ns": w.rep.LatencyUS.P999 * 1e3,
					"errors": float64(w.rep.Errors)}
				for unit, v := range checks {
					g, ok := value(res, unit)
					if !ok {
						t.Errorf("%s: no %s", res.Name, unit)
						continue
					}
					if math.Abs(g-v) > 0.01*v+0.001 {
						t.Errorf("%s: %s = %g, want %g", res.Name, unit, g, v)
					}
				}
				if cpu := res.GetConfig("cpu"); cpu != doc.Env.CPUModel {
					t.Errorf("%s: cpu config %q, want %q", res.Name, cpu, doc.Env.CPUModel)
				}
			}
		})
	}
}

func value(r *benchfmt.Result, unit string) (float64, bool) {
	for _, v := range r.Values {
		// benchfmt tidies units (ns/op becomes sec/op); the original is what was written.
		if v.OrigUnit == unit {
			return v.OrigValue, true
		}
		if v.OrigUnit == "" && v.Unit == unit {
			return v.Value, true
		}
	}
	return 0, false
}

// A target's "/" or a TLS label's space must not split a benchmark name.
func TestBenchNameKeepsOnePartPerKey(t *testing.T) {
	r := &result.Run{Target: "opa/server", Workload: "rbac", SUT: result.SUT{TLS: &result.TLS{Mode: "mtls"}},
		Load: result.Load{Model: result.OpenLoop, Rate: 2000, Connections: 64}, Scale: &result.Scale{Series: "s", Param: "rules", N: 100}}
	got := benchName(r, 2)
	if want := "BenchmarkAuthz/workload=rbac/target=opa:server_mtls/load=rate2000x64/rules=100-2"; got != want {
		t.Errorf("benchName = %q, want %q", got, want)
	}
	if _, parts := benchfmt.Name(got).Parts(); len(parts) != 5 {
		t.Errorf("parts %q, want 5", parts)
	}
}

// The CSV has one row per run, in the document's order, with the summary's figures unrounded.
func TestCSVOneRowPerRun(t *testing.T) {
	doc := committedDoc(t, "quickstart-2026-11-23.json")
	var out bytes.Buffer
	if err := CSV(&out, doc); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(doc.Runs)+1 {
		t.Fatalf("%d records, want a header and %d runs", len(recs), len(doc.Runs))
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for i, run := range doc.Runs {
		rec := recs[i+1]
		if rec[col["workload"]] != run.Workload || rec[col["target"]] != run.Target {
			t.Errorf("row %d: %s on %s, want %s on %s", i, rec[col["workload"]], rec[col["target"]], run.Workload, run.Target)
		}
		p99, err := strconv.ParseFloat(rec[col["p99_us"]], 64)
		if err != nil || p99 != run.Summary.LatencyUS.P99 {
			t.Errorf("row %d: p99_us %q, want %g", i, rec[col["p99_us"]], run.Summary.LatencyUS.P99)
		}
		rps, _ := strconv.ParseFloat(rec[col["rps_mean"]], 64)
		if rps != run.Summary.ThroughputRPS.Mean {
			t.Errorf("row %d: rps_mean %g, want %g", i, rps, run.Summary.ThroughputRPS.Mean)
		}
		if (run.SUTResources != nil) != (rec[col["sut_cpu_cores_mean"]] != "") {
			t.Errorf("row %d: sut cpu %q, resources %v", i, rec[col["sut_cpu_cores_mean"]], run.SUTResources)
		}
	}
	// Several files: one table, each row naming its file.
	var two bytes.Buffer
	if err := csvSeveral(&two, []string{"a.json", "b.json"}, []*result.Document{doc, doc}); err != nil {
		t.Fatal(err)
	}
	recs, err = csv.NewReader(&two).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2*len(doc.Runs)+1 || recs[0][0] != "file" || recs[1][0] != "a.json" || recs[len(recs)-1][0] != "b.json" {
		t.Errorf("several: %d records, first column %q, %q, %q", len(recs), recs[0][0], recs[1][0], recs[len(recs)-1][0])
	}
}
