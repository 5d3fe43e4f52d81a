// Package compare sets two result documents side by side, a base and a new one, run for run:
// the change in throughput and latency percentiles of every run both measured, with a test
// across repetitions that says whether the change stands out of the noise, and a gate (gate.go)
// that fails a CI job on a significant regression, or on anything it cannot judge.
//
// It is not for comparing targets within one document (result.Compare does, with ratios and
// their intervals) nor for rendering one document (package report). It reads result documents
// only, so a kept result file can always be compared again.
package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/authzbench/authzbench/internal/report"
	"github.com/authzbench/authzbench/internal/result"
)

// Figure is one figure of a run that compare sets side by side.
type Figure string

const (
	Throughput Figure = "throughput" // ok responses per second
	P50        Figure = "p50"
	P90        Figure = "p90"
	P99        Figure = "p99"
	P999       Figure = "p999"
	Mean       Figure = "mean" // mean latency
)

// Figures are every figure compare knows, in the order a report shows them.
var Figures = []Figure{Throughput, P50, P90, P99, P999, Mean}

// Shown are the figures a report shows by default; a gate adds the ones it names.
var Shown = []Figure{Throughput, P50, P99, P999}

// ParseFigure reads a figure's name as a user writes it.
func ParseFigure(s string) (Figure, error) {
	for _, f := range Figures {
		if strings.EqualFold(s, string(f)) {
			return f, nil
		}
	}
	names := make([]string, len(Figures))
	for i, f := range Figures {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown figure %q; known: %s", s, strings.Join(names, ", "))
}

// HigherIsBetter is true of throughput; for latencies lower is better.
func (f Figure) HigherIsBetter() bool { return f == Throughput }

// Title is the figure as a table's column names it.
func (f Figure) Title() string {
	switch f {
	case Throughput:
		return "req/s"
	case P999:
		return "P99.9"
	case Mean:
		return "mean"
	}
	return strings.ToUpper(string(f))
}

// ofSummary is the run's figure over all its repetitions: throughput's mean, and the latency
// percentiles of the merged histogram (never an average of percentiles).
func (f Figure) ofSummary(r *result.Run) float64 {
	if f == Throughput {
		return r.Summary.ThroughputRPS.Mean
	}
	return f.ofPercentiles(r.Summary.LatencyUS)
}

// thin reports whether few ok responses lie beyond the percentile; unknown (files written
// before the counts were kept) is not thin.
func (f Figure) thin(b *result.Beyond) bool {
	if b == nil {
		return false
	}
	beyond := map[Figure]int64{P50: b.P50, P90: b.P90, P99: b.P99, P999: b.P999}
	n, ok := beyond[f]
	return ok && n < result.FewBeyond
}

// ofRepetition is the figure of one repetition: one sample of the test.
func (f Figure) ofRepetition(p result.Repetition) float64 {
	if f == Throughput {
		return p.ThroughputRPS
	}
	return f.ofPercentiles(p.LatencyUS)
}

func (f Figure) ofPercentiles(p result.Percentiles) float64 {
	switch f {
	case P50:
		return p.P50
	case P90:
		return p.P90
	case P99:
		return p.P99
	case P999:
		return p.P999
	case Mean:
		return p.Mean
	}
	return 0
}

// Test names the significance test, as the output says it.
const Test = "Mann-Whitney U over per-repetition figures, two-sided"

// DefaultAlpha is the level below which a change is called: 5 %.
const DefaultAlpha = 0.05

// Options set how runs are matched and tested.
type Options struct {
	// Alpha is the test's level; 0 means DefaultAlpha.
	Alpha float64
	// IgnoreWorkload and IgnoreTarget match runs whatever their workload or target: authzbench
	// ab compares two policies (or two targets) on purpose, everything else alike.
	IgnoreWorkload, IgnoreTarget bool
}

// Result is two documents compared.
type Result struct {
	Base  Side    `json:"base"`
	New   Side    `json:"new"`
	Test  string  `json:"test"`
	Alpha float64 `json:"alpha"`
	Rows  []Row   `json:"rows"`
	// Warnings say where the two documents were not measured alike (machine, pinning, engine
	// versions, GOMAXPROCS), or were cut short: a change may be the setup's, not the code's.
	Warnings []string `json:"warnings,omitempty"`
}

// Side says which document a side of the comparison is.
type Side struct {
	Name    string `json:"name"` // the file it was read from
	Commit  string `json:"commit,omitempty"`
	Created string `json:"created,omitempty"`
}

// Row is one run of the base matched with one of the new document: same workload, target
// (with its TLS mode and HTTP/2) and load. A run only one side has is a row too, Missing
// saying which side lacks it.
type Row struct {
	Workload string `json:"workload"`
	Target   string `json:"target"`
	Load     string `json:"load"`
	// Missing is "base" or "new" for a run the other side has alone.
	Missing string `json:"missing,omitempty"`
	// Problem says why the row cannot be judged at all: missing on a side, or no ok response
	// on a side. The gate fails on it.
	Problem string `json:"problem,omitempty"`
	// WrongDecisions counts the new side's wrong decisions: a faster wrong answer is no pass.
	WrongDecisions uint64 `json:"wrong_decisions,omitempty"`
	Cells          []Cell `json:"figures,omitempty"`

	base, new *result.Run
}

// Name is the row as a message names it: "rbac opa/server 8 workers".
func (r Row) Name() string { return r.Workload + " " + r.Target + " " + r.Load }

// Cell returns the row's cell for a figure; nil when the row has no figures.
func (r Row) Cell(f Figure) *Cell {
	for i := range r.Cells {
		if r.Cells[i].Figure == f {
			return &r.Cells[i]
		}
	}
	return nil
}

// Cell is one figure of a row on both sides.
type Cell struct {
	Figure Figure  `json:"figure"`
	Base   float64 `json:"base"`
	New    float64 `json:"new"`
	// Change is new over base, minus one: +0.10 is 10 % more.
	Change float64 `json:"change"`
	// P is the test's p-value over the usable repetitions of each side (NBase and NNew); with
	// Untestable set, no test was possible and P is 1.
	P     float64 `json:"p"`
	NBase int     `json:"n_base"`
	NNew  int     `json:"n_new"`
	// Significant: P is at or below the level; otherwise the change is within the noise (~).
	Significant bool `json:"significant"`
	// Untestable says why the repetitions cannot show a change at the level, whatever they
	// hold: too few of them, or none with samples.
	Untestable string `json:"untestable,omitempty"`
	// Thin: on some side, fewer than result.FewBeyond ok responses lie beyond this percentile,
	// so it is close to the slowest few and moves with them.
	Thin bool `json:"thin,omitempty"`
}

// Worse is a significant change in the bad direction: slower, or less served.
func (c Cell) Worse() bool {
	if !c.Significant {
		return false
	}
	if c.Figure.HigherIsBetter() {
		return c.Change < 0
	}
	return c.Change > 0
}

// key is what two runs must share to be one row.
type key struct {
	workload, target string
	http2            bool
	load             result.LoadKey
}

func keyOf(r *result.Run, o Options) key {
	k := key{workload: r.Workload, target: r.Label(), http2: r.SUT.HTTP2, load: r.Load.Key()}
	if o.IgnoreWorkload {
		k.workload = ""
	}
	if o.IgnoreTarget {
		k.target = ""
	}
	return k
}

// Compare matches the runs of base and new and compares each pair's figures. Runs match by
// workload, target (its TLS mode and HTTP/2 included) and load (its schedule's key and, in open
// loop, connections); the k-th run of a key on one side with the k-th on the other.
func Compare(baseName string, base *result.Document, newName string, new *result.Document, o Options) *Result {
	if o.Alpha <= 0 {
		o.Alpha = DefaultAlpha
	}
	res := &Result{Base: sideOf(baseName, base), New: sideOf(newName, new), Test: Test, Alpha: o.Alpha}
	unmatched := map[key][]int{} // new runs by key, in order, not yet matched
	for i := range new.Runs {
		k := keyOf(&new.Runs[i], o)
		unmatched[k] = append(unmatched[k], i)
	}
	matched := make([]bool, len(new.Runs))
	for i := range base.Runs {
		b := &base.Runs[i]
		k := keyOf(b, o)
		if queue := unmatched[k]; len(queue) > 0 {
			unmatched[k] = queue[1:]
			matched[queue[0]] = true
			res.Rows = append(res.Rows, compareRuns(b, &new.Runs[queue[0]], o.Alpha))
			continue
		}
		row := identify(b, nil)
		row.Missing, row.Problem = "new", "only in the base: the new result has no such run"
		res.Rows = append(res.Rows, row)
	}
	for i := range new.Runs {
		if !matched[i] {
			row := identify(nil, &new.Runs[i])
			row.Missing, row.Problem = "base", "only in the new result: the base has no such run"
			res.Rows = append(res.Rows, row)
		}
	}
	res.Warnings = environmentWarnings(base, new, res.Rows)
	return res
}

func sideOf(name string, d *result.Document) Side {
	s := Side{Name: name, Commit: d.Env.Commit}
	if hash, dirty, _ := strings.Cut(s.Commit, "-"); len(hash) > 12 && !strings.Contains(hash, " ") {
		s.Commit = hash[:12] + strings.TrimSuffix("-"+dirty, "-")
	}
	if !d.Created.IsZero() {
		s.Created = d.Created.UTC().Format("2006-01-02 15:04 UTC")
	}
	return s
}

// identify names a row after its runs; where the sides differ on purpose (ab), "a → b".
func identify(base, new *result.Run) Row {
	name := func(r *result.Run) (workload, target, load string) {
		target = r.Label()
		return r.Workload, target, report.LoadLabel(r.Load)
	}
	var row Row
	switch {
	case base == nil:
		row.Workload, row.Target, row.Load = name(new)
	case new == nil:
		row.Workload, row.Target, row.Load = name(base)
	default:
		bw, bt, bl := name(base)
		nw, nt, _ := name(new)
		row.Workload, row.Target, row.Load = joinSides(bw, nw), joinSides(bt, nt), bl
	}
	row.base, row.new = base, new
	return row
}

func joinSides(a, b string) string {
	if a == b {
		return a
	}
	return a + " → " + b
}

func compareRuns(base, new *result.Run, alpha float64) Row {
	row := identify(base, new)
	row.WrongDecisions = new.Summary.WrongDecision
	switch {
	case base.Summary.OK == 0 || new.Summary.OK == 0:
		var empty []string
		for _, s := range []struct {
			side string
			r    *result.Run
		}{{"base", base}, {"new", new}} {
			if s.r.Summary.OK == 0 {
				why := "0 ok responses"
				if s.r.Error != "" {
					why += " (" + s.r.Error + ")"
				}
				empty = append(empty, s.side+": "+why)
			}
		}
		row.Problem = "no samples to compare: " + strings.Join(empty, "; ")
		return row
	}
	thresholds := benchmath.DefaultThresholds
	thresholds.CompareAlpha = alpha
	for _, f := range Figures {
		c := Cell{Figure: f, Base: f.ofSummary(base), New: f.ofSummary(new), P: 1}
		if c.Base > 0 {
			c.Change = c.New/c.Base - 1
		}
		bs := result.RepetitionFigures(*base, f.ofRepetition)
		ns := result.RepetitionFigures(*new, f.ofRepetition)
		c.NBase, c.NNew = len(bs), len(ns)
		c.Thin = f.thin(base.Summary.LatencyBeyond) || f.thin(new.Summary.LatencyBeyond)
		if why := untestable(c.NBase, c.NNew, alpha); why != "" {
			c.Untestable = why
		} else {
			cmp := benchmath.AssumeNothing.Compare(benchmath.NewSample(bs, &thresholds), benchmath.NewSample(ns, &thresholds))
			c.P = cmp.P
			c.Significant = cmp.P <= alpha
		}
		row.Cells = append(row.Cells, c)
	}
	return row
}

// untestable says why n1 and n2 repetitions cannot show a difference at level alpha, however
// far apart they lie: the smallest p-value of the two-sided Mann-Whitney U test is
// 2 / C(n1+n2, n1), reached when every value of one side lies beyond every value of the other.
// Three repetitions a side give 0.1 at best, so 5 % needs four each.
func untestable(n1, n2 int, alpha float64) string {
	if n1 == 0 || n2 == 0 {
		return fmt.Sprintf("no repetition with samples (base %d, new %d)", n1, n2)
	}
	if minP := minUTestP(n1, n2); minP > alpha {
		need := 1
		for minUTestP(need, need) > alpha {
			need++
		}
		return fmt.Sprintf("too few repetitions (base %d, new %d): the test cannot go below p=%.3f; %d a side can reach %g",
			n1, n2, minP, need, alpha)
	}
	return ""
}

func minUTestP(n1, n2 int) float64 {
	// C(n1+n2, n1) in floating point: exact enough, and never overflows for real repetition
	// counts.
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// environmentWarnings names what differs between the two documents' setups, and what was cut
// short: a change may come from them rather than from what the user changed.
func environmentWarnings(base, new *result.Document, rows []Row) []string {
	var out []string
	differ := func(what string, a, b any) {
		if a != b {
			out = append(out, fmt.Sprintf("%s differs: base %v, new %v", what, show(a), show(b)))
		}
	}
	be, ne := base.Env, new.Env
	differ("CPU model", be.CPUModel, ne.CPUModel)
	differ("cores", be.Cores, ne.Cores)
	differ("GOMAXPROCS", be.GOMAXPROCS, ne.GOMAXPROCS)
	differ("pinning", be.Pinning, ne.Pinning)
	differ("OS/arch", be.OS+"/"+be.Arch, ne.OS+"/"+ne.Arch)
	differ("Go", be.Go, ne.Go)
	// Every engine either side linked, one linked on one side only among them.
	labels := map[string]string{}
	var names []string
	for _, v := range slices.Concat(be.EngineVersions(), ne.EngineVersions()) {
		if _, seen := labels[v.Name]; !seen {
			labels[v.Name] = v.Label
			names = append(names, v.Name)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		differ(labels[n]+" (linked)", be.EngineVersion(n), ne.EngineVersion(n))
	}
	for _, d := range []struct {
		side string
		doc  *result.Document
	}{{"base", base}, {"new", new}} {
		if d.doc.Interrupted {
			why := ""
			if d.doc.StopReason != "" {
				why = ": " + d.doc.StopReason
			}
			out = append(out, fmt.Sprintf("the %s result was interrupted%s", d.side, why))
		}
	}
	for _, r := range rows {
		if r.base == nil || r.new == nil {
			continue
		}
		differ(r.Name()+": engine version", r.base.SUT.Version, r.new.SUT.Version)
		differ(r.Name()+": generator GOMAXPROCS", r.base.Load.GeneratorProcs, r.new.Load.GeneratorProcs)
		differ(r.Name()+": pinning", r.base.Pinning, r.new.Pinning)
		differ(r.Name()+": duration (s)", r.base.Load.DurationS, r.new.Load.DurationS)
		// A cache answers repeated checks without the work; how often inputs repeat sets how often.
		if r.base.SUT.Caches != nil && r.new.SUT.Caches != nil {
			differ(r.Name()+": caches on", cmp.Or(result.CachesOn(r.base.SUT.Caches), "none"), cmp.Or(result.CachesOn(r.new.SUT.Caches), "none"))
		}
		differ(r.Name()+": input skew", cmp.Or(r.base.Load.InputSkew, "cycle"), cmp.Or(r.new.Load.InputSkew, "cycle"))
		if bo, no := r.base.Summary.Open, r.new.Summary.Open; bo != nil && no != nil {
			// The engines keep one schedule by different means (lateness differs by design).
			differ(r.Name()+": open-loop sender", bo.Sender, no.Sender)
			differ(r.Name()+": coalesce (µs)", r.base.Load.CoalesceUS, r.new.Load.CoalesceUS)
		}
		if r.base.Partial || r.new.Partial {
			out = append(out, r.Name()+": a side was cut short (partial); its cut repetitions are left out of the test")
		}
		for _, side := range []struct {
			name string
			r    *result.Run
		}{{"base", r.base}, {"new", r.new}} {
			s := side.r.Summary
			if s.Errors > 0 {
				out = append(out, fmt.Sprintf("%s: %d of the %s side's %d responses were not served decisions; its figures are over the ok ones only",
					r.Name(), s.Errors, side.name, s.Requests))
			}
			if s.Open != nil && s.Open.RateMissed {
				out = append(out, fmt.Sprintf("%s: the %s side missed its rate: the server did not see the load asked for", r.Name(), side.name))
			}
		}
	}
	return out
}

func show(v any) string {
	if s, ok := v.(string); ok && s == "" {
		return "(not recorded)"
	}
	return fmt.Sprint(v)
}
