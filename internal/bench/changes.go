package bench

import (
	"context"
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/metrics"
	"github.com/authzbench/authzbench/internal/result"
)

// Changes is a run's change stream as the user gave it, applied to the workload named
// Workload through each target's writes (kinds.Writable).
type Changes struct {
	Source   string
	Workload string
	Stream   *change.Stream
	// ByEngine holds a built-in family's stream in each engine's write form, by engine name;
	// nil for a file's changes, which are the same for every target (Stream).
	ByEngine map[string]*change.Stream
	Rate     float64
	// Allowed is how old a stale answer may be within the promise of the targets' consistency.
	Allowed time.Duration
	// AllowedGiven: the user gave Allowed (--stale-allowed); otherwise a target that records its
	// consistency (sut.consistency) is judged by its engine's promise.
	AllowedGiven bool
}

// withChanges gives the slot's load the stream, applied through its started target's writes.
func (sl *slot) withChanges() error {
	c := sl.o.Changes
	if c == nil || sl.w.Name != c.Workload {
		return nil
	}
	applier, err := kinds.WriterOf(sl.tg)
	if err != nil {
		return fmt.Errorf("target %s: %w", sl.ref.Name, err)
	}
	stream := c.Stream
	if s, ok := c.ByEngine[sl.kind.Engine]; ok {
		stream = s
	}
	if sl.ref.Load.Rate > 0 && sl.ref.Load.Intervals == 0 {
		sl.ref.Load.Intervals = TimelineStep(sl.ref.Load.Duration)
	}
	if p, ok := applier.(change.Preparer); ok {
		if err := p.Prepare(context.Background(), stream.Changes); err != nil {
			return fmt.Errorf("target %s: prepare the changes: %w", sl.ref.Name, err)
		}
	}
	allowed := c.Allowed
	if p := sl.run.SUT.Consistency; p != nil && !c.AllowedGiven {
		allowed = time.Duration(p.PromiseMS * float64(time.Millisecond))
	}
	sl.ref.Load.Changes = &load.Changes{Source: c.Source, Stream: stream, Applier: applier, Rate: c.Rate, Allowed: allowed,
		WriteTimeout: sl.ref.Timeout}
	return nil
}

// TimelineStep is how finely an open-loop run with changes is read over time: a tenth of a
// second, coarser where that would take more than MaxRampIntervals steps, which bounds the
// histograms the run holds.
func TimelineStep(window time.Duration) time.Duration {
	step := 100 * time.Millisecond
	if n := (window + step - 1) / step; n > MaxRampIntervals {
		step = (window + MaxRampIntervals - 1) / MaxRampIntervals
	}
	return step
}

// changesOf records what became of a run's changes: its writes as an operation of their own,
// and how its answers were judged; an open loop's intervals are its timeline.
func changesOf(c *load.Changes, out *load.ChangesOutcome, intervals []load.Interval) (*result.Changes, result.Operation, error) {
	writes := result.Operation{Name: "write", ErrorClasses: map[string]uint64{}, ErrorMessages: map[string]string{}}
	latency := metrics.NewHistogram()
	for _, w := range out.Log.Writes {
		switch {
		case w.Acknowledged():
			writes.Requests++
			writes.OK++
			_ = latency.RecordValue(max(1, int64(w.Ack-w.Start)))
		case w.Class == change.Interrupted:
			writes.Interrupted++
		default:
			writes.Requests++
			writes.Errors++
			writes.ErrorClasses[w.Class]++
			if _, ok := writes.ErrorMessages[w.Class]; !ok && w.Err != nil {
				writes.ErrorMessages[w.Class] = w.Err.Error()
			}
		}
	}
	if len(writes.ErrorClasses) == 0 {
		writes.ErrorClasses, writes.ErrorMessages = nil, nil
	}
	writes.LatencyUS = result.PercentilesOf(latency, 0)
	var err error
	if writes.HDR, err = result.EncodeHistogram(latency); err != nil {
		return nil, writes, err
	}

	t := out.Tally
	rc := &result.Changes{Source: c.Source, Stream: c.Stream.Len(), Applied: out.Log.Applied(), RatePS: c.Rate,
		AllowedStaleMS: float64(c.Allowed) / float64(time.Millisecond), Answers: map[string]uint64{},
		PauseMS: float64(t.Pause()) / float64(time.Millisecond)}
	for v := change.Verdict(0); v < change.NumVerdicts; v++ {
		rc.Answers[v.String()] = t.Verdicts[v]
	}
	rc.VersionNamed, rc.AnswersNamed = t.Named > 0, t.Named
	rc.StaleAgeUS = percentilesOrNil(t.StaleAge)
	rc.NearChangeUS, rc.SteadyUS = percentilesOrNil(t.NearLatency), percentilesOrNil(t.SteadyLatency)
	visible, enemy := metrics.NewHistogram(), metrics.NewHistogram()
	for _, v := range t.Visibility(c.Stream, out.Log) {
		if !v.Seen {
			rc.Unseen++
			continue
		}
		rc.Visible++
		_ = visible.RecordValue(int64(v.ToVisible))
		_ = enemy.RecordValue(int64(v.NewEnemy))
	}
	rc.TimeToVisibleUS, rc.NewEnemyWindowUS = percentilesOrNil(visible), percentilesOrNil(enemy)
	if out.WriteErr != nil {
		rc.WriteError = out.WriteErr.Error()
	}
	rc.Writes, rc.WritesOmitted = writesOf(out)
	rc.Timeline = timelineOf(intervals)
	return rc, writes, nil
}

func writesOf(out *load.ChangesOutcome) ([]result.ChangeWrite, int) {
	ws := out.Log.Writes
	omitted := max(0, len(ws)-result.MaxChangeWrites)
	ws = ws[:len(ws)-omitted]
	list := make([]result.ChangeWrite, len(ws))
	for i, w := range ws {
		list[i] = result.ChangeWrite{Version: w.Version, SentS: (w.Start - out.MeasuredFrom).Seconds(), Class: w.Class}
		if w.Acknowledged() {
			list[i].AckS = (w.Ack - out.MeasuredFrom).Seconds()
		}
	}
	return list, omitted
}

func timelineOf(intervals []load.Interval) []result.TimelineStep {
	var steps []result.TimelineStep
	for _, iv := range intervals {
		st := result.TimelineStep{FromS: iv.From.Seconds(), ToS: iv.To.Seconds(), Due: iv.Due, OK: iv.OK, Errors: iv.Errors}
		if iv.Latency != nil && iv.Latency.TotalCount() > 0 {
			st.P50US = float64(iv.Latency.ValueAtQuantile(50)) / 1e3
			st.P99US = float64(iv.Latency.ValueAtQuantile(99)) / 1e3
			st.MaxUS = float64(iv.Latency.Max()) / 1e3
		}
		steps = append(steps, st)
	}
	return steps
}

func percentilesOrNil(h *hdrhistogram.Histogram) *result.Percentiles {
	if h.TotalCount() == 0 {
		return nil
	}
	p := result.PercentilesOf(h, 0)
	return &p
}
