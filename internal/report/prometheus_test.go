package report

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/authzbench/authzbench/internal/result"
)

// The export must parse with Prometheus's own text parser (what a Pushgateway runs on a
// pushed body), end with "# EOF" as OpenMetrics requires, and carry each repetition's figures
// under the labels target, workload, load and repetition.
func TestPrometheusParsesAndCarriesTheRuns(t *testing.T) {
	for _, file := range []string{"quickstart-2026-11-23.json", "soak-opa-server-5000rps-2026-11-23.json", "capacity-risk-2026-11-23.json", "tls-no-reuse-2026-11-23.json"} {
		t.Run(file, func(t *testing.T) {
			doc := committedDoc(t, file)
			var out bytes.Buffer
			if err := Prometheus(&out, doc); err != nil {
				t.Fatal(err)
			}
			text := out.String()
			if !strings.HasSuffix(text, "\n# EOF\n") {
				t.Fatalf("does not end with # EOF: %q", text[max(0, len(text)-80):])
			}
			if strings.Count(text, "# EOF") != 1 {
				t.Errorf("# EOF %d times", strings.Count(text, "# EOF"))
			}
			p := expfmt.NewTextParser(model.UTF8Validation)
			fams, err := p.TextToMetricFamilies(strings.NewReader(text))
			if err != nil {
				t.Fatalf("expfmt: %v", err)
			}
			hist := fams["authzbench_latency_seconds"]
			if hist == nil || hist.GetType() != dto.MetricType_HISTOGRAM {
				t.Fatalf("no latency histogram: %v", hist)
			}
			// One histogram per repetition that has one, each counting exactly its ok responses,
			// its +Inf bucket holding them all; no two series with the same labels.
			type key struct{ target, workload, load, rep string }
			byKey := map[key]*dto.Histogram{}
			for _, m := range hist.Metric {
				l := labelsOf(m)
				k := key{l["target"], l["workload"], l["load"], l["repetition"]}
				if _, dup := byKey[k]; dup {
					t.Fatalf("two histograms labelled %v", k)
				}
				byKey[k] = m.GetHistogram()
			}
			want := 0
			seen := map[key]int{}
			for i := range doc.Runs {
				r := &doc.Runs[i]
				// A run that repeats another's target, workload and load is told apart by "#n".
				load := promLoad(r.Load)
				seen[key{r.Label(), r.Workload, load, ""}]++
				if n := seen[key{r.Label(), r.Workload, load, ""}]; n > 1 {
					load += " #" + strconv.Itoa(n)
				}
				for j, rep := range r.Repetitions {
					if rep.HDR == "" {
						continue
					}
					want++
					h := byKey[key{r.Label(), r.Workload, load, strconv.Itoa(j + 1)}]
					if h == nil {
						t.Fatalf("%s on %s repetition %d: no histogram", r.Workload, r.Label(), j+1)
					}
					if h.GetSampleCount() != rep.OK {
						t.Errorf("%s on %s repetition %d: count %d, want its ok responses %d", r.Workload, r.Label(), j+1, h.GetSampleCount(), rep.OK)
					}
					var prev uint64
					var p50 float64
					for _, b := range h.Bucket {
						if b.GetCumulativeCount() < prev {
							t.Fatalf("buckets not cumulative: %v", h.Bucket)
						}
						prev = b.GetCumulativeCount()
						if p50 == 0 && float64(prev) >= 0.5*float64(rep.OK) {
							p50 = b.GetUpperBound()
						}
					}
					// The bucket where half the responses are reached holds the repetition's P50.
					if math.IsInf(p50, 1) && rep.LatencyUS.P50/1e6 > latencyBucketsS[len(latencyBucketsS)-1] {
						continue // beyond the largest bound: only +Inf holds it
					}
					if rep.OK > 0 && (p50 < rep.LatencyUS.P50/1e6*0.99 || p50 > rep.LatencyUS.P50/1e6*5.01) {
						t.Errorf("%s on %s repetition %d: half reached at %gs, P50 %gµs", r.Workload, r.Label(), j+1, p50, rep.LatencyUS.P50)
					}
				}
			}
			if len(byKey) != want {
				t.Errorf("%d histograms, want %d", len(byKey), want)
			}
			// The merged percentiles and the run's throughput, under repetition "all".
			sum := fams["authzbench_latency_merged_seconds"]
			if sum == nil || sum.GetType() != dto.MetricType_SUMMARY {
				t.Fatalf("no merged summary")
			}
			r := doc.Runs[0]
			for _, m := range sum.Metric {
				if l := labelsOf(m); l["target"] == r.Label() && l["workload"] == r.Workload && l["load"] == promLoad(r.Load) && l["repetition"] == "all" {
					for _, q := range m.GetSummary().Quantile {
						if q.GetQuantile() == 0.99 && math.Abs(q.GetValue()-r.Summary.LatencyUS.P99/1e6) > 1e-12 {
							t.Errorf("merged p99 %g, want %g", q.GetValue(), r.Summary.LatencyUS.P99/1e6)
						}
					}
				}
			}
			if got := fams["authzbench_build_info"]; got == nil || labelsOf(got.Metric[0])["commit"] != doc.Env.Commit {
				t.Errorf("build info %v, want commit %s", got, doc.Env.Commit)
			}
			resp := fams["authzbench_responses"]
			var ok float64
			for _, m := range resp.Metric {
				if labelsOf(m)["class"] == "ok" {
					ok += m.GetGauge().GetValue()
				}
			}
			var wantOK uint64
			for _, r := range doc.Runs {
				for _, rep := range r.Repetitions {
					wantOK += rep.OK
				}
			}
			if ok != float64(wantOK) {
				t.Errorf("ok responses %g, want %d", ok, wantOK)
			}
		})
	}
}

// A document that could not be read back fails the export instead of writing a partial one.
func TestPrometheusRefusesABrokenHistogram(t *testing.T) {
	doc := &result.Document{Runs: []result.Run{{Target: "opa/server", Workload: "rbac",
		Repetitions: []result.Repetition{{OK: 1, HDR: "not a histogram"}}}}}
	var out bytes.Buffer
	err := Prometheus(&out, doc)
	if err == nil || !strings.Contains(err.Error(), "rbac on opa/server, repetition 1") {
		t.Errorf("err = %v, want one naming the run and repetition", err)
	}
}

func labelsOf(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.Label {
		l[p.GetName()] = p.GetValue()
	}
	return l
}
