package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/workload"
)

// measure drives one open-loop repetition of spec against tg and records it as bench records
// a run: what a shard's result file holds.
func measure(tg kinds.Target, w *workload.Workload, spec load.Spec) (result.Run, error) {
	out := spec.Run(context.Background(), tg, w.Inputs, nil)
	if out.Stopped != nil {
		return result.Run{}, fmt.Errorf("segment %s stopped: %w", spec.Segment, out.Stopped)
	}
	rep, err := newRepetition(out.Recorder, out.Elapsed, false)
	if err != nil {
		return result.Run{}, err
	}
	if err := setSchedule(&rep, *out.Schedule, out.Recorder, out.Elapsed); err != nil {
		return result.Run{}, err
	}
	rep.Turn, rep.MeasuredFrom = 1, out.MeasuredFrom.UTC()
	reps := []result.Repetition{rep}
	l := result.Load{Model: result.OpenLoop, Rate: spec.Rate, Connections: spec.Connections, DurationS: spec.Duration.Seconds(), WarmupS: spec.Warmup.Seconds()}
	return result.Run{Target: "opa/server", Workload: w.Name,
		SUT:         result.SUT{Engine: "opa", Mode: "server", Placement: result.LaunchedServer, Replicas: tg.Info().Replicas},
		Load:        l,
		Repetitions: reps, Summary: summarise(l, reps, out.Recorder)}, nil
}

// Two shard generators against two replicas of OPA's server, merged, send exactly the
// schedule one generator would have, and read a p99 like one unsharded generator's against
// the same replicas (within a wide margin: the two ran at different times on a shared machine).
func TestShardsAgainstReplicasMergeToTheWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("starts OPA processes")
	}
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	k, err := kinds.Lookup("opa/server")
	if err != nil {
		t.Fatal(err)
	}
	replicated, err := k.Configure(map[string]any{"replicas": 2})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := kinds.New("opa/server", kinds.Common{TempDir: t.TempDir(), Workers: 4, Timeout: 5 * time.Second}, replicated)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	defer tg.Stop(context.Background())
	if got := tg.Info().Replicas; len(got) != 2 || got[0].PID == got[1].PID || got[0].URL == got[1].URL {
		t.Fatalf("replicas %+v, want two processes on two addresses", got)
	}

	const rate = 300
	spec := load.Spec{Rate: rate, Connections: 4, Warmup: 300 * time.Millisecond, Duration: 1500 * time.Millisecond,
		Timeout: 5 * time.Second, Ceiling: 10 * time.Second}
	whole, err := measure(tg, w, spec)
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now().UTC()
	var wg sync.WaitGroup
	shards := make([]result.Source, 2)
	errs := make([]error, 2)
	for i := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := spec
			s.Segment = load.Segment{Index: i + 1, Count: 2}
			run, err := measure(tg, w, s)
			errs[i] = err
			d := &result.Document{Schema: result.Schema, Created: start, Order: "interleaved", Runs: []result.Run{run},
				Shard: &result.Shard{Index: i + 1, Count: 2}}
			shards[i] = result.Source{Name: "shard" + s.Segment.String(), Doc: d}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	merged, err := result.MergeShards(shards...)
	if err != nil {
		t.Fatal(err)
	}
	m := merged.Runs[0].Summary
	// The sends due in the measured window, as the pacer has them: the schedule.
	pacer, err := load.ConstantRate(rate)
	if err != nil {
		t.Fatal(err)
	}
	due := load.SendsBefore(pacer, spec.Warmup+spec.Duration) - load.SendsBefore(pacer, spec.Warmup)
	if m.Open.Intended != due || whole.Summary.Open.Intended != due {
		t.Errorf("merged shards had %d sends due, one generator %d; the schedule has %d", m.Open.Intended, whole.Summary.Open.Intended, due)
	}
	if m.Requests != uint64(due) || m.OK+m.Errors != m.Requests {
		t.Errorf("merged shards recorded %d requests (ok %d, errors %d), want the schedule's %d", m.Requests, m.OK, m.Errors, due)
	}
	if m.Errors != 0 {
		t.Errorf("%d errors: %v", m.Errors, m.ErrorClasses)
	}
	for i, s := range shards {
		if got := s.Doc.Runs[0].Summary.Open.Intended; got < due/2-1 || got > due/2+1 {
			t.Errorf("shard %d had %d due, want half of %d", i+1, got, due)
		}
	}
	p99, wholeP99 := m.LatencyUS.P99, whole.Summary.LatencyUS.P99
	if p99 <= 0 || p99 > 20*wholeP99+20_000 || wholeP99 > 20*p99+20_000 {
		t.Errorf("merged p99 %.0f µs against one generator's %.0f µs: not the same measurement", p99, wholeP99)
	}
	// Both replicas served: four connections a generator, two each, round robin.
	for _, r := range tg.Info().Replicas {
		if r.Requests == 0 || r.Connections == 0 {
			t.Errorf("replica %d was sent %d requests on %d connections; round robin gives each some", r.Index, r.Requests, r.Connections)
		}
	}
}
