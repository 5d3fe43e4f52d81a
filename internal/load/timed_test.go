package load

import (
	"context"
	"reflect"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
)

// timedTarget takes service to answer and reports it as its handler's time, half of it as
// evaluation, as a server reporting its own timers does.
type timedTarget struct {
	fakeTarget
	service time.Duration
}

func (s *timedTarget) Worker() kinds.Decider { return s }

func (s *timedTarget) Decide(ctx context.Context, i int) verify.Outcome {
	start := time.Now()
	time.Sleep(s.service)
	took := time.Since(start).Nanoseconds()
	return verify.Outcome{Kind: verify.Decided, Allow: i%2 == 0, ServerHandlerNS: took, ServerEvalNS: took / 2}
}

// In open loop the sample's client times are the latencies from the intended send, the ones
// the ok histogram holds: one connection at 200/s to a target that takes 8 ms falls behind, and
// the sends' wait for the connection is in the client times, not in the handler's.
func TestOpenLoopSamplesLatencyFromTheIntendedSend(t *testing.T) {
	forEachEngine(t, openLoopSamplesLatencyFromTheIntendedSend)
}

func openLoopSamplesLatencyFromTheIntendedSend(t *testing.T, e openEngine) {
	s := &timedTarget{service: 8 * time.Millisecond}
	out := Spec{Rate: 200, Connections: 1, Duration: 500 * time.Millisecond, Timeout: 5 * time.Second}.Run(context.Background(), e.serve(t, s), inputs(10), nil)
	if out.Stopped != nil {
		t.Fatal(out.Stopped)
	}
	rec := out.Recorder
	sample := rec.Timed
	if sample == nil || sample.Seen != int64(rec.Counts[verify.OK]) || len(sample.Triples) != int(sample.Seen) {
		t.Fatalf("sample %v of %d ok responses, want every one", sample, rec.Counts[verify.OK])
	}
	clients := hdrhistogram.New(1, rec.OK.HighestTrackableValue(), 3)
	waited := 0
	for _, tr := range sample.Triples {
		clients.RecordValue(tr.ClientNS) //nolint:errcheck // within the ok histogram's range
		if tr.ClientNS > 2*tr.HandlerNS && tr.QueuedNS > tr.HandlerNS {
			waited++
		}
		if tr.QueuedNS > tr.ClientNS-tr.HandlerNS {
			t.Errorf("triple %+v: queued longer than it waited in all", tr)
		}
	}
	if !reflect.DeepEqual(clients.Distribution(), rec.OK.Distribution()) {
		t.Error("the sample's client times are not the ok latencies the recorder holds (from the intended send)")
	}
	// The k-th send waits about 3k ms for the connection, before it goes out: all but the first
	// few wait longer than they are served, and the wait is queued.
	if waited < len(sample.Triples)/2 {
		t.Errorf("%d of %d sampled responses waited, queued, longer than they were served; want most", waited, len(sample.Triples))
	}
}
