package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/authzbench/authzbench/internal/result"
)

// findings say what a document shows, a line each, before its table: what a reader came for,
// computed from the document alone and from what it already holds (the growth and USL fits, the
// comparisons), never from a new fit. A scaling sweep says how each series grows; a rate matrix
// where each target saturates; a worker sweep where its USL fit peaks (or, without a fit,
// where req/s stops growing); a cross-engine run the ratios whose intervals exclude 1. Each kind the document holds adds its lines; a document of
// none of them has no findings, and the table speaks for itself.
func findings(doc *result.Document, v *View, comparisons []result.Comparison) []string {
	var out []string
	out = append(out, growthFindings(doc)...)
	out = append(out, saturationFindings(doc)...)
	out = append(out, uslFindings(doc)...)
	out = append(out, plateauFindings(doc)...)
	out = append(out, comparisonFindings(doc, v, comparisons)...)
	out = append(out, cacheFindings(doc)...)
	return out
}

// cacheFindings say, for each workload measured on engines with caches (OpenFGA, SpiceDB) of
// which some ran with a cache on and some with none, that their comparison is partly one of
// caches: an engine that answers from a cache skips the work another does on every check, never
// silently. Engines that both cached are compared cache against cache (their notes say each
// one's hit ratio).
func cacheFindings(doc *result.Document) []string {
	type side struct{ target, on, ratio string }
	var workloads []string
	by := map[string][]side{}
	for i := range doc.Runs {
		r := &doc.Runs[i]
		if r.SUT.Caches == nil {
			continue
		}
		on, ratio := result.CachesOn(r.SUT.Caches), ""
		for _, c := range r.SUT.Caches {
			if x, ok := c.HitRatio(); ok && c.On {
				ratio += fmt.Sprintf(", %s hit %.0f %%", c.Name, 100*x)
			}
		}
		if by[r.Workload] == nil {
			workloads = append(workloads, r.Workload)
		}
		by[r.Workload] = append(by[r.Workload], side{r.Label(), on, ratio})
	}
	var out []string
	for _, w := range workloads {
		sides, engines, ons := by[w], map[string]bool{}, map[bool]bool{}
		for _, s := range sides {
			e, _ := result.EngineMode(s.target)
			engines[e], ons[s.on != ""] = true, true
		}
		if len(engines) < 2 || len(ons) < 2 {
			continue
		}
		var parts []string
		seen := map[string]bool{}
		for _, s := range sides {
			on := "no cache"
			if s.on != "" {
				on = s.on + " on"
			}
			p := s.target + " with " + on + s.ratio
			if !seen[p] {
				seen[p] = true
				parts = append(parts, p)
			}
		}
		out = append(out, fmt.Sprintf("%s: the engines ran with different caches (%s): their latencies differ by their caches as well as by the engines",
			w, strings.Join(parts, "; ")))
	}
	return out
}

// growthFindings say, a line per series and target, how P50 grows with N (the model the fit
// chose, its slope in the series' unit), and P99 beside it: the fits in full are in the notes.
func growthFindings(doc *result.Document) []string {
	type key struct{ series, target string }
	var order []key
	by := map[key]map[string]result.GrowthFit{}
	for _, g := range doc.Growth {
		k := key{g.Series, g.Target}
		if by[k] == nil {
			by[k] = map[string]result.GrowthFit{}
			order = append(order, k)
		}
		by[k][g.Percentile] = g
	}
	var out []string
	for _, k := range order {
		var parts []string
		for _, p := range []string{"p50", "p99"} {
			if g, ok := by[k][p]; ok {
				parts = append(parts, strings.ToUpper(p)+" "+growthPhrase(g))
			}
		}
		if len(parts) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s on %s: %s", strings.ReplaceAll(k.series, "/", " "), k.target, strings.Join(parts, "; ")))
	}
	return out
}

// growthPhrase is one fit in a phrase: "linear, +0.784 µs per rule (2.44 µs at 10 → 7,655 µs at
// 10000)", "flat at 14.3 µs".
func growthPhrase(g result.GrowthFit) string {
	first, last := g.Points[0], g.Points[len(g.Points)-1]
	span := fmt.Sprintf("(%s at %d → %s at %d)", Duration(first.LatencyUS), first.N, Duration(last.LatencyUS), last.N)
	sign := "+"
	if g.Slope < 0 {
		sign = "−"
	}
	switch g.Model {
	case result.Linear:
		per, scale := "per "+strings.TrimSuffix(g.Param, "s"), 1.0
		if s := math.Abs(g.Slope); s > 0 && s < 0.01 {
			per, scale = "per 1000 "+g.Param, 1000
		}
		return fmt.Sprintf("linear, %s%s %s %s", sign, Duration(math.Abs(g.Slope)*scale), per, span)
	case result.Logarithmic:
		return fmt.Sprintf("logarithmic, %s%s per doubling %s", sign, Duration(math.Abs(g.Slope)*math.Ln2), span)
	}
	return "flat at " + Duration(g.Intercept)
}

// saturation is one workload and target run at several open-loop rates: the highest rate it
// held, and the first it did not with why (nil when it held every rate).
type saturation struct {
	workload, target string
	runs             []*result.Run // by rate
	held, broke      *result.Run
	why              string
	// tail is the first held rate whose P99 is over ten times its lowest-rate value.
	tail *result.Run
	// generatorLate is the first rate the generator itself could not keep (short of CPU, a
	// connection free): the server did not fall behind there, but the load was not exact.
	generatorLate *result.Run
}

// saturations find, for each workload and target run at several open-loop rates, the first
// rate it did not hold: sends went unsent, a response was not a served decision, less than 95 %
// of the rate asked was served, or the median waited in a queue (P50 more than ten times its
// value at the lowest rate). A tail that grows while the median holds is said apart (tail), and
// so is a rate missed only because the generator itself was late: the load machine's limit,
// not the server's (generatorLate).
func saturations(doc *result.Document) []saturation {
	type key struct{ workload, target string }
	var order []key
	by := map[key][]*result.Run{}
	for i := range doc.Runs {
		r := &doc.Runs[i]
		// A series of constant rates: a schedule whose rate changes (stages, a capacity ramp,
		// a replay) has no one rate to stand on the axis.
		if _, ok := r.Load.Schedule().Rate(); !ok || r.Scale != nil {
			continue
		}
		k := key{r.Workload, r.Label()}
		if by[k] == nil {
			order = append(order, k)
		}
		by[k] = append(by[k], r)
	}
	var out []saturation
	for _, k := range order {
		runs := by[k]
		if len(runs) < 2 {
			continue
		}
		sort.SliceStable(runs, func(i, j int) bool { return rateOf(runs[i]) < rateOf(runs[j]) })
		sat := saturation{workload: k.workload, target: k.target, runs: runs}
		base := runs[0].Summary.LatencyUS
		for _, r := range runs {
			s, o := r.Summary, r.Summary.Open
			served := s.ThroughputRPS.Mean
			if o != nil && o.AchievedRPS.Mean > 0 {
				served = o.AchievedRPS.Mean
			}
			switch {
			case o != nil && o.Unsent > 0:
				sat.why = fmt.Sprintf("%d sends never went out", o.Unsent)
			case s.Errors > 0:
				sat.why = fmt.Sprintf("%d errors", s.Errors)
			case s.OK == 0:
				sat.why = "nothing served"
			case base.P50 > 0 && s.LatencyUS.P50 > 10*base.P50:
				sat.why = fmt.Sprintf("P50 %s: the median waits in a queue", Duration(s.LatencyUS.P50))
			case served < 0.95*rateOf(r):
				sat.why = fmt.Sprintf("%s/s served", Thousands(served))
			}
			if sat.why != "" {
				sat.broke = r
				break
			}
			sat.held = r
			if sat.tail == nil && base.P99 > 0 && s.LatencyUS.P99 > 10*base.P99 {
				sat.tail = r
			}
			if o != nil && o.RateMissed && sat.generatorLate == nil && o.GeneratorLate*100 > o.Intended {
				sat.generatorLate = r
			}
		}
		out = append(out, sat)
	}
	return out
}

// rateOf is the one rate a run's schedule held; 0 for a schedule of no one rate.
func rateOf(r *result.Run) float64 {
	rate, _ := r.Load.Schedule().Rate()
	return rate
}

// saturationFindings say where each target of a rate matrix saturates, or that it held every
// rate, with how far P99 moved.
func saturationFindings(doc *result.Document) []string {
	var out []string
	for _, sat := range saturations(doc) {
		head := fmt.Sprintf("%s on %s", sat.workload, sat.target)
		first, last := sat.runs[0], sat.runs[len(sat.runs)-1]
		var line string
		switch {
		case sat.broke == nil:
			line = fmt.Sprintf("%s: held every rate up to %s/s (P50 %s → %s, P99 %s → %s)", head, Thousands(rateOf(last)),
				Duration(first.Summary.LatencyUS.P50), Duration(last.Summary.LatencyUS.P50),
				Duration(first.Summary.LatencyUS.P99), Duration(last.Summary.LatencyUS.P99))
		case sat.held == nil:
			line = fmt.Sprintf("%s: saturated at the lowest rate, %s/s (%s)", head, Thousands(rateOf(sat.broke)), sat.why)
		default:
			line = fmt.Sprintf("%s: saturates between %s/s (held, P50 %s) and %s/s (%s)", head, Thousands(rateOf(sat.held)),
				Duration(sat.held.Summary.LatencyUS.P50), Thousands(rateOf(sat.broke)), sat.why)
		}
		if t := sat.tail; t != nil {
			line += fmt.Sprintf("; P99 above ten times its lowest-rate value from %s/s (%s)", Thousands(rateOf(t)), Duration(t.Summary.LatencyUS.P99))
		}
		if g := sat.generatorLate; g != nil {
			line += fmt.Sprintf("; from %s/s the generator itself was late for over 1 %% of the sends (RATE MISSED, short of CPU)", Thousands(rateOf(g)))
		}
		out = append(out, line)
	}
	return out
}

// plateau is a closed-loop worker sweep of one workload and target without a USL fit: the
// first worker count past which req/s grew by less than a tenth (the knee), if any.
type plateau struct {
	workload, target string
	knee, next       *result.Run
}

// plateaus find the knee of each worker sweep the document's USL fits do not cover: more
// workers past it only queue.
func plateaus(doc *result.Document) []plateau {
	fitted := map[[2]string]bool{}
	for _, f := range doc.Scalability {
		if f.Param == "workers" {
			fitted[[2]string{f.Workload, f.Target}] = true
		}
	}
	var order [][2]string
	by := map[[2]string][]*result.Run{}
	for i := range doc.Runs {
		r := &doc.Runs[i]
		if r.Load.Model == result.OpenLoop || r.Scale != nil || r.Summary.OK == 0 {
			continue
		}
		k := [2]string{r.Workload, r.Label()}
		if by[k] == nil {
			order = append(order, k)
		}
		by[k] = append(by[k], r)
	}
	var out []plateau
	for _, k := range order {
		runs := by[k]
		if len(runs) < 3 || fitted[k] {
			continue
		}
		sort.SliceStable(runs, func(i, j int) bool { return runs[i].Load.Workers < runs[j].Load.Workers })
		p := plateau{workload: k[0], target: k[1]}
		for i := 1; i < len(runs); i++ {
			if runs[i].Summary.ThroughputRPS.Mean < 1.1*runs[i-1].Summary.ThroughputRPS.Mean {
				p.knee, p.next = runs[i-1], runs[i]
				break
			}
		}
		out = append(out, p)
	}
	return out
}

// plateauFindings say where each worker sweep stops gaining throughput.
func plateauFindings(doc *result.Document) []string {
	var out []string
	for _, p := range plateaus(doc) {
		head := fmt.Sprintf("%s on %s over workers", p.workload, p.target)
		if p.knee == nil {
			out = append(out, head+": req/s grew with every worker count measured")
			continue
		}
		out = append(out, fmt.Sprintf("%s: req/s stops growing at %s (%s req/s; %s: %s, P99 %s → %s)", head, LoadLabel(p.knee.Load),
			Thousands(p.knee.Summary.ThroughputRPS.Mean), LoadLabel(p.next.Load), Thousands(p.next.Summary.ThroughputRPS.Mean),
			Duration(p.knee.Summary.LatencyUS.P99), Duration(p.next.Summary.LatencyUS.P99)))
	}
	return out
}

// uslFindings say where each worker or replica sweep's USL fit peaks, or that it levels off.
func uslFindings(doc *result.Document) []string {
	var out []string
	for _, f := range doc.Scalability {
		head := fmt.Sprintf("%s on %s over %s", f.Workload, f.Target, f.Param)
		best := f.Points[0]
		for _, p := range f.Points {
			if p.RPS > best.RPS {
				best = p
			}
		}
		measured := fmt.Sprintf("measured best %s req/s at %d", Thousands(best.RPS), best.N)
		switch {
		case !f.Fitted:
			out = append(out, fmt.Sprintf("%s: %s; no USL fit (%s)", head, measured, f.Reason))
		case f.R2 < 0.9:
			out = append(out, fmt.Sprintf("%s: %s; the USL fits poorly (R² %.2f), so no peak is read from it", head, measured, f.R2))
		case f.PeakN > 0:
			out = append(out, fmt.Sprintf("%s: USL peaks at %s≈%.1f with %s req/s (%s)", head, f.Param, f.PeakN, Thousands(f.PeakRPS), measured))
		case f.CeilingRPS > 0:
			out = append(out, fmt.Sprintf("%s: no peak, levels off towards %s req/s (%s)", head, Thousands(f.CeilingRPS), measured))
		default:
			out = append(out, fmt.Sprintf("%s: scales linearly over the sizes measured (%s)", head, measured))
		}
	}
	return out
}

// comparisonFindings say, per target, the ratios whose 95 % interval excludes 1: against the
// first engine's P50 when engines are compared, else against the first target's req/s. A
// ratio without a called difference is no finding, however large.
//
// Two kinds of comparison are left out: a target against itself (under another load: the
// load's effect, which the table and the saturation lines say), and the sizes of a scaling
// series (the growth lines say how each engine grows).
func comparisonFindings(doc *result.Document, v *View, comparisons []result.Comparison) []string {
	figure, what := result.Throughput, "req/s"
	if v.CrossEngine != "" {
		figure, what = result.P50, "P50"
	}
	type key struct{ target, base string }
	var order []key
	by := map[key][]calledRatio{}
	uncalled := map[key]int{}
	for _, c := range comparisons {
		if c.Figure != figure || c.Target == c.BaseTarget || doc.Runs[c.Run].Scale != nil {
			continue
		}
		k := key{c.Target, c.BaseTarget}
		if by[k] == nil && uncalled[k] == 0 {
			order = append(order, k)
		}
		if !c.Different {
			uncalled[k]++
			continue
		}
		name := c.Workload
		if v.Rows[c.Run].Handed {
			name += " " + handedMark
		}
		by[k] = append(by[k], calledRatio{name, LoadLabel(doc.Runs[c.Run].Load), c.Ratio})
	}
	var out []string
	for _, k := range order {
		if len(by[k]) == 0 {
			continue
		}
		line := fmt.Sprintf("%s against %s, %s: %s (each 95 %% interval excludes 1)", k.target, k.base, what, calledList(by[k], figure))
		if n := uncalled[k]; n > 0 {
			line += fmt.Sprintf("; %d more without a called difference", n)
		}
		out = append(out, line)
	}
	return out
}

// calledRatio is one workload's ratio whose interval excludes 1: the row's figure over the
// base's, above 1 better.
type calledRatio struct {
	workload, load string
	ratio          float64
}

// calledList says the called ratios of one target against its base, "nop 10.4× faster, rbac
// 2.00× slower" (P50) or "nop 78.8× the req/s" (throughput), in the order they ran.
func calledList(cs []calledRatio, figure result.Figure) string {
	seen, runs := map[string]int{}, map[string]int{}
	for _, c := range cs {
		seen[c.workload]++
		runs[c.workload+" at "+c.load]++
	}
	nth := map[string]int{}
	parts := make([]string, len(cs))
	for i, c := range cs {
		at := c.workload + " at " + c.load
		nth[at]++
		switch {
		case runs[at] > 1: // the same workload and load run again (a floor at the start and the end)
			c.workload += fmt.Sprintf(" (run %d)", nth[at])
		case seen[c.workload] > 1: // one workload under several loads: say which
			c.workload = at
		}
		switch {
		case figure == result.Throughput:
			parts[i] = fmt.Sprintf("%s %s the req/s", c.workload, RatioText(c.ratio))
		case c.ratio >= 1:
			parts[i] = fmt.Sprintf("%s %s faster", c.workload, RatioText(c.ratio))
		default:
			parts[i] = fmt.Sprintf("%s %s slower", c.workload, RatioText(1/c.ratio))
		}
	}
	return strings.Join(parts, ", ")
}
