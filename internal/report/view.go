// Package report renders result documents for people. Build computes, in one place, what a
// table-shaped view shows of a document: one Row per run, its figures as numbers (throughput,
// percentiles, the cost over the nop floor with its interval, the ratio columns with whether
// their interval calls a difference, errors, the server's cost), and the notes that explain
// them. Renderers, each registered by name from a file of its own (format.go says how), only
// format; prometheus.go exports a summary as OpenMetrics beside them.
// Everything is read from the result document alone, so any view can be rebuilt later from a
// kept result file.
package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/authzbench/authzbench/internal/result"
)

// View is what a table-shaped report shows of one document.
type View struct {
	// CrossEngine is the engine the other engines are compared with (the first one run); ""
	// when the document holds fewer than two engines and the column is left out.
	CrossEngine string
	Rows        []Row
	// Findings say what the run shows, a line each, before the table (findings.go).
	Findings []string
	// Notes follow the rows' own, each of a kind: the fits in full, what Cedar is handed, how
	// each column reads and when it calls a difference, a partial result, pairs skipped, and
	// the environment.
	Notes []Note
	// Layers are the runs whose responses reported the server's own timers, in the
	// document's order: a table of their own after the notes (layers.go).
	Layers []Layers
	// Ramps are the runs read interval by interval (a capacity ramp's), in the document's
	// order: a table each after the notes (ramp.go).
	Ramps []Ramp
}

// NoteKind groups the notes under a table, so that a caveat is not lost among the lines that
// say how a column reads or what the machine was.
type NoteKind int

const (
	FitNote     NoteKind = iota // each fit in full: the findings' evidence
	CaveatNote                  // what limits a figure: work not the same (‡), a partial or shard result
	ColumnNote                  // how a column reads and when it calls a difference
	SkippedNote                 // what did not run, and why
	EnvNote                     // the machine and the versions
)

// noteTitles head the groups, in the order they are written; the rows' own notes (RunNotes)
// come after the caveats.
var noteTitles = map[NoteKind]string{FitNote: "Fits", CaveatNote: "Caveats", ColumnNote: "Reading the columns", SkippedNote: "Skipped", EnvNote: "Environment"}

// Note is one note under the table.
type Note struct {
	Kind NoteKind
	// Column is the column a ColumnNote explains: a view that leaves the column out leaves
	// the note out too.
	Column string
	Text   string
}

// Row is one run's line of the comparison table.
type Row struct {
	Workload, Target string
	// Handed marks a row whose engine is handed values its Rego counterpart computes: it does
	// less work than the OPA rows it is compared with, and the table says so in the row.
	Handed     bool
	Partial    bool // the run was cut short
	RateMissed bool // open loop: the load asked for was not delivered
	Load       result.Load
	// Throughput is ok responses per second across the repetitions.
	Throughput result.Spread
	// Served says some response was ok, so Latency holds percentiles.
	Served  bool
	Latency result.Percentiles
	// Thin marks the percentiles that rest on few ok responses beyond them.
	Thin Thin
	// OverFloor is the row's P50 above its target's nop P50 under the same load; nil when no
	// nop run compares (or the row is the nop run).
	OverFloor *Difference
	// Errors counts the responses that were not served decisions.
	Errors uint64
	// SUT is what the server authzbench started used; nil when it started none.
	SUT *result.Resources
	// VsFirst is the row's throughput over the first row's of its workload; VsEngine the
	// CrossEngine's P50 over the row's, same workload, mode and load.
	VsFirst, VsEngine Ratio
	// Parts split a request's time when every request opened a connection (no reuse); nil
	// with reuse, where the few connects say nothing of a request's time.
	Parts *Parts
	// Notes say what the cells cannot: errors and their first messages, a missed rate, timers.
	Notes []string
}

// Parts are the medians of the three parts of a request that opened its own connection: the
// TCP connect, the TLS handshake (HasTLS false in clear) and the exchange (the request written,
// its answer read), in microseconds.
type Parts struct {
	ConnectUS, TLSUS, ExchangeUS float64
	HasTLS, HasExchange          bool
}

// HasParts says whether a row of v splits its requests' time, so the table shows the columns.
func (v *View) HasParts() bool {
	for _, r := range v.Rows {
		if r.Parts != nil {
			return true
		}
	}
	return false
}

// Thin marks, for each percentile the table shows, fewer than result.FewBeyond ok responses
// beyond it: close to the slowest few responses (p99.9 of 400 is the maximum), and a longer
// run is likely to read it higher.
type Thin struct{ P50, P95, P99, P999 bool }

// Difference is a difference of two medians, in microseconds, with the half-width of its 95 %
// confidence interval when both sides ran at least twice.
type Difference struct {
	US          float64
	HalfUS      float64
	HasInterval bool
}

// IncludesZero says the interval includes 0: the difference is shown, but no cost is called.
func (d Difference) IncludesZero() bool { return d.HasInterval && math.Abs(d.US) <= d.HalfUS }

// Ratio is one ratio cell: the row's figure over the base's, above 1 better.
type Ratio struct {
	// Value is the ratio; 0 when there is none (nothing served, nothing to compare with).
	Value float64
	// Base marks the row the others are compared with (Value 1).
	Base bool
	// CI95 is the ratio's 95 % confidence interval; nil without one.
	CI95 *[2]float64
	// Different: the interval excludes 1, so a difference is called.
	Different bool
}

func ratioOf(c result.Comparison) Ratio {
	return Ratio{Value: c.Ratio, CI95: c.CI95, Different: c.Different}
}

// handedMark flags, in the Workload cell, the rows that are not the same work as OPA's; the
// note that says what the engine is handed starts with it.
const handedMark = "‡"

// thinTail marks a percentile with fewer than result.FewBeyond ok responses beyond it.
const thinTail = "≥"

// differenceMark marks a ratio whose 95 % confidence interval excludes 1.
const differenceMark = "†"

// floorKey is the load a nop run is the floor for: the same target under the same load.
type floorKey struct {
	target string
	load   result.LoadKey
}

func floorKeyOf(r *result.Run) floorKey { return floorKey{target: r.Label(), load: r.Load.Key()} }

// Build computes the view of a document: its rows in the document's order, each ratio with the
// interval the result's comparisons give it, and the notes.
func Build(doc *result.Document) *View {
	comparisons := result.Compare(doc)
	versus := map[int]map[result.Figure]result.Comparison{}
	for _, c := range comparisons {
		if versus[c.Run] == nil {
			versus[c.Run] = map[result.Figure]result.Comparison{}
		}
		versus[c.Run][c.Figure] = c
	}
	base := result.CrossEngine(doc)
	v := &View{CrossEngine: base}
	// The floor of each target under each load: the nop workload's run, if it ran.
	floor := map[floorKey]*result.Run{}
	for i := range doc.Runs {
		if r := &doc.Runs[i]; r.Workload == "nop" && r.Summary.OK > 0 {
			floor[floorKeyOf(r)] = r
		}
	}
	first := map[string]bool{}
	for i := range doc.Runs {
		r := &doc.Runs[i]
		s := r.Summary
		x := Row{Workload: r.Workload, Target: r.Label(), Load: r.Load, Handed: r.WorkloadDoc.Handed != nil,
			Partial: r.Partial, Throughput: s.ThroughputRPS, Errors: s.Errors, SUT: r.SUTResources}
		if o := s.Open; o != nil {
			x.RateMissed = o.RateMissed
			x.Notes = append(x.Notes, openNotes(r, o, doc.Shard)...)
		}
		if s.OK > 0 {
			x.Served, x.Latency = true, s.LatencyUS
			var note string
			if x.Thin, note = thinOf(s.LatencyBeyond); note != "" {
				x.Notes = append(x.Notes, note)
			}
		}
		if f, ok := floor[floorKeyOf(r)]; ok && r.Workload != "nop" && s.OK > 0 {
			d := overFloor(r, f)
			x.OverFloor = &d
		}
		if c := s.Connections; c != nil && !c.Reused {
			x.Parts = &Parts{ConnectUS: c.ConnectUS.P50}
			if c.TLSUS != nil {
				x.Parts.TLSUS, x.Parts.HasTLS = c.TLSUS.P50, true
			}
			if c.ExchangeUS != nil {
				x.Parts.ExchangeUS, x.Parts.HasExchange = c.ExchangeUS.P50, true
			}
		}
		x.Notes = append(x.Notes, runNotes(r)...)
		x.Notes = append(x.Notes, replicaNotes(r)...)
		if c, ok := versus[i][result.P50]; ok {
			x.VsEngine = ratioOf(c)
		} else if base != "" && s.WrongDecision > 0 {
			// Engines that do not decide alike are not doing the same work: no ratio.
			x.Notes = append(x.Notes, fmt.Sprintf("no × vs %s: %d wrong decisions, so the engines did not decide the same", base, s.WrongDecision))
		} else if e, _ := result.EngineMode(r.Target); e == base && s.OK > 0 && s.LatencyUS.P50 > 0 {
			x.VsEngine = Ratio{Value: 1, Base: true} // the run the others of its mode are compared with
		}
		// The ratio compares throughput with the first target run on the same workload, as the
		// study's "Improvement" column does; nothing served: nothing to compare, nor with.
		if c, ok := versus[i][result.Throughput]; ok {
			x.VsFirst = ratioOf(c)
		} else if s.OK > 0 && !first[r.Workload] {
			first[r.Workload] = true
			x.VsFirst = Ratio{Value: 1, Base: true}
		}
		v.Rows = append(v.Rows, x)
		if l := layersOf(r); l != nil {
			v.Layers = append(v.Layers, *l)
		}
		v.Ramps = append(v.Ramps, rampsOf(r)...)
	}
	v.Notes = documentNotes(doc, v, comparisons)
	v.Findings = findings(doc, v, comparisons)
	return v
}

// runNotes says what went wrong in a run, and what its cells leave out.
func runNotes(r *result.Run) []string {
	s := r.Summary
	var notes []string
	if why := r.NothingServed(); why != "" {
		notes = append(notes, "NOTHING MEASURED: "+why)
	}
	if w := s.ShortWindow; w != nil {
		notes = append(notes, shortWindowNote(r, w))
	}
	if s.Errors > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d responses were not served decisions: %s", s.Errors, s.Requests, ClassList(s.ErrorClasses)))
		notes = append(notes, firstMessages(s.ErrorClasses, s.ErrorMessages)...)
		if len(s.Mismatches) > 0 && r.Changes != nil {
			// Judged against every version, not the input's own expectation.
			m := s.Mismatches[0]
			notes = append(notes, fmt.Sprintf("first wrong decision: %s: the engine decided %s, which no version of the world it may have seen gave (or not the version it named): see the Changes table",
				m.Where(), m.Got))
		} else if len(s.Mismatches) > 0 {
			m := s.Mismatches[0]
			notes = append(notes, fmt.Sprintf("first wrong decision: %s expects %s, the engine decided %s (the result's summary.mismatches names the first %d)",
				m.Where(), m.Expected, m.Got, len(s.Mismatches)))
		}
		if s.ErrorClasses["undefined"] > 0 && r.WorkloadDoc.UndefinedAs == "" {
			notes = append(notes, "undefined: the policy decided nothing for some inputs (no rule matched and it has no default); if its callers read that as deny, --undefined-as deny")
		}
	}
	if u := r.WorkloadDoc.UndefinedAs; u != "" {
		notes = append(notes, "an undefined decision counted as "+u+" (--undefined-as)")
	}
	if s.Clamped > 0 {
		notes = append(notes, fmt.Sprintf("%d responses took longer than %s, the most the latency histograms hold, and were counted at it: the slowest percentiles and the maximum read low",
			s.Clamped, Duration(s.LatencyCeilingS*1e6)))
	}
	if c := s.Connections; c != nil && !c.Reused {
		notes = append(notes, fmt.Sprintf("no connection reuse: %d connections opened for %d expected; connect p50 %s, p99 %s of each request's latency",
			c.Opened, c.Expected, Duration(c.ConnectUS.P50), Duration(c.ConnectUS.P99)))
	}
	if st := s.Server; st != nil {
		notes = append(notes, fmt.Sprintf("server's own timers (%d responses): evaluation p50 %s, p99 %s; handler p50 %s, p99 %s; client p50 %s, p99 %s",
			st.Sampled, Duration(st.EvalUS.P50), Duration(st.EvalUS.P99), Duration(st.HandlerUS.P50), Duration(st.HandlerUS.P99),
			Duration(s.LatencyUS.P50), Duration(s.LatencyUS.P99)))
	}
	if ds := r.SUT.Datastore; ds != nil {
		notes = append(notes, datastoreNote(ds))
	}
	if len(r.SUT.Caches) > 0 {
		notes = append(notes, "caches: "+result.DescribeCaches(r.SUT.Caches))
	}
	if r.Error != "" {
		notes = append(notes, r.Error)
	}
	if s.UnverifiedOK > 0 {
		notes = append(notes, fmt.Sprintf("%d responses had no expected decision to check", s.UnverifiedOK))
	}
	return notes
}

// datastoreNote says what the engine decided over, and what loading the workload into it took:
// a check over PostgreSQL pays round trips a check over memory does not, so a row says which.
func datastoreNote(ds *result.Datastore) string {
	where := ds.Engine
	switch {
	case ds.Started:
		where += fmt.Sprintf(" started by authzbench (fsync %s)", ds.Settings["fsync"])
	case ds.URI != "":
		where += " at " + ds.URI
	}
	tuples := fmt.Sprint(ds.Tuples)
	if ds.Tuples >= 1000 {
		tuples = Thousands(float64(ds.Tuples))
	}
	note := fmt.Sprintf("datastore %s: %s tuples loaded in %.2f s", where, tuples, ds.LoadSeconds)
	if ds.TuplesPerSecond > 0 {
		note += fmt.Sprintf(", %s a second", Thousands(ds.TuplesPerSecond))
	}
	if ds.BulkPath != "" {
		note += ", through " + ds.BulkPath
	}
	if ds.SizeBytes > 0 {
		note += fmt.Sprintf(", database %.1f MB", float64(ds.SizeBytes)/1e6)
	}
	switch {
	case ds.AnalyzeSeconds > 0:
		note += fmt.Sprintf(", ANALYZE %.2f s", ds.AnalyzeSeconds)
	case ds.NotAnalyzed:
		note += ", not analyzed (--datastore-no-analyze): its checks were planned without statistics of the tables the load filled"
	case ds.AnalyzeError != "":
		// Checks planned without the loaded tables' statistics can read far slower than
		// the same database would a minute later, when autovacuum has analyzed it.
		note += fmt.Sprintf(", not analyzed (%s): its checks were planned without statistics of the tables the load filled", ds.AnalyzeError)
	}
	if ds.Pool != "" {
		note += "; pool: " + ds.Pool
	}
	return note
}

// shortWindowNote says a run's req/s is a count of a handful of decisions, not a rate.
func shortWindowNote(r *result.Run, w *result.ShortWindow) string {
	which := "its repetition"
	if len(r.Repetitions) > 1 {
		which = fmt.Sprintf("%d of %d repetitions held too few; the fewest", w.Repetitions, len(r.Repetitions))
	}
	window := Duration(w.WindowS * 1e6)
	if r.Load.Model == result.OpenLoop {
		return fmt.Sprintf("req/s from too few sends: %s held %d due in %s (%s asked), fewer than the %d a rate is read from; one send more or less moves req/s by %.0f %%: a longer run measures the rate",
			which, w.Fewest, window, r.Load.Schedule().Label(Thousands), w.Needed, 100/float64(w.Fewest))
	}
	workers := w.Needed / result.FewForRate // a shard's own
	return fmt.Sprintf("req/s from too few responses: %s held %d in %s over %d workers, fewer than the %d a rate is read from (%d a worker); each worker's first and last response moves req/s by up to %.0f %%: a longer run measures the rate",
		which, w.Fewest, window, workers, w.Needed, result.FewForRate, 100*float64(workers)/float64(w.Fewest))
}

// documentNotes are the notes after the rows'.
func documentNotes(doc *result.Document, v *View, comparisons []result.Comparison) []Note {
	var notes []Note
	add := func(kind NoteKind, texts ...string) {
		for _, t := range texts {
			notes = append(notes, Note{Kind: kind, Text: t})
		}
	}
	if line := NoRuns(doc); line != "" {
		add(CaveatNote, strings.ToUpper(line[:1])+line[1:])
	}
	for _, k := range doc.Skipped {
		add(SkippedNote, fmt.Sprintf("%s on %s: skipped, %s", k.Workload, k.Target, k.Reason))
	}
	for _, r := range doc.Replays {
		add(CaveatNote, replayNote(r))
	}
	// One note per workload and engine handed something: its runs in every mode share it.
	said := map[[2]string]bool{}
	for _, r := range doc.Runs {
		h := r.WorkloadDoc.Handed
		if h == nil || said[[2]string{r.Workload, h.Engine}] {
			continue
		}
		said[[2]string{r.Workload, h.Engine}] = true
		add(CaveatNote, fmt.Sprintf("%s %s in %s, not the same work as in OPA: %s", handedMark, r.Workload, h.Language, h.What))
	}
	if hasFigure(comparisons, result.Throughput) {
		notes = append(notes, Note{Kind: ColumnNote, Column: "× vs first", Text: "× vs first: this row's req/s divided by the first row's of its workload; " + callRule(comparisons, result.Throughput)})
	}
	for _, r := range v.Rows {
		if r.OverFloor != nil {
			notes = append(notes, Note{Kind: ColumnNote, Column: "P50 over nop", Text: "P50 over nop: this row's P50 minus its target's nop P50 under the same load; ± is the 95 % confidence interval of that difference from the repetitions' medians (Welch's t), and ~ marks one whose interval includes 0: no cost is called; without ± there were too few repetitions for an interval (--repeat 3 or more)"})
			break
		}
	}
	if e := v.CrossEngine; e != "" {
		notes = append(notes, Note{Kind: ColumnNote, Column: "× vs " + e, Text: fmt.Sprintf("× vs %s: %s's P50 divided by this row's, same workload, deployment mode and load; above 1 is faster than %s; %s",
			e, e, e, callRule(comparisons, result.P50))})
	}
	shards, usl := scaleOutNotes(doc)
	add(CaveatNote, shards...)
	add(FitNote, usl...)
	add(FitNote, growthNotes(doc)...)
	if doc.Interrupted {
		add(CaveatNote, fmt.Sprintf("PARTIAL RESULT: the run was stopped before it finished (%s)", doc.StopReason))
	}
	var linked []string
	for _, v := range doc.Env.EngineVersions() {
		linked = append(linked, v.Label+" "+v.Version)
	}
	engines := strings.Join(linked, ", ")
	commit := short(doc.Env.Commit)
	if strings.HasSuffix(doc.Env.Commit, "-dirty") {
		commit += "-dirty"
	}
	if src := doc.Env.CommitSource; src != "" && src != "none" {
		commit += ", " + src
	}
	add(EnvNote, fmt.Sprintf("%s, %d cores, GOMAXPROCS %d, %s %s, %s, %s, authzbench %s (%s); pinning: %s",
		doc.Env.CPUModel, doc.Env.Cores, doc.Env.GOMAXPROCS, doc.Env.OS, doc.Env.Kernel, doc.Env.Go,
		engines, doc.Env.Authzbench, commit, doc.Env.Pinning))
	return notes
}

// thinOf marks the percentiles that rest on few samples and returns the note that says so;
// nothing for a document written before the counts were kept.
func thinOf(b *result.Beyond) (Thin, string) {
	var thin Thin
	if b == nil {
		return thin, ""
	}
	var named []string
	for _, p := range []struct {
		name   string
		mark   *bool
		beyond int64
	}{{"P50", &thin.P50, b.P50}, {"P95", &thin.P95, b.P95}, {"P99", &thin.P99, b.P99}, {"P99.9", &thin.P999, b.P999}} {
		if p.beyond < result.FewBeyond {
			*p.mark = true
			named = append(named, fmt.Sprintf("%s: %d", p.name, p.beyond))
		}
	}
	if len(named) == 0 {
		return thin, ""
	}
	return thin, fmt.Sprintf("%s marks a percentile with fewer than %d of the %d ok responses beyond it (%s): close to the slowest few, not a stable figure; a longer run is likely to read it higher",
		thinTail, result.FewBeyond, b.Samples, strings.Join(named, ", "))
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

// overFloor is a run's median above its target's nop median under the same load, with the 95 %
// confidence interval of that difference when both ran at least twice: the two medians come
// from different workloads' turns, so they are not paired, and the interval is Welch's on the
// repetitions' medians. A difference whose interval includes 0 is shown, but not called: a few
// microseconds between two noisy medians say nothing.
func overFloor(r, floor *result.Run) Difference {
	d := Difference{US: r.Summary.LatencyUS.P50 - floor.Summary.LatencyUS.P50}
	d.HalfUS, d.HasInterval = welchHalfWidth(repetitionP50s(r), repetitionP50s(floor))
	return d
}

func repetitionP50s(r *result.Run) []float64 {
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
	va, vb := result.SpreadOf(a).SD, result.SpreadOf(b).SD
	qa, qb := va*va/float64(len(a)), vb*vb/float64(len(b))
	se := math.Sqrt(qa + qb)
	if se == 0 {
		return 0, true
	}
	df := (qa + qb) * (qa + qb) / (qa*qa/float64(len(a)-1) + qb*qb/float64(len(b)-1))
	return result.TQuantile975(max(1, int(df))) * se, true
}

// openNotes says how an open-loop run kept its schedule: what was not delivered and whose
// fault each late send was. In a shard (shard not nil) the schedule asked is the whole
// scenario's, of which the shard sends its share: the sentence says so, lest a shard that sent
// all of its share read as one that sent half.
func openNotes(r *result.Run, o *result.OpenSummary, shard *result.Shard) []string {
	var notes []string
	late := Duration(o.LateAfterUS)
	if o.Unsent > 0 {
		notes = append(notes, fmt.Sprintf("the rate was not delivered: %d of the %d due sends never went out, every one of the %d connections busy until the run gave up on them; the percentiles charge each from its intended time to then, a lower bound",
			o.Unsent, o.Intended, r.Load.Connections))
	}
	if o.GeneratorLate*100 > o.Intended {
		asked := r.Load.Schedule().Label(Thousands) + " asked"
		if shard != nil {
			asked = fmt.Sprintf("this shard's 1/%d share of the %s asked", shard.Count, r.Load.Schedule().Label(Thousands))
		}
		notes = append(notes, fmt.Sprintf("the rate was not delivered: the generator itself was more than %s late for %d of the %d due sends, a connection free (over 1 %%: short of CPU); %s/s sent of %s",
			late, o.GeneratorLate, o.Intended, Thousands(o.AchievedRPS.Mean), asked))
	}
	// The other late sends found every connection busy. An engine inside authzbench shares the
	// process's CPU with the generator, so there the wait says no more than that both were busy.
	if waited := o.LateSends - o.GeneratorLate; waited > 0 {
		if r.Where() == result.InProcess {
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

// replayNote says what a replayed decision log's policy did to the logged decisions, checked
// before the runs: the rows' wrong decisions are those flips (the result lists them all).
func replayNote(r result.Replay) string {
	line := fmt.Sprintf("%s replays %d decisions of path %s from %s", r.Workload, r.Events, r.Path, r.Log)
	if r.Field != "" {
		line += fmt.Sprintf(", comparing the results' %q field", r.Field)
	}
	if r.NotChecked != "" {
		line += "; impact not checked: " + r.NotChecked
	} else {
		line += fmt.Sprintf("; the policy reproduced %d and flipped %d (%d intended)", r.Reproduced, len(r.Flipped), r.Intended)
		var ids []string
		for i, f := range r.Flipped {
			if i == 3 {
				ids = append(ids, fmt.Sprintf("… %d more in replays[].flipped", len(r.Flipped)-3))
				break
			}
			ids = append(ids, fmt.Sprintf("%s %s → %s", f.DecisionID, f.Old, f.New))
		}
		if len(ids) > 0 {
			line += ": " + strings.Join(ids, ", ")
		}
	}
	if len(r.Skipped) > 0 {
		var kinds []string
		for k, c := range r.Skipped {
			kinds = append(kinds, fmt.Sprintf("%d %s", c, k))
		}
		slices.Sort(kinds)
		line += "; skipped from the log: " + strings.Join(kinds, ", ")
	}
	return line
}
