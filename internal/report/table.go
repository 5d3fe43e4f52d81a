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

	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/target"
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
}

var header = []string{"Workload", "Target", "Load", "req/s ± sd", "P50", "P50 over nop", "P95", "P99", "P99.9", "errors", "SUT CPU, RSS", "× vs first"}

// engineMode splits a target name: "cedar/server" is engine cedar in mode server. Targets that
// are no engine (http) are their own engine with no mode.
func engineMode(target string) (engine, mode string) {
	engine, mode, _ = strings.Cut(target, "/")
	return engine, mode
}

// crossEngine returns the engine the other engines are compared with (the first one run), or ""
// when the document holds fewer than two engines and the column is left out.
func crossEngine(doc *result.Document) string {
	var first string
	for _, r := range doc.Runs {
		e, mode := engineMode(r.Target)
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

// columns returns the table's header, with the cross-engine column when there is one.
func columns(doc *result.Document) []string {
	if e := crossEngine(doc); e != "" {
		return append(append([]string{}, header...), "× vs "+e)
	}
	return header
}

func (r row) cells(doc *result.Document, target string) []string {
	c := []string{r.Workload, target, r.Load, r.RPS, r.P50, r.OverFloor, r.P95, r.P99, r.P999, r.Errors, r.SUT, r.Ratio}
	if crossEngine(doc) != "" {
		c = append(c, r.Cross)
	}
	return c
}

// rows lays out the runs; the ratio compares throughput with the first target run on the same
// workload, as the study's "Improvement" column does.
func rows(doc *result.Document) []row {
	// The first engine's median latency per workload, mode and load, for the cross-engine column.
	base := crossEngine(doc)
	baseP50 := map[string]float64{}
	crossKey := func(r result.Run) string {
		_, mode := engineMode(r.Target)
		return r.Workload + "|" + mode + "|" + loadLabel(r.Load)
	}
	for _, r := range doc.Runs {
		if e, _ := engineMode(r.Target); e == base && r.Summary.OK > 0 {
			if _, seen := baseP50[crossKey(r)]; !seen {
				baseP50[crossKey(r)] = r.Summary.LatencyUS.P50
			}
		}
	}
	// The floor of each target under each load: the nop workload's median, if it ran.
	floor := map[string]float64{}
	for _, r := range doc.Runs {
		if r.Workload == "nop" && r.Summary.OK > 0 {
			floor[r.Target+"|"+loadLabel(r.Load)] = r.Summary.LatencyUS.P50
		}
	}
	first := map[string]float64{}
	firstName := map[string]string{}
	var out []row
	for _, r := range doc.Runs {
		s := r.Summary
		x := row{Workload: r.Workload, Target: r.Target, Load: loadLabel(r.Load)}
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
		} else {
			x.P50, x.P95, x.P99, x.P999 = "-", "-", "-", "-"
		}
		x.OverFloor = "-"
		if f, ok := floor[r.Target+"|"+x.Load]; ok && r.Workload != "nop" && s.OK > 0 {
			x.OverFloor = signedDuration(s.LatencyUS.P50 - f)
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
		if b, ok := baseP50[crossKey(r)]; ok && s.OK > 0 && s.LatencyUS.P50 > 0 {
			x.Cross = crossRatio(b / s.LatencyUS.P50)
		}
		if s.OK == 0 {
			x.Ratio = "-" // nothing served: no throughput to compare, nor to compare with
		} else if base, ok := first[r.Workload]; !ok {
			first[r.Workload] = s.ThroughputRPS.Mean
			firstName[r.Workload] = r.Target
			x.Ratio = "1.00× (" + r.Target + ")"
		} else if base > 0 {
			x.Ratio = fmt.Sprintf("%.2f×", s.ThroughputRPS.Mean/base)
		} else {
			x.Ratio = "-"
		}
		out = append(out, x)
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
	type kv struct {
		k string
		v uint64
	}
	var list []kv
	for k, v := range classes {
		list = append(list, kv{k, v})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].v != list[j].v {
			return list[i].v > list[j].v
		}
		return list[i].k < list[j].k
	})
	parts := make([]string, len(list))
	for i, e := range list {
		parts[i] = fmt.Sprintf("%s: %d", e.k, e.v)
	}
	return strings.Join(parts, ", ")
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

func notes(w io.Writer, doc *result.Document, all []row, bullet string) error {
	for _, r := range all {
		for _, n := range r.Notes {
			if _, err := fmt.Fprintf(w, "%s%s on %s: %s\n", bullet, r.Workload, r.Target, n); err != nil {
				return err
			}
		}
	}
	said := map[string]bool{}
	for _, r := range doc.Runs {
		if d := r.WorkloadDoc.CedarDifferences; d != "" && !said[r.Workload] {
			said[r.Workload] = true
			fmt.Fprintf(w, "%s%s in Cedar: %s\n", bullet, r.Workload, d)
		}
	}
	if e := crossEngine(doc); e != "" {
		fmt.Fprintf(w, "%s× vs %s: %s's P50 divided by this row's, same workload, deployment mode and load; above 1 is faster than %s\n", bullet, e, e, e)
	}
	if doc.Interrupted {
		fmt.Fprintf(w, "%sPARTIAL RESULT: the run was stopped before it finished (%s)\n", bullet, doc.StopReason)
	}
	fmt.Fprintf(w, "%s%s, %d cores, GOMAXPROCS %d, %s %s, %s, OPA %s, authzbench %s (%s); pinning: %s\n", bullet,
		doc.Env.CPUModel, doc.Env.Cores, doc.Env.GOMAXPROCS, doc.Env.OS, doc.Env.Kernel, doc.Env.Go,
		doc.Env.OPA, doc.Env.Authzbench, short(doc.Env.Commit), doc.Env.Pinning)
	return nil
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
		if target.InProcess(r.Target) {
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
