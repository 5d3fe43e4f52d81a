package result

import (
	"math"
	"strings"
)

// Figure is what a comparison divides.
type Figure string

const (
	// Throughput is a run's ok responses per second over its base's: above 1 serves more.
	Throughput Figure = "throughput"
	// P50 is the base's median latency over the run's: above 1 answers faster than the base.
	P50 Figure = "p50"
)

// Method says how a comparison's interval was computed.
type Method string

const (
	// Paired: the runs' repetitions took turns (interleaved), so repetition i of each ran side
	// by side; the interval is Student's t on the logs of the per-turn ratios, exponentiated.
	Paired Method = "paired t on log ratios per turn"
	// Unpaired: the repetitions did not alternate; Welch's t on the difference of the mean logs.
	Unpaired Method = "Welch t on log figures"
	// NoInterval: fewer than two usable repetitions on a side; no difference can be called.
	NoInterval Method = "fewer than 2 repetitions: no interval"
)

// Comparison is one ratio the table shows, with its 95 % confidence interval.
type Comparison struct {
	Run        int    `json:"run"`      // index in runs
	BaseRun    int    `json:"base_run"` // the run it is compared with
	Workload   string `json:"workload"`
	Target     string `json:"target"`
	BaseTarget string `json:"base_target"`
	Figure     Figure `json:"figure"`
	// Ratio is the geometric mean of the per-repetition ratios with an interval, the ratio of
	// the summaries without one.
	Ratio  float64     `json:"ratio"`
	CI95   *[2]float64 `json:"ci95,omitempty"`
	N      int         `json:"n"` // pairs, or the smaller side's repetitions
	Method Method      `json:"method"`
	// Different is set only when the interval excludes 1: a difference is called.
	Different bool `json:"different"`
}

// EngineMode splits a target name: "cedar/server" is engine cedar in mode server. Targets that
// are no engine (http) are their own engine with no mode.
func EngineMode(target string) (engine, mode string) {
	engine, mode, _ = strings.Cut(target, "/")
	return engine, mode
}

// CrossEngine returns the engine the other engines are compared with (the first one run), or ""
// when the document holds fewer than two engines.
func CrossEngine(doc *Document) string {
	var first string
	for _, r := range doc.Runs {
		e, mode := EngineMode(r.Target)
		if mode == "" {
			continue
		}
		if first == "" {
			first = e
		} else if e != first {
			return first
		}
	}
	return ""
}

// Compare computes the table's ratios: each run's throughput against the first run of its
// workload, and, with two engines or more, each run's median latency against the first engine's
// in the same workload, deployment mode and load.
func Compare(doc *Document) []Comparison {
	var out []Comparison
	paired := doc.Order == "interleaved"
	first := map[string]int{}
	for i, r := range doc.Runs {
		if r.Summary.OK == 0 {
			continue
		}
		b, ok := first[r.Workload]
		if !ok {
			first[r.Workload] = i
			continue
		}
		base := doc.Runs[b]
		if base.Summary.ThroughputRPS.Mean <= 0 {
			continue
		}
		c := ratio(rpsOf(r), rpsOf(base), paired)
		if c.Method == NoInterval {
			c.Ratio = r.Summary.ThroughputRPS.Mean / base.Summary.ThroughputRPS.Mean
		}
		c.Run, c.BaseRun, c.Workload, c.Target, c.BaseTarget, c.Figure = i, b, r.Workload, r.Label(), base.Label(), Throughput
		out = append(out, c)
	}
	engine := CrossEngine(doc)
	if engine == "" {
		return out
	}
	type same struct {
		workload, mode string
		load           LoadKey
	}
	key := func(r Run) same {
		// The mode with what the label adds to the kind (its TLS mode, h2 or h2c): Cedar over
		// h2c is compared with OPA over h2c, not with OPA over HTTP/1.1.
		_, mode := EngineMode(r.Target)
		mode += strings.TrimPrefix(r.Label(), r.Target)
		return same{r.Workload, mode, r.Load.Key()}
	}
	// A run with wrong decisions is neither compared nor compared with: engines that decide
	// differently are not doing the same work, so their ratio would say nothing.
	bases := map[same]int{}
	for i, r := range doc.Runs {
		if e, _ := EngineMode(r.Target); e == engine && r.Summary.OK > 0 && r.Summary.WrongDecision == 0 {
			if _, seen := bases[key(r)]; !seen {
				bases[key(r)] = i
			}
		}
	}
	for i, r := range doc.Runs {
		b, ok := bases[key(r)]
		if !ok || b == i || r.Summary.OK == 0 || r.Summary.LatencyUS.P50 <= 0 || r.Summary.WrongDecision > 0 {
			continue
		}
		base := doc.Runs[b]
		// Latency the other way round, so that above 1 reads "faster than the base" as the
		// throughput ratio does.
		c := ratio(p50Of(base), p50Of(r), paired)
		if c.Method == NoInterval {
			c.Ratio = base.Summary.LatencyUS.P50 / r.Summary.LatencyUS.P50
		}
		c.Run, c.BaseRun, c.Workload, c.Target, c.BaseTarget, c.Figure = i, b, r.Workload, r.Label(), base.Label(), P50
		out = append(out, c)
	}
	return out
}

// perRep is one figure per repetition, with its turn; 0 where the repetition has none (cut
// short, or nothing served).
type perRep struct {
	values []float64
	turned bool // every repetition has a turn: it ran interleaved
}

func rpsOf(r Run) perRep { return figures(r, func(p Repetition) float64 { return p.ThroughputRPS }) }
func p50Of(r Run) perRep { return figures(r, func(p Repetition) float64 { return p.LatencyUS.P50 }) }

func figures(r Run, f func(Repetition) float64) perRep {
	p := perRep{turned: len(r.Repetitions) > 0}
	for _, rep := range r.Repetitions {
		v := 0.0
		if !rep.Partial && rep.ElapsedS > 0 && rep.OK > 0 {
			v = f(rep)
		}
		p.values = append(p.values, v)
		p.turned = p.turned && rep.Turn > 0
	}
	return p
}

// ratio compares num with den on a log scale, where a ratio's interval is symmetric.
func ratio(num, den perRep, interleaved bool) Comparison {
	if interleaved && num.turned && den.turned && len(num.values) == len(den.values) {
		var logs []float64
		for i := range num.values {
			if num.values[i] > 0 && den.values[i] > 0 {
				logs = append(logs, math.Log(num.values[i]/den.values[i]))
			}
		}
		if len(logs) >= 2 {
			s := SpreadOf(logs)
			return interval(s.Mean, s.CI95[0], s.CI95[1], len(logs), Paired)
		}
	}
	a, b := logsOf(num.values), logsOf(den.values)
	if len(a) < 2 || len(b) < 2 {
		return Comparison{N: min(len(a), len(b)), Method: NoInterval}
	}
	sa, sb := SpreadOf(a), SpreadOf(b)
	va, vb := sa.SD*sa.SD/float64(len(a)), sb.SD*sb.SD/float64(len(b))
	diff, se := sa.Mean-sb.Mean, math.Sqrt(va+vb)
	df := len(a) + len(b) - 2
	if va+vb > 0 { // Welch–Satterthwaite, rounded down: the wider interval
		df = int((va + vb) * (va + vb) / (va*va/float64(len(a)-1) + vb*vb/float64(len(b)-1)))
	}
	half := TQuantile975(max(df, 1)) * se
	return interval(diff, diff-half, diff+half, min(len(a), len(b)), Unpaired)
}

func logsOf(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if x > 0 {
			out = append(out, math.Log(x))
		}
	}
	return out
}

func interval(mean, lo, hi float64, n int, m Method) Comparison {
	ci := [2]float64{math.Exp(lo), math.Exp(hi)}
	return Comparison{Ratio: math.Exp(mean), CI95: &ci, N: n, Method: m, Different: ci[0] > 1 || ci[1] < 1}
}

// RepetitionFigures is one figure per repetition that ran to its end and served something, by
// the same rule as the ratios above: a repetition cut short or with nothing served gives none.
// Other comparisons (the compare command's tests across two documents) take their samples
// from it, so both say the same of which repetitions count.
func RepetitionFigures(r Run, f func(Repetition) float64) []float64 {
	var out []float64
	for _, v := range figures(r, f).values {
		if v > 0 {
			out = append(out, v)
		}
	}
	return out
}
