// Package report renders result documents for people: a terminal table and Markdown. Renderers
// read only the result document, so any view can be rebuilt later from a kept result file.
package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/authzbench/authzbench/internal/metrics"
	"github.com/authzbench/authzbench/internal/result"
)

// row is one line of the comparison table.
type row struct {
	Workload, Target string
	Load             string
	RPS              string
	P50, P95, P99    string
	P999             string
	OverFloor        string
	Errors           string
	SUT              string
	Ratio            string
	Cross            string // P50 of the first engine in the same mode over this row's; see crossEngine
	Notes            []string
	// Handed marks a Cedar row that is handed values its Rego counterpart computes: it does
	// less work than the OPA rows it is compared with, and the table says so in the row.
	Handed bool
}

// handedMark flags, in the Workload cell, the rows that are not the same work as OPA's; the
// note that says what Cedar is handed starts with it.
const handedMark = "‡"

var header = []string{"Workload", "Target", "Load", "req/s ± sd", "P50", "P50 over nop", "P95", "P99", "P99.9", "errors", "SUT CPU, RSS", "× vs first"}

// engineMode splits a target name: "cedar/server" is engine cedar in mode server.
func engineMode(target string) (engine, mode string) { return result.EngineMode(target) }

// crossEngine returns the engine the other engines are compared with (the first one run), or ""
// when the document holds fewer than two engines and the column is left out.
func crossEngine(doc *result.Document) string { return result.CrossEngine(doc) }

// columns returns the table's header, with the cross-engine column when there is one.
func columns(doc *result.Document) []string {
	if e := crossEngine(doc); e != "" {
		return append(append([]string{}, header...), "× vs "+e)
	}
	return header
}

func (r row) cells(doc *result.Document, target string) []string {
	workload := r.Workload
	if r.Handed {
		workload += " " + handedMark
	}
	c := []string{workload, target, r.Load, r.RPS, r.P50, r.OverFloor, r.P95, r.P99, r.P999, r.Errors, r.SUT, r.Ratio}
	if crossEngine(doc) != "" {
		c = append(c, r.Cross)
	}
	return c
}

// rows lays out the runs; the ratio compares throughput with the first target run on the same
// workload, as the study's "Improvement" column does.
func rows(doc *result.Document) []row {
	// The ratio columns, with their intervals, as the result document carries them.
	versus := map[int]map[result.Figure]result.Comparison{}
	for _, c := range result.Compare(doc) {
		if versus[c.Run] == nil {
			versus[c.Run] = map[result.Figure]result.Comparison{}
		}
		versus[c.Run][c.Figure] = c
	}
	base := crossEngine(doc)
	// The floor of each target under each load: the nop workload's run, if it ran.
	floor := map[string]result.Run{}
	for _, r := range doc.Runs {
		if r.Workload == "nop" && r.Summary.OK > 0 {
			floor[r.Target+"|"+loadLabel(r.Load)] = r
		}
	}
	first := map[string]bool{}
	var out []row
	for i, r := range doc.Runs {
		s := r.Summary
		x := row{Workload: r.Workload, Target: r.Target, Load: loadLabel(r.Load), Handed: r.WorkloadDoc.CedarDifferences != ""}
		if r.Partial {
			x.Target += " (partial)"
		}
		if o := s.Open; o != nil {
			if o.RateMissed {
				x.Target += " RATE MISSED"
			}
			x.Notes = append(x.Notes, openNotes(r, o)...)
		}
		x.RPS = formatRPS(s.ThroughputRPS.Mean, s.ThroughputRPS.SD, s.ThroughputRPS.N)
		if s.OK > 0 {
			x.P50, x.P95, x.P99, x.P999 = Duration(s.LatencyUS.P50), Duration(s.LatencyUS.P95),
				Duration(s.LatencyUS.P99), Duration(s.LatencyUS.P999)
			if note := markThinTail(&x, s.LatencyBeyond); note != "" {
				x.Notes = append(x.Notes, note)
			}
		} else {
			x.P50, x.P95, x.P99, x.P999 = "-", "-", "-", "-"
		}
		x.OverFloor = "-"
		if f, ok := floor[r.Target+"|"+x.Load]; ok && r.Workload != "nop" && s.OK > 0 {
			x.OverFloor = overFloor(r, f)
		}
		x.Errors = "0"
		x.SUT = "-"
		if res := r.SUTResources; res != nil {
			x.SUT = fmt.Sprintf("%.2f cores, %.0f MB", res.CPUCoresMean, res.RSSMaxMB)
		}
		if s.Errors > 0 {
			x.Errors = fmt.Sprintf("%d !", s.Errors)
			x.Notes = append(x.Notes, fmt.Sprintf("%d of %d responses were not served decisions: %s",
				s.Errors, s.Requests, ClassList(s.ErrorClasses)))
			x.Notes = append(x.Notes, firstMessages(s.ErrorClasses, s.ErrorMessages)...)
			if len(s.Mismatches) > 0 {
				m := s.Mismatches[0]
				x.Notes = append(x.Notes, fmt.Sprintf("first wrong decision: %s expects %s, the engine decided %s (the result's summary.mismatches names the first %d)",
					m.Where(), m.Expected, m.Got, len(s.Mismatches)))
			}
			if s.ErrorClasses["undefined"] > 0 && r.WorkloadDoc.UndefinedAs == "" {
				x.Notes = append(x.Notes, "undefined: the policy decided nothing for some inputs (no rule matched and it has no default); if its callers read that as deny, --undefined-as deny")
			}
		}
		if u := r.WorkloadDoc.UndefinedAs; u != "" {
			x.Notes = append(x.Notes, "an undefined decision counted as "+u+" (--undefined-as)")
		}
		if s.Clamped > 0 {
			x.Notes = append(x.Notes, fmt.Sprintf("%d responses took longer than %s, the most the latency histograms hold, and were counted at it: the slowest percentiles and the maximum read low",
				s.Clamped, Duration(s.LatencyCeilingS*1e6)))
		}
		if c := s.Connections; c != nil && !c.Reused {
			x.Notes = append(x.Notes, fmt.Sprintf("no connection reuse: %d connections opened for %d expected; connect p50 %s, p99 %s of each request's latency",
				c.Opened, c.Expected, Duration(c.ConnectUS.P50), Duration(c.ConnectUS.P99)))
		}
		if st := s.Server; st != nil {
			x.Notes = append(x.Notes, fmt.Sprintf("server's own timers (%d responses): evaluation p50 %s, p99 %s; handler p50 %s, p99 %s; client p50 %s, p99 %s",
				st.Sampled, Duration(st.EvalUS.P50), Duration(st.EvalUS.P99), Duration(st.HandlerUS.P50), Duration(st.HandlerUS.P99),
				Duration(s.LatencyUS.P50), Duration(s.LatencyUS.P99)))
		}
		if r.Error != "" {
			x.Notes = append(x.Notes, r.Error)
		}
		if s.UnverifiedOK > 0 {
			x.Notes = append(x.Notes, fmt.Sprintf("%d responses had no expected decision to check", s.UnverifiedOK))
		}
		x.Cross = "-"
		if c, ok := versus[i][result.P50]; ok {
			x.Cross = crossRatio(c.Ratio) + called(c)
		} else if base != "" && s.WrongDecision > 0 {
			// Engines that do not decide alike are not doing the same work: no ratio.
			x.Notes = append(x.Notes, fmt.Sprintf("no × vs %s: %d wrong decisions, so the engines did not decide the same", base, s.WrongDecision))
		} else if e, _ := engineMode(r.Target); e == base && s.OK > 0 && s.LatencyUS.P50 > 0 {
			x.Cross = crossRatio(1) // the run the others of its mode are compared with
		}
		x.Ratio = "-" // nothing served: no throughput to compare, nor to compare with
		if c, ok := versus[i][result.Throughput]; ok {
			x.Ratio = fmt.Sprintf("%.2f×", c.Ratio) + called(c)
		} else if s.OK > 0 && !first[r.Workload] {
			first[r.Workload] = true
			x.Ratio = "1.00× (" + r.Target + ")"
		}
		out = append(out, x)
	}
	return out
}

// thinTail marks a percentile with fewer than metrics.FewBeyond ok responses beyond it: it is
// close to the slowest few responses (p99.9 of 400 is the maximum), and a longer run is likely
// to read it higher.
const thinTail = "≥"

// markThinTail marks the row's percentiles that rest on few samples and returns the note that
// says so; nothing for a document written before the counts were kept.
func markThinTail(x *row, b *metrics.Beyond) string {
	if b == nil {
		return ""
	}
	var thin []string
	for _, p := range []struct {
		name   string
		cell   *string
		beyond int64
	}{{"P50", &x.P50, b.P50}, {"P95", &x.P95, b.P95}, {"P99", &x.P99, b.P99}, {"P99.9", &x.P999, b.P999}} {
		if p.beyond < metrics.FewBeyond {
			*p.cell = thinTail + *p.cell
			thin = append(thin, fmt.Sprintf("%s: %d", p.name, p.beyond))
		}
	}
	if len(thin) == 0 {
		return ""
	}
	return fmt.Sprintf("%s marks a percentile with fewer than %d of the %d ok responses beyond it (%s): close to the slowest few, not a stable figure; a longer run is likely to read it higher",
		thinTail, metrics.FewBeyond, b.Samples, strings.Join(thin, ", "))
}

// firstMessages says what went wrong with the first response of each class that said, in the
// order ClassList names the classes.
func firstMessages(classes map[string]uint64, messages map[string]string) []string {
	var out []string
	for _, c := range classOrder(classes) {
		if m, ok := messages[c]; ok {
			out = append(out, fmt.Sprintf("first %s: %s", c, m))
		}
	}
	return out
}

// loadLabel says what load a row ran under: "8 workers" (closed loop), "2,000/s x64" (open).
func loadLabel(l result.Load) string {
	if l.Model == "open" {
		return fmt.Sprintf("%s/s x%d", thousands(l.Rate), l.Connections)
	}
	if l.Workers == 1 {
		return "1 worker"
	}
	return fmt.Sprintf("%d workers", l.Workers)
}

// ClassList renders error classes as "http_400: 12, wrong_decision: 3", largest first.
func ClassList(classes map[string]uint64) string {
	order := classOrder(classes)
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%s: %d", k, classes[k])
	}
	return strings.Join(parts, ", ")
}

// classOrder lists the classes largest first, ties by name.
func classOrder(classes map[string]uint64) []string {
	list := make([]string, 0, len(classes))
	for k := range classes {
		list = append(list, k)
	}
	sort.Slice(list, func(i, j int) bool {
		if classes[list[i]] != classes[list[j]] {
			return classes[list[i]] > classes[list[j]]
		}
		return list[i] < list[j]
	})
	return list
}

// Table writes the comparison table for a terminal.
func Table(w io.Writer, doc *result.Document) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(columns(doc), "\t"))
	all := rows(doc)
	for _, r := range all {
		fmt.Fprintln(tw, strings.Join(r.cells(doc, r.Target), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return notes(w, doc, all, "")
}

// Markdown writes the comparison table as GitHub-flavoured Markdown.
func Markdown(w io.Writer, doc *result.Document) error {
	cols := columns(doc)
	fmt.Fprintf(w, "| %s |\n", strings.Join(cols, " | "))
	fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(cols)))
	all := rows(doc)
	for _, r := range all {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r.cells(doc, "`"+r.Target+"`"), " | "))
	}
	fmt.Fprintln(w)
	return notes(w, doc, all, "- ")
}

func hasOverFloor(all []row) bool {
	for _, r := range all {
		if r.OverFloor != "-" {
			return true
		}
	}
	return false
}

func notes(w io.Writer, doc *result.Document, all []row, bullet string) error {
	for _, r := range all {
		for _, n := range r.Notes {
			if _, err := fmt.Fprintf(w, "%s%s on %s: %s\n", bullet, r.Workload, r.Target, n); err != nil {
				return err
			}
		}
	}
	for _, k := range doc.Skipped {
		if _, err := fmt.Fprintf(w, "%s%s on %s: skipped, the workload has %s\n", bullet, k.Workload, k.Target, k.Reason); err != nil {
			return err
		}
	}
	said := map[string]bool{}
	for _, r := range doc.Runs {
		if d := r.WorkloadDoc.CedarDifferences; d != "" && !said[r.Workload] {
			said[r.Workload] = true
			fmt.Fprintf(w, "%s%s %s in Cedar, not the same work as in OPA: %s\n", bullet, handedMark, r.Workload, d)
		}
	}
	comparisons := result.Compare(doc)
	if hasFigure(comparisons, result.Throughput) {
		fmt.Fprintf(w, "%s× vs first: this row's req/s divided by the first row's of its workload; %s\n", bullet, callRule(comparisons, result.Throughput))
	}
	if hasOverFloor(all) {
		fmt.Fprintf(w, "%sP50 over nop: this row's P50 minus its target's nop P50 under the same load; ± is the 95 %% confidence interval of that difference from the repetitions' medians (Welch's t), and ~ marks one whose interval includes 0: no cost is called; without ± there were too few repetitions for an interval (--repeat 3 or more)\n", bullet)
	}
	if e := crossEngine(doc); e != "" {
		fmt.Fprintf(w, "%s× vs %s: %s's P50 divided by this row's, same workload, deployment mode and load; above 1 is faster than %s; %s\n",
			bullet, e, e, e, callRule(comparisons, result.P50))
	}
	if doc.Interrupted {
		fmt.Fprintf(w, "%sPARTIAL RESULT: the run was stopped before it finished (%s)\n", bullet, doc.StopReason)
	}
	engines := "OPA " + doc.Env.OPA
	if doc.Env.Cedar != "" {
		engines += ", cedar-go " + doc.Env.Cedar
	}
	commit := short(doc.Env.Commit)
	if strings.HasSuffix(doc.Env.Commit, "-dirty") {
		commit += "-dirty"
	}
	if src := doc.Env.CommitSource; src != "" && src != "none" {
		commit += ", " + src
	}
	fmt.Fprintf(w, "%s%s, %d cores, GOMAXPROCS %d, %s %s, %s, %s, authzbench %s (%s); pinning: %s\n", bullet,
		doc.Env.CPUModel, doc.Env.Cores, doc.Env.GOMAXPROCS, doc.Env.OS, doc.Env.Kernel, doc.Env.Go,
		engines, doc.Env.Authzbench, commit, doc.Env.Pinning)
	return nil
}

// differenceMark marks a ratio whose 95 % confidence interval excludes 1.
const differenceMark = "†"

// called marks a ratio when a difference is called.
func called(c result.Comparison) string {
	if c.Different {
		return " " + differenceMark
	}
	return ""
}

func hasFigure(cs []result.Comparison, f result.Figure) bool {
	for _, c := range cs {
		if c.Figure == f {
			return true
		}
	}
	return false
}

// callRule says when a ratio column calls a difference, and how its intervals were computed.
func callRule(cs []result.Comparison, f result.Figure) string {
	methods := map[result.Method]bool{}
	for _, c := range cs {
		if c.Figure == f {
			methods[c.Method] = true
		}
	}
	how := []string{}
	if methods[result.Paired] {
		how = append(how, "the repetitions took turns, so the interval is a t interval on the logs of the per-turn ratios")
	}
	if methods[result.Unpaired] {
		how = append(how, "for repetitions that did not take turns, Welch's t on the logs")
	}
	rule := differenceMark + " marks a difference: its 95 % confidence interval (in the result's comparisons) excludes 1; without " +
		differenceMark + " none is called, whatever the ratio"
	if len(how) > 0 {
		rule += " (" + strings.Join(how, "; ") + ")"
	}
	if methods[result.NoInterval] {
		rule += "; rows with fewer than 2 complete repetitions have no interval: --repeat 5 to compare"
	}
	return rule
}

// crossRatio keeps two significant digits below 10 and whole numbers above: "0.42×", "3.1×",
// "24×".
func crossRatio(v float64) string {
	switch {
	case v >= 10:
		return fmt.Sprintf("%.0f×", v)
	case v >= 1:
		return fmt.Sprintf("%.1f×", v)
	}
	return fmt.Sprintf("%.2f×", v)
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// Duration renders microseconds with a unit that keeps three significant digits.
func Duration(us float64) string {
	switch {
	case us < 0.9995:
		return fmt.Sprintf("%.0fns", us*1e3)
	case us < 999.5:
		return sig3(us) + "µs"
	case us < 999.5e3:
		return sig3(us/1e3) + "ms"
	}
	return sig3(us/1e6) + "s"
}

// signedDuration renders a difference of microseconds with its sign.
// overFloor is a run's median above its target's nop median under the same load, with the 95 %
// confidence interval of that difference when both ran at least twice: the two medians come
// from different workloads' turns, so they are not paired, and the interval is Welch's on the
// repetitions' medians. A difference whose interval includes 0 is shown, marked ~, but not
// called: a few microseconds between two noisy medians say nothing.
func overFloor(r, floor result.Run) string {
	diff := r.Summary.LatencyUS.P50 - floor.Summary.LatencyUS.P50
	half, ok := welchHalfWidth(repetitionP50s(r), repetitionP50s(floor))
	if !ok {
		return signedDuration(diff)
	}
	out := signedDuration(diff) + " ±" + Duration(half)
	if math.Abs(diff) <= half {
		out += " ~"
	}
	return out
}

func repetitionP50s(r result.Run) []float64 {
	var xs []float64
	for _, rep := range r.Repetitions {
		if rep.OK > 0 {
			xs = append(xs, rep.LatencyUS.P50)
		}
	}
	return xs
}

// welchHalfWidth is the half-width of the 95 % confidence interval of mean(a) - mean(b), by
// Welch's t; ok is false with fewer than two values on a side.
func welchHalfWidth(a, b []float64) (half float64, ok bool) {
	if len(a) < 2 || len(b) < 2 {
		return 0, false
	}
	va, vb := metrics.SpreadOf(a).SD, metrics.SpreadOf(b).SD
	qa, qb := va*va/float64(len(a)), vb*vb/float64(len(b))
	se := math.Sqrt(qa + qb)
	if se == 0 {
		return 0, true
	}
	df := (qa + qb) * (qa + qb) / (qa*qa/float64(len(a)-1) + qb*qb/float64(len(b)-1))
	return metrics.TQuantile975(max(1, int(df))) * se, true
}

func signedDuration(us float64) string {
	if us < 0 {
		return "-" + Duration(-us)
	}
	return "+" + Duration(us)
}

// sig3 keeps three significant digits without switching to exponent notation.
func sig3(v float64) string {
	switch {
	case v < 9.995:
		return fmt.Sprintf("%.2f", v)
	case v < 99.95:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func formatRPS(mean, sd float64, n int) string {
	s := thousands(mean)
	if n > 1 {
		s += " ± " + thousands(sd)
	}
	return s
}

// thousands renders a rate with thousands separators, and one decimal below 100.
func thousands(v float64) string {
	if v < 100 {
		return fmt.Sprintf("%.1f", v)
	}
	n := int64(math.Round(v))
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// openNotes says how an open-loop run kept its schedule: what was not delivered and whose
// fault each late send was.
func openNotes(r result.Run, o *result.OpenSummary) []string {
	var notes []string
	late := Duration(o.LateAfterUS)
	if o.Unsent > 0 {
		notes = append(notes, fmt.Sprintf("the rate was not delivered: %d of the %d due sends never went out, every one of the %d connections busy until the run gave up on them; the percentiles charge each from its intended time to then, a lower bound",
			o.Unsent, o.Intended, r.Load.Connections))
	}
	if o.GeneratorLate*100 > o.Intended {
		notes = append(notes, fmt.Sprintf("the rate was not delivered: the generator itself was more than %s late for %d of the %d due sends, a connection free (over 1 %%: short of CPU); %s/s sent of %s/s asked",
			late, o.GeneratorLate, o.Intended, thousands(o.AchievedRPS.Mean), thousands(r.Load.Rate)))
	}
	// The other late sends found every connection busy. An engine inside authzbench shares the
	// process's CPU with the generator, so there the wait says no more than that both were busy.
	if waited := o.LateSends - o.GeneratorLate; waited > 0 {
		// Where the engine ran, as the run recorded it (files from before placement was
		// recorded say mode inproc).
		if r.SUT.Placement == "in-process" || r.SUT.Mode == "inproc" {
			notes = append(notes, fmt.Sprintf("%d sends waited more than %s because all %d workers were busy (the engine and the generator share this process's CPU), and their latency counts the wait",
				waited, late, r.Load.Connections))
		} else {
			notes = append(notes, fmt.Sprintf("%d sends waited more than %s because all %d connections were busy: the server fell behind, and their latency counts the wait",
				waited, late, r.Load.Connections))
		}
	}
	note := fmt.Sprintf("open loop: latency from the intended send time; from the actual send it would read p50 %s, p99 %s",
		Duration(o.UncorrectedLatencyUS.P50), Duration(o.UncorrectedLatencyUS.P99))
	if o.LatencyIncludesUnsent {
		note += fmt.Sprintf("; the ok responses alone read p50 %s, p99 %s", Duration(o.OKLatencyUS.P50), Duration(o.OKLatencyUS.P99))
	}
	return append(notes, note)
}
