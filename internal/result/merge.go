package result

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Merge combines documents that measured the same runs (repetitions of one scenario taken at
// different times, or by generators on machines alike) into one, exactly: each run's
// repetitions are concatenated, its counts and error classes summed, its histograms added, and
// its summary recomputed from the added histograms, never by averaging percentiles.
//
// Runs match by workload and target: the k-th run of a pair in one document with the k-th in
// each other. Every document must hold the same runs under the same settings (load, workload,
// engine and deployment, environment); otherwise Merge refuses, naming the run and the setting
// that differs. A run whose document keeps some view's distribution only as percentiles (files
// written before every histogram was stored) cannot be merged exactly and is refused too.
//
// A repetition is one measurement: documents that hold one twice, between them or within one
// (a document merged with itself, or with one of its own inputs), are refused (Distinct).
//
// The documents are not changed.
func Merge(docs ...*Document) (*Document, error) {
	srcs := make([]Source, len(docs))
	for i, d := range docs {
		srcs[i] = Source{Doc: d}
	}
	return MergeSources(srcs...)
}

// MergeSources is Merge of documents read from files: its refusal of a repetition held twice
// names the files.
func MergeSources(srcs ...Source) (*Document, error) {
	if len(srcs) == 0 {
		return nil, errors.New("merge: no documents")
	}
	docs := make([]*Document, len(srcs))
	for i, s := range srcs {
		d := s.Doc
		if d == nil {
			return nil, fmt.Errorf("merge: document %d is missing", i+1)
		}
		if d.Schema != Schema {
			return nil, fmt.Errorf("merge: document %d has schema %q, want %q", i+1, d.Schema, Schema)
		}
		docs[i] = d
	}
	if err := Distinct(srcs...); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	base := docs[0]
	for i, d := range docs[1:] {
		if err := sameSettings(documentSettings(base), documentSettings(d), i+2); err != nil {
			return nil, fmt.Errorf("merge: %w: measurements from different setups are not one measurement", err)
		}
	}
	groups, err := matchRuns(docs)
	if err != nil {
		return nil, err
	}
	out := mergedHeader(docs)
	turnOffsets := make([]int, len(docs))
	for i := 1; i < len(docs); i++ {
		turnOffsets[i] = turnOffsets[i-1] + lastTurn(docs[i-1])
	}
	for _, g := range groups {
		r, err := mergeRuns(g, turnOffsets)
		if err != nil {
			return nil, fmt.Errorf("merge: run %d (%s on %s): %w", g[0].run+1, g[0].r.Workload, g[0].r.Target, err)
		}
		out.Runs = append(out.Runs, r)
	}
	out.Comparisons = Compare(out)
	return out, nil
}

// mergedHeader is what documents merged into one share, whatever their runs: the first one's
// scenario and environment, the earliest start and latest end, every host and stop reason, and
// every skipped pair once.
func mergedHeader(docs []*Document) *Document {
	base := docs[0]
	out := &Document{Schema: Schema, Command: base.Command, Scenario: base.Scenario, Env: base.Env, Order: base.Order}
	var hosts, reasons []string
	for _, d := range docs {
		if out.Created.IsZero() || (!d.Created.IsZero() && d.Created.Before(out.Created)) {
			out.Created = d.Created
		}
		if d.Ended.After(out.Ended) {
			out.Ended = d.Ended
		}
		out.Interrupted = out.Interrupted || d.Interrupted
		hosts = appendNew(hosts, d.Env.Hostname)
		reasons = appendNew(reasons, d.StopReason)
		for _, k := range d.Skipped {
			if !out.HasSkip(k.Workload, k.Target) {
				out.Skipped = append(out.Skipped, k)
			}
		}
		// Every shard or repetition of a replay found the same impact before its load (the
		// same log, policy and data): one of each is kept.
		for _, r := range d.Replays {
			if !slices.ContainsFunc(out.Replays, func(o Replay) bool { return o.Workload == r.Workload && o.Log == r.Log }) {
				out.Replays = append(out.Replays, r)
			}
		}
	}
	out.Env.Hostname = strings.Join(hosts, ", ")
	out.StopReason = strings.Join(reasons, "; ")
	return out
}

// placed is one run of one of the merged documents.
type placed struct {
	doc, run int // 0-based indexes
	r        *Run
}

// matchRuns pairs every run of the first document with its counterparts in the others, in the
// first document's order.
func matchRuns(docs []*Document) ([][]placed, error) {
	type key struct {
		workload, target string
		k                int // the k-th run of this pair in its document
	}
	keys := func(d *Document) []key {
		seen := map[[2]string]int{}
		out := make([]key, len(d.Runs))
		for i, r := range d.Runs {
			pair := [2]string{r.Workload, r.Target}
			out[i] = key{r.Workload, r.Target, seen[pair]}
			seen[pair]++
		}
		return out
	}
	baseKeys := keys(docs[0])
	groups := make([][]placed, len(baseKeys))
	at := map[key]int{}
	for i, k := range baseKeys {
		at[k] = i
		groups[i] = []placed{{0, i, &docs[0].Runs[i]}}
	}
	for di, d := range docs[1:] {
		di++
		found := 0
		for ri, k := range keys(d) {
			g, ok := at[k]
			if !ok {
				return nil, fmt.Errorf("merge: document %d has a run of %s on %s (run %d) that document 1 lacks: merged documents must hold the same runs",
					di+1, k.workload, k.target, ri+1)
			}
			groups[g] = append(groups[g], placed{di, ri, &d.Runs[ri]})
			found++
		}
		if found < len(baseKeys) {
			for g, k := range baseKeys {
				if len(groups[g]) <= di {
					return nil, fmt.Errorf("merge: document %d has no run of %s on %s (run %d of document 1): merged documents must hold the same runs",
						di+1, k.workload, k.target, g+1)
				}
			}
		}
	}
	return groups, nil
}

// setting is one named value two documents or runs must share to be merged.
type setting struct {
	name  string
	value any
}

// sameSettings returns an error naming the first setting in which other (document n, 1-based)
// differs from base (document 1).
func sameSettings(base, other []setting, n int) error {
	for i, s := range base {
		o := other[i]
		if o.name != s.name {
			// Two kinds of one setting: the load's schedule, a rate against stages.
			return fmt.Errorf("%s is %s in document %d, %s %s in document 1", o.name, show(o.value), n, s.name, show(s.value))
		}
		if differs(o.value, s.value) {
			return fmt.Errorf("%s is %s in document %d, %s in document 1", s.name, show(o.value), n, show(s.value))
		}
	}
	return nil
}

// scheduleValue is a schedule's Value as a setting: written as it is, a figure or a word.
type scheduleValue string

// unrecorded is the value of a setting a run's figures say nothing of.
type unrecorded struct{}

// differs reports whether two runs' values of a setting are different setups; an unrecorded one
// differs from none.
func differs(a, b any) bool {
	if a == (unrecorded{}) || b == (unrecorded{}) {
		return false
	}
	return a != b
}

// show writes a setting's value, words quoted.
func show(v any) string {
	switch v.(type) {
	case string, LoadModel, Placement:
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprint(v)
}

// documentSettings are what every merged document must share: the environment that shapes the
// figures (not the host's name, which shards on several machines differ in) and how the
// repetitions were ordered.
func documentSettings(d *Document) []setting {
	e := d.Env
	return []setting{
		{"scenario", d.Scenario}, {"order", d.Order},
		{"env.cpu_model", e.CPUModel}, {"env.cores", e.Cores}, {"env.gomaxprocs", e.GOMAXPROCS},
		{"env.os", e.OS}, {"env.kernel", e.Kernel}, {"env.arch", e.Arch}, {"env.go", e.Go},
		{"env.engines", engineList(e)}, {"env.authzbench", e.Authzbench}, {"env.commit", e.Commit},
		{"env.pinning", e.Pinning},
	}
}

// engineList writes the linked engines' versions as one setting: "cedar-go v1.2.6, opa 1.22.2".
func engineList(e Env) string {
	var parts []string
	for _, v := range e.EngineVersions() {
		parts = append(parts, v.Name+" "+v.Version)
	}
	return strings.Join(parts, ", ")
}

// runSettings are what the runs merged into one must share: what was asked of the engine, how it
// was deployed, and the load.
func runSettings(r *Run) []setting {
	w, l, u := r.WorkloadDoc, r.Load, r.SUT
	// The load first: a target's pool follows it, and the load is what the user set. The
	// schedule is one setting named by its kind (load.workers, load.rate, load.stages,
	// load.replay), its value as exact as its key.
	sched := l.Schedule()
	s := []setting{
		{"load.model", l.Model}, {"load." + sched.Kind(), scheduleValue(sched.Value(exact))},
		{"load.connections", l.Connections}, {"load.duration_s", l.DurationS}, {"load.warmup_s", l.WarmupS},
		{"load.requests", l.Requests}, {"load.timeout_s", l.TimeoutS}, {"load.generator_procs", l.GeneratorProcs},
		{"load.coalesce_us", l.CoalesceUS}, {"load.input_skew", l.InputSkew}, {"sut.caches", cachesSetting(u.Caches)},
		{"workload_info.description", w.Description}, {"workload_info.handed", w.Handed.String()},
		{"workload_info.query", w.Query}, {"workload_info.inputs", w.Inputs},
		{"workload_info.expect_allow", w.ExpectAllow}, {"workload_info.expect_deny", w.ExpectDeny},
		{"workload_info.unverified", w.Unverified}, {"workload_info.undefined_as", w.UndefinedAs},
		{"workload_info.rego_version", w.RegoVersion},
		{"sut.engine", u.Engine}, {"sut.mode", u.Mode}, {"sut.placement", u.Placement}, {"sut.version", u.Version},
		{"sut.external", u.External}, {"sut.log_level", u.LogLevel}, {"sut.connections", u.Connections}, {"sut.replicas", max(1, len(u.Replicas))},
		{"sut.tls.mode", tlsMode(u.TLS)}, {"sut.http2", u.HTTP2}, {"pinning", r.Pinning},
	}
	// A server someone else runs is the same system under test only at the same address; the
	// address of one authzbench started is a free port, different every time.
	if u.External {
		s = append(s, setting{"sut.url", u.URL})
	}
	// A run that opened no connection in its measured window (they all opened in the warm-up)
	// recorded nothing of reuse: unrecorded, which another run's either way matches.
	reuse := any(unrecorded{})
	if c := r.Summary.Connections; c != nil {
		reuse = c.Reused
	}
	s = append(s, setting{"connection reuse", reuse})
	if o := r.Summary.Open; o != nil {
		s = append(s, setting{"open.late_after_us", o.LateAfterUS})
	}
	return s
}

// tlsMode is the TLS a run spoke, "" in clear: plain, TLS and mutual TLS are three systems
// under test, as Run.Label reads them.
func tlsMode(t *TLS) string {
	if t == nil {
		return ""
	}
	return t.Mode
}

func mergeRuns(g []placed, turnOffsets []int) (Run, error) {
	first := g[0].r
	for _, p := range g[1:] {
		a, b := runSettings(first), runSettings(p.r)
		if len(a) != len(b) {
			// One run counted connections or kept an open-loop schedule and the other did not.
			return Run{}, fmt.Errorf("the run in document %d measured other figures than in document 1 (connections, open loop)", p.doc+1)
		}
		if err := sameSettings(a, b, p.doc+1); err != nil {
			return Run{}, err
		}
	}
	out := Run{
		Target: first.Target, Workload: first.Workload, WorkloadDoc: first.WorkloadDoc, SUT: first.SUT,
		Load: first.Load, Pinning: first.Pinning, Affinity: first.Affinity, Scale: first.Scale,
	}
	var errs []string
	var runs []*Run
	for _, p := range g {
		runs = append(runs, p.r)
		for _, rep := range p.r.Repetitions {
			if rep.Turn > 0 {
				rep.Turn += turnOffsets[p.doc]
			}
			out.Repetitions = append(out.Repetitions, rep)
		}
		out.Partial = out.Partial || p.r.Partial
		errs = appendNew(errs, p.r.Error)
		if out.Affinity == nil {
			out.Affinity = p.r.Affinity
		}
	}
	out.Error = strings.Join(errs, "; ")
	s, err := mergeSummaries(runs, out.Load, out.Repetitions)
	if err != nil {
		return Run{}, err
	}
	out.Summary = s
	out.Harness = mergeHarness(runs, s.Requests)
	out.SUTResources = mergeResources(runs)
	out.SUT.Caches = mergeCaches(runs)
	// A run whose world changed judged its answers against its own writer's log: alone it is
	// kept whole; beside another document's run nothing can add them (a run with changes is
	// refused shards and repetitions for the same reason).
	for _, p := range g {
		if p.r.Changes == nil && len(p.r.Operations) == 0 {
			continue
		}
		if len(g) > 1 {
			return Run{}, fmt.Errorf("%s on %s in document %d changed its world during the run (--changes): its answers were judged against its own writes, and no other run's can be added to them", p.r.Workload, p.r.Target, p.doc+1)
		}
		out.Changes, out.Operations = p.r.Changes, p.r.Operations
	}
	return out, nil
}

// cachesSetting is what runs merged must share of their caches: which were on, with which TTL
// (their counts add up).
func cachesSetting(caches []Cache) string {
	parts := make([]string, len(caches))
	for i, c := range caches {
		parts[i] = fmt.Sprintf("%s on=%t ttl=%gs", c.Name, c.On, c.TTLS)
	}
	return strings.Join(parts, ", ")
}

// mergeCaches is the runs' caches with their lookups and hits added up; a cache is counted only
// where every run counted it.
func mergeCaches(runs []*Run) []Cache {
	if len(runs) == 0 || runs[0].SUT.Caches == nil {
		return nil
	}
	out := append([]Cache(nil), runs[0].SUT.Caches...)
	for _, r := range runs[1:] {
		for i := range out {
			if i >= len(r.SUT.Caches) || !r.SUT.Caches[i].Counted {
				out[i].Counted, out[i].Lookups, out[i].Hits, out[i].Metrics = false, 0, 0, ""
				continue
			}
			if out[i].Counted {
				out[i].Lookups += r.SUT.Caches[i].Lookups
				out[i].Hits += r.SUT.Caches[i].Hits
			}
		}
	}
	return out
}

// histograms are a run's distributions, each the sum of its repetitions'.
type histograms struct {
	ok, errors, unsent, late, uncorrected, connect, tls, exchange, eval, handler *hdrhistogram.Histogram
	allow, deny                                                                  *hdrhistogram.Histogram
}

// add decodes a repetition's histograms and adds them in.
// OKHistogram is a run's ok latencies (ns) over all its repetitions, added exactly; nil when
// none kept a histogram.
func OKHistogram(r *Run) (*hdrhistogram.Histogram, error) {
	var h histograms
	for j, rep := range r.Repetitions {
		if err := h.add(Repetition{HDR: rep.HDR}); err != nil {
			return nil, fmt.Errorf("repetition %d: %w", j+1, err)
		}
	}
	return h.ok, nil
}

func (h *histograms) add(rep Repetition) error {
	for _, x := range []struct {
		name    string
		encoded string
		into    **hdrhistogram.Histogram
	}{
		{"hdr", rep.HDR, &h.ok}, {"error_hdr", rep.ErrorHDR, &h.errors}, {"unsent_hdr", rep.UnsentHDR, &h.unsent},
		{"late_hdr", rep.LateHDR, &h.late}, {"uncorrected_hdr", rep.Uncorrected, &h.uncorrected},
		{"connect_hdr", rep.ConnectHDR, &h.connect}, {"tls_hdr", rep.TLSHDR, &h.tls},
		{"exchange_hdr", rep.ExchangeHDR, &h.exchange}, {"server_eval_hdr", rep.ServerEvalHDR, &h.eval},
		{"server_handler_hdr", rep.ServerHandlerHDR, &h.handler},
		{"allow_hdr", rep.AllowHDR, &h.allow}, {"deny_hdr", rep.DenyHDR, &h.deny},
	} {
		if x.encoded == "" {
			continue
		}
		d, err := DecodeHistogram(x.encoded)
		if err != nil {
			return fmt.Errorf("repetition %s: %w", x.name, err)
		}
		sum, err := addHistograms(*x.into, d)
		if err != nil {
			return fmt.Errorf("repetition %s: %w", x.name, err)
		}
		*x.into = sum
	}
	return nil
}

// PartOf is the percentiles of a part of the requests' time, nil when none was kept (in clear
// for the TLS part, or a file written before parts were).
func PartOf(h *hdrhistogram.Histogram) *Percentiles {
	if total(h) == 0 {
		return nil
	}
	p := PercentilesOf(h, 0)
	return &p
}

// addHistograms returns the sum of a (nil for none yet) and b, in a histogram that holds both's
// range: the recorders' histograms share their floor and significant figures, so the same
// buckets whatever their ceilings, and nothing moves.
func addHistograms(a, b *hdrhistogram.Histogram) (*hdrhistogram.Histogram, error) {
	if a == nil {
		a = hdrhistogram.New(b.LowestTrackableValue(), b.HighestTrackableValue(), int(b.SignificantFigures()))
	}
	if a.LowestTrackableValue() != b.LowestTrackableValue() || a.SignificantFigures() != b.SignificantFigures() {
		return nil, fmt.Errorf("histograms of different precision (floor %d and %d, %d and %d significant figures) do not add exactly",
			a.LowestTrackableValue(), b.LowestTrackableValue(), a.SignificantFigures(), b.SignificantFigures())
	}
	if b.HighestTrackableValue() > a.HighestTrackableValue() {
		wider := hdrhistogram.New(a.LowestTrackableValue(), b.HighestTrackableValue(), int(a.SignificantFigures()))
		if dropped := wider.Merge(a); dropped != 0 {
			return nil, fmt.Errorf("%d values lost widening a histogram", dropped)
		}
		a = wider
	}
	if dropped := a.Merge(b); dropped != 0 {
		return nil, fmt.Errorf("%d values lost adding histograms", dropped)
	}
	return a, nil
}

// correctedPercentiles is an open loop's latency with the sends that never went out charged
// (their wait to the window's end, in unsent), as a run records it (bench's Corrected).
func correctedPercentiles(ok, unsent *hdrhistogram.Histogram) (Percentiles, error) {
	corrected, err := addHistograms(nil, unsent)
	if err == nil && ok != nil {
		corrected, err = addHistograms(corrected, ok)
	}
	if err != nil {
		return Percentiles{}, err
	}
	return PercentilesOf(corrected, 0), nil
}

func total(h *hdrhistogram.Histogram) int64 {
	if h == nil {
		return 0
	}
	return h.TotalCount()
}

// mergeSummaries recomputes one summary for runs whose repetitions, concatenated, are reps,
// measured under load: counts are summed from the runs' summaries, distributions read from the
// repetitions' histograms added up.
func mergeSummaries(runs []*Run, load Load, reps []Repetition) (Summary, error) {
	var h histograms
	for i, rep := range reps {
		if err := h.add(rep); err != nil {
			return Summary{}, fmt.Errorf("repetition %d: %w", i+1, err)
		}
	}
	var s Summary
	// The exact mean of the ok latencies (the recorders' sum, not the histogram's approximation):
	// each run's weighted by its ok responses, or a lone run's as written.
	var okSum, okMean float64 // µs
	var meanFrom int
	var open *OpenSummary
	var server, connections bool
	var opened, sampled int64 // as the summaries count them
	for _, r := range runs {
		x := r.Summary
		s.Requests += x.Requests
		s.OK += x.OK
		s.WrongDecision += x.WrongDecision
		s.Errors += x.Errors
		s.UnverifiedOK += x.UnverifiedOK
		s.Clamped += x.Clamped
		s.LatencyCeilingS = max(s.LatencyCeilingS, x.LatencyCeilingS)
		if x.ErrorClasses != nil && s.ErrorClasses == nil {
			s.ErrorClasses = map[string]uint64{}
		}
		for c, n := range x.ErrorClasses {
			s.ErrorClasses[c] += n
		}
		for c, m := range x.ErrorMessages {
			if _, ok := s.ErrorMessages[c]; !ok {
				if s.ErrorMessages == nil {
					s.ErrorMessages = map[string]string{}
				}
				s.ErrorMessages[c] = m // each class keeps the first document's first message
			}
		}
		s.Mismatches = mergeMismatches(s.Mismatches, x.Mismatches)
		if x.OK > 0 {
			okMean = x.LatencyUS.Mean
			if x.Open != nil {
				okMean = x.Open.OKLatencyUS.Mean // an open-loop run with unsent sends keeps it apart
			}
			okSum += okMean * float64(x.OK)
			meanFrom++
		}
		if o := x.Open; o != nil {
			if open == nil {
				open = &OpenSummary{LateAfterUS: o.LateAfterUS}
			}
			open.Intended += o.Intended
			open.Sent += o.Sent
			open.Unsent += o.Unsent
			open.LateSends += o.LateSends
			open.GeneratorLate += o.GeneratorLate
			open.RateMissed = open.RateMissed || o.RateMissed
			open.Sender = SenderOf(open.Sender, o.Sender)
		}
		if c := x.Connections; c != nil {
			if s.Connections == nil {
				s.Connections = &Connections{Reused: c.Reused}
			}
			s.Connections.Expected += c.Expected
			s.Connections.Reconnects += c.Reconnects
			opened += c.Opened
			connections = true
		}
		if x.Server != nil {
			sampled += x.Server.Sampled
			server = true
		}
	}
	if got := total(h.ok); got != int64(s.OK) {
		return Summary{}, fmt.Errorf("the repetitions' latency histograms hold %d ok responses, the summaries count %d", got, s.OK)
	}
	if meanFrom > 1 {
		okMean = okSum / float64(s.OK)
	}
	if h.ok != nil {
		s.LatencyUS = PercentilesOf(h.ok, 0)
		s.LatencyUS.Mean = okMean
		if h.ok.TotalCount() > 0 {
			b := BeyondOf(h.ok)
			s.LatencyBeyond = &b
		}
	}
	var rps, achieved []float64
	for _, r := range reps {
		if r.ElapsedS > 0 {
			rps = append(rps, r.ThroughputRPS)
			achieved = append(achieved, r.AchievedRPS)
		}
	}
	s.ThroughputRPS = SpreadOf(rps)
	s.ShortWindow = ShortWindowOf(load, reps)
	if total(h.errors) > 0 {
		p := PercentilesOf(h.errors, 0)
		s.ErrorLatencyUS = &p
	}
	// Apart by decision only where every ok response was kept so: a file written before they
	// were would leave some out, and the split would not add up to ok.
	if d := DecisionsOf(h.allow, h.deny); d != nil && d.Allow.Count+d.Deny.Count == s.OK {
		s.Decisions = d
	}
	if connections {
		if err := stored("connect times", h.connect, opened); err != nil {
			return Summary{}, err
		}
		s.Connections.Opened = h.connect.TotalCount()
		s.Connections.ConnectUS = PercentilesOf(h.connect, 0)
		s.Connections.TLSUS, s.Connections.ExchangeUS = PartOf(h.tls), PartOf(h.exchange)
	}
	if server {
		if err := stored("server timers", h.handler, sampled); err != nil {
			return Summary{}, err
		}
		if h.eval == nil {
			return Summary{}, errors.New("its server timers cannot be merged exactly: the repetitions hold no evaluation times")
		}
		s.Server = &ServerTimes{Sampled: h.handler.TotalCount(), EvalUS: PercentilesOf(h.eval, 0), HandlerUS: PercentilesOf(h.handler, 0)}
		a, err := AttributionOfRepetitions(reps, h.ok)
		if err != nil {
			return Summary{}, err
		}
		s.Attribution = a
	}
	if open != nil {
		if total(h.late) == 0 && open.Intended > 0 {
			return Summary{}, errors.New("its lateness is kept only as percentiles: it cannot be merged exactly")
		}
		open.OKLatencyUS = s.LatencyUS
		if h.late != nil {
			open.LatenessUS = PercentilesOf(h.late, 0)
		}
		if h.uncorrected != nil {
			open.UncorrectedLatencyUS = PercentilesOf(h.uncorrected, 0)
		}
		open.AchievedRPS = SpreadOf(achieved)
		if open.Unsent > 0 {
			// A stall that kept sends from going out shows in the latency, not only in a count.
			if got := total(h.unsent); got != open.Unsent {
				return Summary{}, fmt.Errorf("the repetitions' unsent histograms hold %d sends, the summaries count %d unsent", got, open.Unsent)
			}
			corrected, err := correctedPercentiles(h.ok, h.unsent)
			if err != nil {
				return Summary{}, err
			}
			open.LatencyIncludesUnsent = true
			s.LatencyUS = corrected
		}
		s.Open = open
	}
	return s, nil
}

// stored checks that the repetitions' histograms of a distribution hold every value the
// summaries counted: files written before it was stored as a histogram kept only percentiles,
// which cannot be added.
func stored(what string, h *hdrhistogram.Histogram, counted int64) error {
	if h != nil && h.TotalCount() == counted {
		return nil
	}
	return fmt.Errorf("its %s cannot be merged exactly: the repetitions' histograms hold %d, its summaries count %d "+
		"(a file written before they were stored as histograms keeps only their percentiles)", what, total(h), counted)
}

// mergeMismatches keeps the lowest-numbered inputs given a wrong decision, each once: the
// lowest MismatchesKept of each list are among the lowest of their union.
func mergeMismatches(a, b []Mismatch) []Mismatch {
	if len(b) == 0 {
		return a
	}
	out := append(append([]Mismatch{}, a...), b...)
	slices.SortStableFunc(out, func(x, y Mismatch) int { return x.Input - y.Input })
	out = slices.CompactFunc(out, func(x, y Mismatch) bool { return x.Input == y.Input })
	if len(out) > MismatchesKept {
		out = out[:MismatchesKept]
	}
	return out
}

// mergeHarness adds the authzbench process's CPU over every run, and takes memory at the first
// start, the last end and the highest peak.
func mergeHarness(runs []*Run, requests uint64) *Harness {
	var out *Harness
	for _, r := range runs {
		h := r.Harness
		if h == nil {
			continue
		}
		if out == nil {
			out = &Harness{RSSStartMB: h.RSSStartMB}
		}
		out.CPUSeconds += h.CPUSeconds
		out.RSSEndMB = h.RSSEndMB
		out.RSSPeakMB = max(out.RSSPeakMB, h.RSSPeakMB)
	}
	if out != nil && requests > 0 {
		out.CPUPerRequestUS = out.CPUSeconds * 1e6 / float64(requests)
	}
	return out
}

// mergeResources averages the server's CPU over the runs' repetitions, as a run averages it
// over its turns, and keeps the peaks.
func mergeResources(runs []*Run) *Resources {
	var out *Resources
	var weight float64
	var sampled []*Resources
	for _, r := range runs {
		if r.SUTResources != nil {
			sampled = append(sampled, r.SUTResources)
		}
	}
	if len(sampled) == 1 {
		one := *sampled[0]
		return &one
	}
	for _, r := range runs {
		res := r.SUTResources
		if res == nil {
			continue
		}
		if out == nil {
			out = &Resources{}
		}
		w := float64(max(1, len(r.Repetitions)))
		out.CPUCoresMean += res.CPUCoresMean * w
		weight += w
		out.CPUCoresMax = max(out.CPUCoresMax, res.CPUCoresMax)
		out.RSSMaxMB = max(out.RSSMaxMB, res.RSSMaxMB)
		out.Samples += res.Samples
	}
	if out != nil {
		out.CPUCoresMean /= weight
	}
	return out
}

// lastTurn is the highest turn of a document's repetitions: the next document's turns follow it.
func lastTurn(d *Document) int {
	last := 0
	for _, r := range d.Runs {
		for _, rep := range r.Repetitions {
			last = max(last, rep.Turn)
		}
	}
	return last
}

// appendNew appends s unless it is empty or already there.
func appendNew(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
