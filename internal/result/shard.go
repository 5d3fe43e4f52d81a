package result

import (
	"errors"
	"fmt"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Shard is the part of a scenario one generator ran when N generators split it (--shard i/N):
// in closed loop its share of the workers, in open loop its share of the schedule (every N-th
// send). Merged with the other N−1 (MergeShards), the shards are one measurement.
type Shard struct {
	Index int `json:"index"` // 1 to Count
	Count int `json:"count"`
	// StartAt is the instant every shard was told to start its load at (--start-at); zero when
	// the shard started as soon as it could.
	StartAt time.Time `json:"start_at,omitzero"`
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ShardPart is one shard of a merged document: which part it was, the file it came from, and
// its environment as it was (shards may run on different machines).
type ShardPart struct {
	Shard   Shard     `json:"shard"`
	File    string    `json:"file,omitempty"`
	Created time.Time `json:"created"`
	Env     Env       `json:"env"`
	Command []string  `json:"command,omitempty"`
}

// Source is a document with the name it was read from, for messages that name files.
type Source struct {
	Name string
	Doc  *Document
}

// MergeShards combines the N shards of one sharded scenario into the document one generator
// would have written, exactly: repetition k of every shard becomes repetition k of the merged
// run, its histograms (latency, error, uncorrected, lateness, unsent, connection parts, server
// timers) added, its counts summed, and its throughput taken over the common window (from the
// first shard's measured start to the last shard's measured end). The summary is then
// recomputed from those repetitions as Merge recomputes it, never by averaging percentiles.
//
// It refuses, naming the files, shards that do not belong together: a document that is no
// shard, shards of different counts, a shard twice or one missing, or runs that differ in
// workload, target, load, deployment or histogram precision. Each shard's environment is kept
// in the merged document's Shards.
func MergeShards(srcs ...Source) (*Document, error) {
	if len(srcs) == 0 {
		return nil, errors.New("merge: no documents")
	}
	name := func(i int) string {
		if srcs[i].Name != "" {
			return srcs[i].Name
		}
		return fmt.Sprintf("document %d", i+1)
	}
	byIndex := map[int]int{}
	count := 0
	for i, s := range srcs {
		d := s.Doc
		switch {
		case d == nil:
			return nil, fmt.Errorf("merge: %s is missing", name(i))
		case d.Schema != Schema:
			return nil, fmt.Errorf("merge: %s has schema %q, want %q", name(i), d.Schema, Schema)
		case d.Shard == nil:
			return nil, fmt.Errorf("merge: %s is not a shard (no --shard): shards and whole runs do not merge as one measurement", name(i))
		}
		if count == 0 {
			count = d.Shard.Count
		}
		if d.Shard.Count != count {
			return nil, fmt.Errorf("merge: %s is shard %s, %s is shard %s: shards of different splits", name(i), d.Shard, name(0), srcs[0].Doc.Shard)
		}
		if j, dup := byIndex[d.Shard.Index]; dup {
			return nil, fmt.Errorf("merge: %s and %s are both shard %s: overlapping shards", name(j), name(i), d.Shard)
		}
		byIndex[d.Shard.Index] = i
		if !d.Shard.StartAt.Equal(srcs[0].Doc.Shard.StartAt) {
			return nil, fmt.Errorf("merge: %s started at %s, %s at %s: shards of different starts are not one measurement",
				name(i), startAt(d.Shard.StartAt), name(0), startAt(srcs[0].Doc.Shard.StartAt))
		}
	}
	var missing []string
	for k := 1; k <= count; k++ {
		if _, ok := byIndex[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, count))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("merge: shard %s missing (given: %s): a merge needs every shard", strings.Join(missing, ", "), givenShards(srcs))
	}
	// In shard order, so the merged document reads the same whatever order the files came in.
	ordered := make([]Source, count)
	for k := 1; k <= count; k++ {
		ordered[k-1] = srcs[byIndex[k]]
	}
	base := ordered[0].Doc
	for i, s := range ordered[1:] {
		d := s.Doc
		for _, c := range []setting{{"scenario", d.Scenario}, {"order", d.Order}} {
			want := map[string]string{"scenario": base.Scenario, "order": base.Order}[c.name]
			if c.value != want {
				return nil, fmt.Errorf("merge: %s %s %q, %s %q: shards of different scenarios", ordered[i+1].Name, c.name, c.value, ordered[0].Name, want)
			}
		}
	}
	if err := Distinct(ordered...); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	docs := make([]*Document, len(ordered))
	for i, s := range ordered {
		docs[i] = s.Doc
	}
	groups, err := matchRuns(docs)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, fileList(ordered))
	}
	out := mergedHeader(docs)
	for _, s := range ordered {
		d := s.Doc
		out.Shards = append(out.Shards, ShardPart{Shard: *d.Shard, File: s.Name, Created: d.Created, Env: d.Env, Command: d.Command})
	}
	for _, g := range groups {
		r, err := mergeShardRuns(g, ordered)
		if err != nil {
			return nil, fmt.Errorf("merge: run %d (%s on %s): %w", g[0].run+1, g[0].r.Workload, g[0].r.Target, err)
		}
		out.Runs = append(out.Runs, r)
	}
	out.Comparisons = Compare(out)
	return out, nil
}

func startAt(t time.Time) string {
	if t.IsZero() {
		return "no --start-at"
	}
	return t.Format(time.RFC3339)
}

func givenShards(srcs []Source) string {
	var parts []string
	for i, s := range srcs {
		n := s.Name
		if n == "" {
			n = fmt.Sprintf("document %d", i+1)
		}
		parts = append(parts, fmt.Sprintf("%s is %s", n, s.Doc.Shard))
	}
	return strings.Join(parts, ", ")
}

func fileList(srcs []Source) string {
	names := make([]string, len(srcs))
	for i, s := range srcs {
		names[i] = s.Name
	}
	return FileList(names)
}

// FileList names the files behind merge's "document N" in its errors: "document 1 is a.json,
// document 2 is b.json".
func FileList(names []string) string {
	var parts []string
	for i, n := range names {
		parts = append(parts, fmt.Sprintf("document %d is %s", i+1, n))
	}
	return strings.Join(parts, ", ")
}

// shardRunSettings are runSettings less what differs between shards by design: a closed loop's
// share of the workers, and the server's own pool (sized by that share).
func shardRunSettings(r *Run) []setting {
	var out []setting
	for _, s := range runSettings(r) {
		if s.name == "sut.connections" {
			continue
		}
		out = append(out, s)
	}
	return out
}

func mergeShardRuns(g []placed, srcs []Source) (Run, error) {
	first := g[0].r
	if len(g) != len(srcs) {
		return Run{}, fmt.Errorf("%d of %d shards hold it", len(g), len(srcs))
	}
	var workers int
	for _, p := range g {
		a, b := shardRunSettings(first), shardRunSettings(p.r)
		if len(a) != len(b) {
			return Run{}, fmt.Errorf("%s measured other figures than %s (connections, open loop)", srcs[p.doc].Name, srcs[0].Name)
		}
		for i, s := range a {
			if differs(b[i].value, s.value) {
				return Run{}, fmt.Errorf("%s is %s in %s, %s in %s: shards of different setups are not one measurement",
					s.name, show(b[i].value), srcs[p.doc].Name, show(s.value), srcs[0].Name)
			}
		}
		if len(p.r.Repetitions) != len(first.Repetitions) {
			return Run{}, fmt.Errorf("%s has %d repetitions, %s %d", srcs[p.doc].Name, len(p.r.Repetitions), srcs[0].Name, len(first.Repetitions))
		}
		workers += p.r.Load.ShardWorkers
	}
	if first.Load.Model == ClosedLoop && workers != first.Load.Workers {
		return Run{}, fmt.Errorf("the shards ran %d workers in all, the load asks for %d", workers, first.Load.Workers)
	}
	out := Run{
		Target: first.Target, Workload: first.Workload, WorkloadDoc: first.WorkloadDoc, SUT: first.SUT,
		Load: first.Load, Pinning: first.Pinning, Affinity: first.Affinity, Scale: first.Scale,
	}
	out.Load.ShardWorkers = 0
	out.SUT.Connections = 0
	var errs []string
	var runs []*Run
	for _, p := range g {
		runs = append(runs, p.r)
		out.SUT.Connections += p.r.SUT.Connections
		out.Partial = out.Partial || p.r.Partial
		errs = appendNew(errs, p.r.Error)
	}
	out.Error = strings.Join(errs, "; ")
	for k := range first.Repetitions {
		parts := make([]Repetition, len(g))
		for i, p := range g {
			parts[i] = p.r.Repetitions[k]
		}
		rep, err := addRepetitions(parts)
		if err != nil {
			return Run{}, fmt.Errorf("repetition %d: %w", k+1, err)
		}
		out.Repetitions = append(out.Repetitions, rep)
	}
	s, err := mergeSummaries(runs, out.Load, out.Repetitions)
	if err != nil {
		return Run{}, err
	}
	out.Summary = s
	out.Harness = mergeHarness(runs, s.Requests)
	out.SUTResources = mergeResources(runs)
	return out, nil
}

// addRepetitions is one repetition made of the shards' repetitions run side by side: counts
// summed, histograms added, throughput over the common window.
func addRepetitions(parts []Repetition) (Repetition, error) {
	out := Repetition{Turn: parts[0].Turn, Started: parts[0].Started, ID: shardRepetitionID(parts)}
	if out.ID != "" {
		for _, p := range parts {
			out.Parts = append(out.Parts, p.ID)
		}
	}
	var h histograms
	var from, to time.Time
	var sent float64
	var sample *Sample
	for _, p := range parts {
		if err := h.add(p); err != nil {
			return Repetition{}, err
		}
		out.Requests += p.Requests
		out.OK += p.OK
		out.Errors += p.Errors
		out.Clamped += p.Clamped
		out.Partial = out.Partial || p.Partial
		out.Intended += p.Intended
		out.Unsent += p.Unsent
		out.LateSends += p.LateSends
		out.GenLate += p.GenLate
		out.RateMissed = out.RateMissed || p.RateMissed
		out.OpenSender = SenderOf(out.OpenSender, p.OpenSender)
		sent += p.AchievedRPS * p.ElapsedS
		for c, n := range p.ErrorClasses {
			if out.ErrorClasses == nil {
				out.ErrorClasses = map[string]uint64{}
			}
			out.ErrorClasses[c] += n
		}
		for c, m := range p.ErrorMessages {
			if _, ok := out.ErrorMessages[c]; !ok {
				if out.ErrorMessages == nil {
					out.ErrorMessages = map[string]string{}
				}
				out.ErrorMessages[c] = m
			}
		}
		if !p.Started.IsZero() && (out.Started.IsZero() || p.Started.Before(out.Started)) {
			out.Started = p.Started
		}
		start := p.MeasuredFrom
		if start.IsZero() {
			start = p.Started // written before measured starts were: the turn's start
		}
		end := start.Add(time.Duration(p.ElapsedS * float64(time.Second)))
		if from.IsZero() || start.Before(from) {
			from = start
		}
		if end.After(to) {
			to = end
		}
		out.ElapsedS = max(out.ElapsedS, p.ElapsedS)
		if p.ServerSample != "" {
			s, err := DecodeSample(p.ServerSample)
			if err != nil {
				return Repetition{}, err
			}
			if sample == nil {
				sample = s
			} else {
				sample.Merge(s)
			}
		}
	}
	if !from.IsZero() && to.After(from) {
		// The common window: from the first shard's measured start to the last one's end. A
		// shard that started late lowers the merged throughput rather than inflating it.
		out.ElapsedS = max(out.ElapsedS, to.Sub(from).Seconds())
		out.MeasuredFrom = from
	}
	if out.ElapsedS > 0 {
		out.ThroughputRPS = float64(out.OK) / out.ElapsedS
		out.AchievedRPS = sent / out.ElapsedS
	}
	// As a run records a repetition: the sends a stall kept from going out are charged in its
	// latency; without them, the exact mean of the shards' answers, weighted by their count.
	switch {
	case total(h.unsent) > 0:
		p, err := correctedPercentiles(h.ok, h.unsent)
		if err != nil {
			return Repetition{}, err
		}
		out.LatencyUS = p
	case h.ok != nil && out.OK > 0:
		var meanNanos float64
		for _, p := range parts {
			meanNanos += p.LatencyUS.Mean * 1e3 * float64(p.OK) / float64(out.OK)
		}
		out.LatencyUS = PercentilesOf(h.ok, meanNanos)
	}
	for _, x := range []struct {
		h    *hdrhistogram.Histogram
		into *string
	}{
		{h.ok, &out.HDR}, {h.errors, &out.ErrorHDR}, {h.unsent, &out.UnsentHDR}, {h.late, &out.LateHDR},
		{h.uncorrected, &out.Uncorrected}, {h.connect, &out.ConnectHDR}, {h.tls, &out.TLSHDR},
		{h.exchange, &out.ExchangeHDR}, {h.eval, &out.ServerEvalHDR}, {h.handler, &out.ServerHandlerHDR},
	} {
		if x.h == nil {
			continue
		}
		s, err := EncodeHistogram(x.h)
		if err != nil {
			return Repetition{}, err
		}
		*x.into = s
	}
	if sample != nil {
		s, err := EncodeSample(sample)
		if err != nil {
			return Repetition{}, err
		}
		out.ServerSample = s
	}
	return out, nil
}

// MinShardOverlap is the share of its common window a merged repetition's shards must all have
// been measuring together in, before the merge says they were not: the merged throughput is
// taken over the whole common window, so shards run apart read lower than they ran.
const MinShardOverlap = 0.9

// ShardsApart says, for each repetition of a merge of shards (srcs, as MergeShards takes them)
// whose measured windows overlapped for less than MinShardOverlap of the common window, how far
// apart they ran: two shards started by hand seconds apart merged into half the throughput
// either read, in silence. Repetitions without measured starts are passed over.
func ShardsApart(srcs ...Source) []string {
	docs := make([]*Document, len(srcs))
	for i, s := range srcs {
		docs[i] = s.Doc
	}
	groups, err := matchRuns(docs)
	if err != nil {
		return nil // MergeShards refuses them
	}
	var out []string
	for _, g := range groups {
		for k := range g[0].r.Repetitions {
			type window struct {
				file       string
				start, end time.Time
			}
			var ws []window
			for _, p := range g {
				if k >= len(p.r.Repetitions) || p.r.Repetitions[k].MeasuredFrom.IsZero() {
					ws = nil
					break
				}
				rep := p.r.Repetitions[k]
				ws = append(ws, window{srcs[p.doc].Name, rep.MeasuredFrom, rep.MeasuredFrom.Add(time.Duration(rep.ElapsedS * float64(time.Second)))})
			}
			if len(ws) < 2 {
				continue
			}
			first, last := ws[0], ws[0] // the earliest to end, the latest to start
			from, to := ws[0].start, ws[0].end
			var longest time.Duration
			for _, w := range ws {
				longest = max(longest, w.end.Sub(w.start))
				if w.start.After(last.start) {
					last = w
				}
				if w.end.Before(first.end) {
					first = w
				}
				from, to = minTime(from, w.start), maxTime(to, w.end)
			}
			common, together := to.Sub(from), first.end.Sub(last.start)
			if common <= 0 || float64(together) >= MinShardOverlap*float64(common) {
				continue
			}
			what := fmt.Sprintf("run %d (%s on %s), repetition %d", g[0].run+1, g[0].r.Workload, g[0].r.Target, k+1)
			if together <= 0 {
				out = append(out, fmt.Sprintf("%s: the shards' measured windows never overlapped: %s began measuring %s after %s had ended; its req/s is taken over the %s from the first start to the last end, where each shard measured %s at most (give every shard one --start-at)",
					what, last.file, roundShort(-together), first.file, roundShort(common), roundShort(longest)))
				continue
			}
			out = append(out, fmt.Sprintf("%s: the shards measured together for %s of the %s from the first start to the last end (%s began %s after the first): its req/s, taken over all of it, reads lower than the load they ran (give every shard one --start-at)",
				what, roundShort(together), roundShort(common), last.file, roundShort(last.start.Sub(from))))
		}
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// roundShort is a duration to the millisecond, or to the microsecond below one.
func roundShort(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}
