package result

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// shardDoc is shard i of n: one closed-loop run of workers workers in all, this shard running
// its share, with the latencies given, measured from start for one second.
func shardDoc(t *testing.T, i, n, share int, start time.Time, ok, errs, connect, eval []int64) *Document {
	t.Helper()
	r := syntheticRun(t, 1, ok, errs, connect, eval)
	r.Load.Workers = 4
	r.Load.ShardWorkers = share
	r.SUT.Connections = share
	r.Repetitions[0].MeasuredFrom = start
	// Each shard's turn began at its own instant: two that began at the same nanosecond with the
	// same histogram would be one measurement copied (Distinct).
	r.Repetitions[0].Started = start.Add(-time.Second + time.Duration(i))
	d := docOf(r)
	d.Env.Hostname = "host" + string(rune('0'+i))
	d.Shard = &Shard{Index: i, Count: n}
	return d
}

// samePercentiles compares every percentile and the maximum; the mean is the recorders' exact
// one, not the histogram's, and is checked apart.
func samePercentiles(t *testing.T, what string, got, want Percentiles) {
	t.Helper()
	got.Mean, want.Mean = 0, 0
	if got != want {
		t.Errorf("%s: %+v\nwant the union's %+v", what, got, want)
	}
}

func randomLatencies(rng *rand.Rand, n int, lo, hi int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = lo + rng.Int64N(hi-lo)
	}
	return out
}

// Shards merged are the histogram of the union: every percentile of every distribution (ok
// latency, errors, connect times, server timers) equals that of one histogram holding all the
// shards' values; counts are summed; throughput is over the common window.
func TestMergeShardsIsTheUnion(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	type part struct{ ok, errs, connect, eval []int64 }
	parts := []part{
		{randomLatencies(rng, 3000, 50_000, 2_000_000), randomLatencies(rng, 3, 1e6, 9e6), randomLatencies(rng, 2, 40e3, 90e3), randomLatencies(rng, 500, 5e3, 60e3)},
		{randomLatencies(rng, 1200, 900_000, 40_000_000), randomLatencies(rng, 1, 1e6, 9e6), randomLatencies(rng, 1, 40e3, 90e3), randomLatencies(rng, 200, 30e3, 400e3)},
		{randomLatencies(rng, 2500, 10_000, 300_000), nil, randomLatencies(rng, 1, 40e3, 90e3), randomLatencies(rng, 700, 2e3, 20e3)},
	}
	shares := []int{2, 1, 1} // 4 workers: the remainder to the lowest shard
	var srcs []Source
	var union part
	for i, p := range parts {
		// Shard 3 started its measured phase 200 ms after the others.
		from := start
		if i == 2 {
			from = start.Add(200 * time.Millisecond)
		}
		srcs = append(srcs, Source{Name: "shard" + string(rune('1'+i)) + ".json", Doc: shardDoc(t, i+1, 3, shares[i], from, p.ok, p.errs, p.connect, p.eval)})
		union.ok = append(union.ok, p.ok...)
		union.errs = append(union.errs, p.errs...)
		union.connect = append(union.connect, p.connect...)
		union.eval = append(union.eval, p.eval...)
	}
	// Given out of order: the merge puts them in shard order.
	srcs[0], srcs[2] = srcs[2], srcs[0]
	doc, err := MergeShards(srcs...)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 1 || len(doc.Runs[0].Repetitions) != 1 {
		t.Fatalf("%d runs, want 1 of 1 repetition", len(doc.Runs))
	}
	r := doc.Runs[0]
	s := r.Summary
	samePercentiles(t, "ok latency", s.LatencyUS, PercentilesOf(histogramOf(union.ok...), 0))
	samePercentiles(t, "repetition latency", r.Repetitions[0].LatencyUS, PercentilesOf(histogramOf(union.ok...), 0))
	samePercentiles(t, "error latency", *s.ErrorLatencyUS, PercentilesOf(histogramOf(union.errs...), 0))
	samePercentiles(t, "connect", s.Connections.ConnectUS, PercentilesOf(histogramOf(union.connect...), 0))
	samePercentiles(t, "server eval", s.Server.EvalUS, PercentilesOf(histogramOf(union.eval...), 0))
	if s.OK != uint64(len(union.ok)) || s.Errors != uint64(len(union.errs)) || s.Requests != s.OK+s.Errors || s.ErrorClasses["http_503"] != 4 {
		t.Errorf("counts: requests %d ok %d errors %d classes %v", s.Requests, s.OK, s.Errors, s.ErrorClasses)
	}
	var sum float64
	for _, v := range union.ok {
		sum += float64(v)
	}
	if want := sum / float64(len(union.ok)) / 1e3; abs(s.LatencyUS.Mean-want) > 1e-6*want {
		t.Errorf("mean %g µs, want the union's exact %g", s.LatencyUS.Mean, want)
	}
	// The common window runs from 12:00:00 to 12:00:01.2: 1.2 s, not the 1 s of each shard.
	if rep := r.Repetitions[0]; abs(rep.ElapsedS-1.2) > 1e-9 || abs(rep.ThroughputRPS-float64(len(union.ok))/1.2) > 1e-6 {
		t.Errorf("window %g s at %g req/s; want 1.2 s at %g", rep.ElapsedS, rep.ThroughputRPS, float64(len(union.ok))/1.2)
	}
	if r.Load.Workers != 4 || r.Load.ShardWorkers != 0 || r.SUT.Connections != 4 {
		t.Errorf("load %+v, connections %d; want the whole's 4 workers", r.Load, r.SUT.Connections)
	}
	if len(doc.Shards) != 3 || doc.Shards[0].Shard.Index != 1 || doc.Shards[0].File != "shard1.json" || doc.Shards[2].Env.Hostname != "host3" {
		t.Errorf("shards kept: %+v", doc.Shards)
	}
	if doc.Shard != nil {
		t.Errorf("merged document marked as shard %v", doc.Shard)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// Open-loop shards each send their share of the schedule; merged, the sends due are the
// schedule's.
func TestMergeShardsOpenLoopTotalsAreTheSchedule(t *testing.T) {
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	const due = 1000 // 1000 req/s for 1 s, split 334 + 333 + 333
	var srcs []Source
	for i, share := range []int64{334, 333, 333} {
		lat := uniform(100_000, 100_000+int64(share-1)*1000, 1000)
		d := shardDoc(t, i+1, 3, 0, start, lat, nil, nil, nil)
		r := &d.Runs[0]
		r.Load = Load{Model: OpenLoop, Rate: 1000, Connections: 8, DurationS: 1}
		r.Summary.Connections, r.Summary.Server = nil, nil
		rep := &r.Repetitions[0]
		rep.ConnectHDR, rep.ServerEvalHDR, rep.ServerHandlerHDR = "", "", ""
		late, err := EncodeHistogram(histogramOf(lat...))
		if err != nil {
			t.Fatal(err)
		}
		rep.Intended, rep.AchievedRPS, rep.LateHDR, rep.Uncorrected = share, float64(share), late, late
		rep.OpenSender = "event_loop"
		r.Summary.Open = &OpenSummary{Intended: share, Sent: share, LateAfterUS: 1000, Sender: "event_loop"}
		srcs = append(srcs, Source{Name: "s" + string(rune('1'+i)), Doc: d})
	}
	doc, err := MergeShards(srcs...)
	if err != nil {
		t.Fatal(err)
	}
	o := doc.Runs[0].Summary.Open
	if o.Intended != due || o.Sent != due || doc.Runs[0].Summary.OK != due || doc.Runs[0].Repetitions[0].Intended != due {
		t.Errorf("intended %d sent %d ok %d; want the schedule's %d", o.Intended, o.Sent, doc.Runs[0].Summary.OK, due)
	}
	if a := doc.Runs[0].Repetitions[0].AchievedRPS; abs(a-due) > 1e-9 {
		t.Errorf("achieved %g req/s, want %d", a, due)
	}
	if o.Sender != "event_loop" || doc.Runs[0].Repetitions[0].OpenSender != "event_loop" {
		t.Errorf("sender %q, repetition's %q; want the shards' event_loop", o.Sender, doc.Runs[0].Repetitions[0].OpenSender)
	}
}

// The open-loop engine that sent is the repetitions' when they agree, "mixed" when shards of
// different builds were merged; a result written before it was recorded says nothing.
func TestSenderOf(t *testing.T) {
	for _, tc := range []struct {
		senders []string
		want    string
	}{
		{nil, ""},
		{[]string{"", ""}, ""},
		{[]string{"event_loop", "event_loop"}, "event_loop"},
		{[]string{"", "goroutines"}, "goroutines"},
		{[]string{"event_loop", "", "goroutines"}, "mixed"},
		{[]string{"mixed", "event_loop"}, "mixed"},
	} {
		if got := SenderOf(tc.senders...); got != tc.want {
			t.Errorf("SenderOf(%q) = %q, want %q", tc.senders, got, tc.want)
		}
	}
}

// Shards that do not belong together are refused, naming the files.
func TestMergeShardsRefuses(t *testing.T) {
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	lat := uniform(10_000, 20_000, 100)
	shard := func(i, n, share int) *Document { return shardDoc(t, i, n, share, start, lat, nil, nil, nil) }
	for _, tc := range []struct {
		name string
		srcs []Source
		want string
	}{
		{"missing", []Source{{"a.json", shard(1, 3, 2)}, {"c.json", shard(3, 3, 1)}}, "shard 2/3 missing (given: a.json is 1/3, c.json is 3/3)"},
		{"overlapping", []Source{{"a.json", shard(1, 2, 2)}, {"b.json", shard(1, 2, 2)}}, "a.json and b.json are both shard 1/2"},
		{"different splits", []Source{{"a.json", shard(1, 2, 2)}, {"b.json", shard(2, 3, 1)}}, "b.json is shard 2/3, a.json is shard 1/2"},
		{"not a shard", []Source{{"a.json", shard(1, 2, 2)}, {"whole.json", docOf(syntheticRun(t, 1, lat, nil, nil, nil))}}, "whole.json is not a shard"},
		{"other workload", func() []Source {
			b := shard(2, 2, 2)
			b.Runs[0].Workload = "risk"
			return []Source{{"a.json", shard(1, 2, 2)}, {"b.json", b}}
		}(), "document 2 has a run of risk on opa/server"},
		{"other target", func() []Source {
			b := shard(2, 2, 2)
			b.Runs[0].Target = "cedar/server"
			return []Source{{"a.json", shard(1, 2, 2)}, {"b.json", b}}
		}(), "b.json"},
		{"other rate", func() []Source {
			b := shard(2, 2, 2)
			b.Runs[0].Load.DurationS = 2
			return []Source{{"a.json", shard(1, 2, 2)}, {"b.json", b}}
		}(), "load.duration_s is 2 in b.json, 1 in a.json"},
		{"workers do not add up", []Source{{"a.json", shard(1, 2, 1)}, {"b.json", shard(2, 2, 1)}}, "2 workers in all, the load asks for 4"},
		{"other histogram precision", func() []Source {
			b := shard(2, 2, 2)
			coarse := hdrhistogram.New(1, 60e9, 2)
			for _, v := range lat {
				coarse.RecordValue(v) //nolint:errcheck // in range
			}
			s, err := EncodeHistogram(coarse)
			if err != nil {
				t.Fatal(err)
			}
			b.Runs[0].Repetitions[0].HDR = s
			return []Source{{"a.json", shard(1, 2, 2)}, {"b.json", b}}
		}(), "different precision"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MergeShards(tc.srcs...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// A shard whose stall kept sends from going out charges them in the merged repetition's latency,
// as one generator's repetition records them, and the merged run keeps its place in a scaling
// series.
func TestMergeShardsChargesUnsentAndKeepsScale(t *testing.T) {
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	okA, okB := uniform(100_000, 600_000, 1000), uniform(200_000, 400_000, 1000)
	stalled := uniform(2_000_000_000, 2_900_000_000, 100_000_000) // 10 sends never sent
	var srcs []Source
	for i, ok := range [][]int64{okA, okB} {
		d := shardDoc(t, i+1, 2, 0, start, ok, nil, nil, nil)
		r := &d.Runs[0]
		r.Scale = &Scale{Series: "rules-path/rego-rules", Param: "rules", N: 100}
		r.Load = Load{Model: OpenLoop, Rate: 2000, Connections: 8, DurationS: 1}
		r.Summary.Connections, r.Summary.Server = nil, nil
		rep := &r.Repetitions[0]
		rep.ConnectHDR, rep.ServerEvalHDR, rep.ServerHandlerHDR = "", "", ""
		late, err := EncodeHistogram(histogramOf(ok...))
		if err != nil {
			t.Fatal(err)
		}
		sent := int64(len(ok))
		rep.Intended, rep.AchievedRPS, rep.LateHDR, rep.Uncorrected = sent, float64(sent), late, late
		r.Summary.Open = &OpenSummary{Intended: sent, Sent: sent, LateAfterUS: 1000}
		if i == 1 {
			unsent, err := EncodeHistogram(histogramOf(stalled...))
			if err != nil {
				t.Fatal(err)
			}
			n := int64(len(stalled))
			rep.Intended, rep.Unsent, rep.UnsentHDR = sent+n, n, unsent
			r.Summary.Open.Intended, r.Summary.Open.Unsent = sent+n, n
		}
		srcs = append(srcs, Source{Name: "s" + string(rune('1'+i)), Doc: d})
	}
	doc, err := MergeShards(srcs...)
	if err != nil {
		t.Fatal(err)
	}
	r := doc.Runs[0]
	all := append(append(append([]int64{}, okA...), okB...), stalled...)
	samePercentiles(t, "merged repetition", r.Repetitions[0].LatencyUS, PercentilesOf(histogramOf(all...), 0))
	if r.Scale == nil || r.Scale.N != 100 {
		t.Errorf("merged run's scale %+v, want N 100 kept", r.Scale)
	}
}

// Shards whose measured windows did not coincide are said, with how far apart they ran: the
// merged throughput is over the common window, and two shards run seconds apart merged into
// half what either read, in silence. Shards that ran together are not.
func TestShardsApart(t *testing.T) {
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	lat, errs, connect, eval := []int64{100_000, 200_000}, []int64{1e6}, []int64{40e3}, []int64{5e3}
	pair := func(second time.Duration) []Source {
		return []Source{
			{"s1.json", shardDoc(t, 1, 2, 2, start, lat, errs, connect, eval)},
			{"s2.json", shardDoc(t, 2, 2, 2, start.Add(second), lat, errs, connect, eval)},
		}
	}
	for _, tc := range []struct {
		name   string
		second time.Duration // when shard 2 began measuring, after shard 1; each measured 1 s
		want   string
	}{
		{"together", 3 * time.Millisecond, ""},
		{"together for nine tenths of the window", 50 * time.Millisecond, ""},
		{"partly together", 400 * time.Millisecond,
			"run 1 (rbac on opa/server), repetition 1: the shards measured together for 600ms of the 1.4s from the first start to the last end (s2.json began 400ms after the first)"},
		{"apart", 3 * time.Second,
			"run 1 (rbac on opa/server), repetition 1: the shards' measured windows never overlapped: s2.json began measuring 2s after s1.json had ended; its req/s is taken over the 4s from the first start to the last end, where each shard measured 1s at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srcs := pair(tc.second)
			if _, err := MergeShards(srcs...); err != nil {
				t.Fatal(err)
			}
			got := ShardsApart(srcs...)
			if tc.want == "" {
				if len(got) > 0 {
					t.Errorf("said %q of shards that ran together", got)
				}
				return
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
				t.Errorf("said %q\nwant %q", got, tc.want)
			}
		})
	}
}
