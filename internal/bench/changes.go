package bench

import (
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
	allowed := c.Allowed
	if p := sl.run.SUT.Consistency; p != nil && !c.AllowedGiven {
		allowed = time.Duration(p.PromiseMS * float64(time.Millisecond))
	}
	sl.ref.Load.Changes = &load.Changes{Source: c.Source, Stream: stream, Applier: applier, Rate: c.Rate, Allowed: allowed,
		WriteTimeout: sl.ref.Timeout}
	return nil
}

// changesOf records what became of a run's changes: its writes as an operation of their own,
// and how its answers were judged.
func changesOf(c *load.Changes, out *load.ChangesOutcome) (*result.Changes, result.Operation, error) {
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
	rc.VersionNamed = t.Named > 0
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
	return rc, writes, nil
}

func percentilesOrNil(h *hdrhistogram.Histogram) *result.Percentiles {
	if h.TotalCount() == 0 {
		return nil
	}
	p := result.PercentilesOf(h, 0)
	return &p
}
