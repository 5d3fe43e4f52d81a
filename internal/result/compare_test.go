package result

import (
	"math"
	"testing"
)

// runOf is a closed-loop run with one repetition per throughput, in turns first, first+step, …
func runOf(target string, first, step int, rps ...float64) Run {
	r := Run{Target: target, Workload: "rbac", Load: Load{Model: ClosedLoop, Workers: 4}}
	for i, v := range rps {
		r.Repetitions = append(r.Repetitions, Repetition{OK: 100, ElapsedS: 1, ThroughputRPS: v, Turn: first + i*step,
			LatencyUS: Percentiles{P50: 1e6 / v}})
	}
	var sum float64
	for _, v := range rps {
		sum += v
	}
	r.Summary = Summary{OK: 100, ThroughputRPS: Spread{Mean: sum / float64(len(rps)), N: len(rps)},
		LatencyUS: Percentiles{P50: 1e6 / (sum / float64(len(rps)))}}
	return r
}

func TestCompare(t *testing.T) {
	// The machine drifts between repetitions (100, 200, 150 req/s); opa/server is 10 % faster
	// than opa/cli in every turn.
	drifting := []float64{100, 200, 150}
	faster := []float64{110, 220, 165}
	same := []float64{101, 198, 152}
	for _, tc := range []struct {
		name      string
		order     string
		a, b      Run
		method    Method
		ratio     float64
		different bool
	}{
		{"interleaved turns pair, and the drift cancels", "interleaved",
			runOf("opa/cli", 1, 2, drifting...), runOf("opa/server", 2, 2, faster...), Paired, 1.1, true},
		{"interleaved, no difference called within the noise", "interleaved",
			runOf("opa/cli", 1, 2, drifting...), runOf("opa/server", 2, 2, same...), Paired, 1.0, false},
		{"sequential repetitions do not pair: the drift hides the difference", "sequential",
			runOf("opa/cli", 1, 1, drifting...), runOf("opa/server", 4, 1, faster...), Unpaired, 1.1, false},
		{"one repetition: no interval, no call", "interleaved",
			runOf("opa/cli", 1, 2, 100), runOf("opa/server", 2, 2, 300), NoInterval, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := &Document{Order: tc.order, Runs: []Run{tc.a, tc.b}}
			cs := Compare(doc)
			if len(cs) != 1 {
				t.Fatalf("%d comparisons, want 1 (one engine: no cross-engine ones): %+v", len(cs), cs)
			}
			c := cs[0]
			if c.Run != 1 || c.BaseRun != 0 || c.Figure != Throughput || c.Method != tc.method || c.Different != tc.different ||
				math.Abs(c.Ratio-tc.ratio) > 0.011 {
				t.Errorf("got %+v; want ratio %.2f by %q, different %t", c, tc.ratio, tc.method, tc.different)
			}
			if (c.CI95 == nil) != (tc.method == NoInterval) {
				t.Errorf("ci95 %v with method %q", c.CI95, c.Method)
			}
			if c.CI95 != nil && (c.CI95[0] > c.Ratio || c.CI95[1] < c.Ratio || c.Different != (c.CI95[0] > 1 || c.CI95[1] < 1)) {
				t.Errorf("ratio %.3f, interval %v, different %t", c.Ratio, *c.CI95, c.Different)
			}
		})
	}
}

// With two engines, each mode's Cedar run is compared with OPA's by median latency, base over
// row, paired by turn.
func TestCompareAcrossEngines(t *testing.T) {
	doc := &Document{Order: "interleaved", Runs: []Run{
		runOf("opa/server", 1, 2, 100, 200, 150),
		runOf("cedar/server", 2, 2, 200, 400, 300),
	}}
	var cross *Comparison
	for _, c := range Compare(doc) {
		if c.Figure == P50 {
			cross = &c
		}
	}
	if cross == nil || cross.Run != 1 || cross.BaseRun != 0 || cross.Method != Paired || !cross.Different || math.Abs(cross.Ratio-2) > 1e-9 {
		t.Errorf("cross-engine comparison %+v; want cedar/server 2× opa/server's P50 speed, called", cross)
	}
}

// Across engines, a run is compared with the first engine's run over the same protocol: Cedar
// over h2c with OPA over h2c, Cedar over HTTP/1.1 with OPA over HTTP/1.1, and Cedar over TLS
// with h2 with nothing, when OPA did not run so.
func TestCompareAcrossEnginesSameProtocol(t *testing.T) {
	opa, opaH2C := runOf("opa/server", 1, 4, 100, 100), runOf("opa/server", 2, 4, 50, 50)
	opaH2C.SUT.HTTP2 = true
	cedar, cedarH2C := runOf("cedar/server", 3, 4, 200, 200), runOf("cedar/server", 4, 4, 150, 150)
	cedarH2C.SUT.HTTP2 = true
	cedarTLSH2 := runOf("cedar/server", 5, 4, 120, 120)
	cedarTLSH2.SUT.HTTP2, cedarTLSH2.SUT.TLS = true, &TLS{Mode: "tls"}
	doc := &Document{Order: "interleaved", Runs: []Run{opa, opaH2C, cedar, cedarH2C, cedarTLSH2}}
	bases := map[int]int{}
	for _, c := range Compare(doc) {
		if c.Figure == P50 {
			bases[c.Run] = c.BaseRun
		}
	}
	want := map[int]int{2: 0, 3: 1}
	if len(bases) != len(want) || bases[2] != 0 || bases[3] != 1 {
		t.Errorf("P50 compared run→base %v, want %v (cedar/server tls h2 with none)", bases, want)
	}
}
