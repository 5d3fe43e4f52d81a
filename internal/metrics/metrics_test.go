package metrics

import (
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/verify"
)

func TestRecorderKeepsErrorsApart(t *testing.T) {
	a, b := NewRecorder(), NewRecorder()
	for i := range 100 {
		a.Record(verify.OK, 0, time.Duration(i+1)*time.Microsecond)
	}
	a.Record(verify.HTTPError, 400, time.Millisecond)
	a.Record(verify.HTTPError, 503, time.Millisecond)
	b.Record(verify.HTTPError, 400, 2*time.Millisecond)
	b.Record(verify.WrongDecision, 0, 3*time.Millisecond)
	b.Record(verify.OK, 0, 2*time.Minute) // beyond the histogram: clamped, not lost
	a.Merge(b)

	if got := a.Requests(); got != 105 {
		t.Errorf("requests %d, want 105", got)
	}
	if got := a.ErrorCount(); got != 4 {
		t.Errorf("errors %d, want 4", got)
	}
	if a.OK.TotalCount() != 101 || a.Errors.TotalCount() != 4 {
		t.Errorf("histograms hold %d ok and %d errors, want 101 and 4", a.OK.TotalCount(), a.Errors.TotalCount())
	}
	want := map[string]uint64{"http_400": 2, "http_503": 1, "wrong_decision": 1}
	got := a.ErrorClasses()
	if len(got) != len(want) {
		t.Errorf("classes %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("class %s = %d, want %d", k, got[k], v)
		}
	}
	if longest := a.OK.Max(); longest < int64(59*time.Second) {
		t.Errorf("a 2-minute answer was recorded as %s; want it clamped to the 60 s ceiling", time.Duration(longest))
	}
	ok, errs := a.Live()
	if ok != 101 || errs != 4 {
		t.Errorf("live counters %d/%d, want 101/4", ok, errs)
	}
}

func TestMeanIsExact(t *testing.T) {
	r := NewRecorder()
	r.Record(verify.OK, 0, 1001*time.Nanosecond)
	r.Record(verify.OK, 0, 2002*time.Nanosecond)
	r.Record(verify.Timeout, 0, time.Second) // errors do not move the mean of ok latencies
	if got := r.MeanOKNanos(); got != 1501.5 {
		t.Errorf("mean %.1f ns, want 1501.5", got)
	}
}

// Only responses that reported both timers are sampled, with the latency they were recorded
// at; recorders merge their samples.
func TestRecordTimedNeedsBothTimers(t *testing.T) {
	a, b := NewRecorder(), NewRecorder()
	a.RecordTimed(100*time.Microsecond, 0, 10_000, 40_000)
	a.RecordTimed(100*time.Microsecond, 0, 0, 40_000) // no evaluation timer: nothing to split
	a.RecordTimed(100*time.Microsecond, 0, 10_000, 0)
	b.RecordTimed(300*time.Microsecond, 150*time.Microsecond, 20_000, 90_000)
	a.Merge(b)
	if a.Timed == nil || a.Timed.Seen != 2 || len(a.Timed.Triples) != 2 {
		t.Fatalf("sample %+v, want the 2 responses with both timers", a.Timed)
	}
	if got := a.Timed.Triples[1]; got.ClientNS != 300_000 || got.HandlerNS != 90_000 || got.EvalNS != 20_000 || got.QueuedNS != 150_000 {
		t.Errorf("second triple %+v, want client 300 µs, handler 90 µs, eval 20 µs, queued 150 µs", got)
	}
	c := NewRecorder()
	c.Merge(NewRecorder())
	if c.Timed != nil {
		t.Error("merging recorders without timers made a sample")
	}
}

// A worker's share of the sample bounds what it holds; merged into a run's recorder, the
// shares keep their rate, and a worker that timed nothing adds no sample.
func TestShareTimedSample(t *testing.T) {
	run := NewRecorder()
	for w := range 2 {
		worker := NewRecorder()
		worker.ShareTimedSample(64) // a 64th of the sample is below the floor of 1,024
		for i := range 5000 {
			worker.RecordTimed(time.Duration(100_000+i+w), 0, 10_000, 40_000)
		}
		if n := len(worker.Timed.Triples); n > 1024 || worker.Timed.Every != 8 || n != 625 {
			t.Errorf("worker %d holds %d triples, one in %d; want 625, one in 8", w, n, worker.Timed.Every)
		}
		run.Merge(worker)
	}
	idle := NewRecorder()
	idle.ShareTimedSample(2)
	run.Merge(idle)
	if run.Timed.Seen != 10000 || len(run.Timed.Triples) != 1250 || run.Timed.Every != 8 {
		t.Errorf("run's sample: %d seen, %d kept, one in %d; want 10000, 1250, one in 8", run.Timed.Seen, len(run.Timed.Triples), run.Timed.Every)
	}
	none := NewRecorder()
	none.Merge(idle)
	if none.Timed != nil {
		t.Errorf("a worker that timed nothing made a sample: %+v", none.Timed)
	}
}
