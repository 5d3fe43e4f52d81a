package load

import (
	"context"
	"math"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// A skewed draw follows the shape asked for: counts, with margins wide enough for any seed.
func TestDrawShape(t *testing.T) {
	const n = 1000
	counts := func(d Draw) []int {
		seq := d.Sequence(n)
		if len(seq) < 16*n {
			t.Fatalf("%s: %d draws for %d inputs", d, len(seq), n)
		}
		c := make([]int, n)
		for _, i := range seq {
			c[i]++
		}
		return c
	}
	share := func(c []int, top int) float64 { // of the draws, the share on the top most drawn
		sorted := append([]int(nil), c...)
		sort.Sort(sort.Reverse(sort.IntSlice(sorted)))
		total, on := 0, 0
		for k, x := range sorted {
			total += x
			if k < top {
				on += x
			}
		}
		return float64(on) / float64(total)
	}

	if d := (Draw{}); d.Sequence(n) != nil {
		t.Error("cycle draws a sequence; it walks the inputs in turn")
	}
	t.Run("uniform", func(t *testing.T) {
		c := counts(Draw{Kind: DrawUniform})
		if got := share(c, 100); got < 0.08 || got > 0.15 { // 10 % of the inputs: about 10 %
			t.Errorf("uniform: the 100 most drawn of 1,000 inputs took %.3f of the draws, want about 0.10", got)
		}
	})
	t.Run("hot", func(t *testing.T) {
		d := Draw{Kind: DrawHot, HotChecks: 90, HotInputs: 10}
		c := counts(d)
		if got := share(c, d.HotSet(n)); got < 0.85 || got > 0.95 {
			t.Errorf("hot:90/10: the hot 100 inputs took %.3f of the draws, want about 0.90", got)
		}
		// The hot set is drawn, not the file's first lines.
		first := 0
		for _, x := range c[:100] {
			first += x
		}
		if f := float64(first) / float64(len(d.Sequence(n))); f > 0.3 {
			t.Errorf("hot:90/10: the file's first 100 inputs took %.3f of the draws: the hot set is the file's head", f)
		}
	})
	t.Run("zipf", func(t *testing.T) {
		for _, s := range []float64{0.99, 1.5} {
			c := counts(Draw{Kind: DrawZipf, S: s})
			h := 0.0
			for k := 1; k <= n; k++ {
				h += math.Pow(float64(k), -s)
			}
			want := 1 / h // the share of rank 1
			if got := share(c, 1); got < want*0.8 || got > want*1.2 {
				t.Errorf("zipf:%g: the most drawn input took %.4f of the draws, want about %.4f", s, got, want)
			}
			want10 := 0.0
			for k := 1; k <= 10; k++ {
				want10 += math.Pow(float64(k), -s) / h
			}
			if got := share(c, 10); got < want10*0.85 || got > want10*1.15 {
				t.Errorf("zipf:%g: the 10 most drawn took %.4f, want about %.4f", s, got, want10)
			}
		}
	})
}

func TestParseDraw(t *testing.T) {
	for in, want := range map[string]string{"": "cycle", "cycle": "cycle", "uniform": "uniform", "zipf:0.99": "zipf:0.99", "hot:90/10": "hot:90/10", "hot:80%/20%": "hot:80/20"} {
		d, err := ParseDraw(in)
		if err != nil || d.String() != want {
			t.Errorf("ParseDraw(%q) = %s, %v; want %s", in, d, err, want)
		}
	}
	for _, bad := range []string{"zipf", "zipf:0", "zipf:-1", "zipf:x", "hot:90", "hot:90/0", "hot:90/100", "hot:120/10", "gauss", "uniform:3", "cycle:1"} {
		if _, err := ParseDraw(bad); err == nil || !strings.Contains(err.Error(), "want") {
			t.Errorf("ParseDraw(%q) = %v; want an error saying what it takes", bad, err)
		}
	}
}

// countingTarget counts the inputs its deciders were asked.
type countingTarget struct {
	kinds.NoWatch
	mu     sync.Mutex
	counts map[int]int
}

func (c *countingTarget) Start(context.Context, *workload.Workload) error { return nil }
func (c *countingTarget) Info() kinds.Info                                { return kinds.Info{} }
func (c *countingTarget) Stop(context.Context) error                      { return nil }
func (c *countingTarget) Worker() kinds.Decider                           { return countingDecider{c} }

type countingDecider struct{ c *countingTarget }

func (d countingDecider) Decide(_ context.Context, i int) verify.Outcome {
	d.c.mu.Lock()
	d.c.counts[i]++
	d.c.mu.Unlock()
	return verify.Outcome{Kind: verify.Decided, Allow: i%2 == 0}
}

// The closed and open loops ask the inputs the draw drew: a hot draw puts most requests on its
// hot set, where the default asks every input equally often.
func TestLoopsFollowTheDraw(t *testing.T) {
	inputs := make([]workload.Input, 100)
	for i := range inputs {
		inputs[i].Expect = workload.ExpectDeny
		if i%2 == 0 {
			inputs[i].Expect = workload.ExpectAllow
		}
	}
	hot := Draw{Kind: DrawHot, HotChecks: 90, HotInputs: 10}
	for _, tc := range []struct {
		name string
		spec Spec
	}{
		{"closed", Spec{Workers: 2, Requests: 4000, MaxTime: 30 * time.Second, Draw: hot}},
		{"open", Spec{Rate: 4000, Connections: 4, Duration: time.Second, Draw: hot}},
		{"closed cycle", Spec{Workers: 2, Requests: 4000, MaxTime: 30 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := &countingTarget{counts: map[int]int{}}
			out := tc.spec.Run(context.Background(), tg, inputs, nil)
			if out.Stopped != nil {
				t.Fatal(out.Stopped)
			}
			// Allowed and denied apart, adding up to the ok responses: the even inputs allow.
			rec := out.Recorder
			if ok := rec.Counts[verify.OK]; ok == 0 || rec.Allowed == nil || rec.Denied == nil ||
				uint64(rec.Allowed.TotalCount()+rec.Denied.TotalCount()) != ok {
				t.Errorf("ok %d, allowed %v, denied %v: want the two adding up to ok", ok, rec.Allowed, rec.Denied)
			}
			var sorted []int
			total := 0
			for _, n := range tg.counts {
				sorted = append(sorted, n)
				total += n
			}
			sort.Sort(sort.Reverse(sort.IntSlice(sorted)))
			top := 0
			for _, n := range sorted[:min(10, len(sorted))] {
				top += n
			}
			got := float64(top) / float64(total)
			if tc.spec.Draw.Random() && (got < 0.8 || total < 100) {
				t.Errorf("%d requests, %.2f of them on the 10 most asked inputs; want about 0.9", total, got)
			}
			if !tc.spec.Draw.Random() && got > 0.15 {
				t.Errorf("each in turn: %.2f of %d requests on 10 of 100 inputs; want 0.10", got, total)
			}
		})
	}
}

// Measuring is called once, as the measured phase begins: after the warm-up's requests, before
// the measured ones end, and before Run returns, in both loops.
func TestMeasuringCalledAtTheWarmupsEnd(t *testing.T) {
	inputs := make([]workload.Input, 10)
	for _, tc := range []struct {
		name string
		spec Spec
	}{
		{"closed", Spec{Workers: 2, Warmup: 300 * time.Millisecond, Duration: 300 * time.Millisecond}},
		{"open", Spec{Rate: 500, Connections: 2, Warmup: 300 * time.Millisecond, Duration: 300 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := &countingTarget{counts: map[int]int{}}
			asked := func() int {
				tg.mu.Lock()
				defer tg.mu.Unlock()
				n := 0
				for _, c := range tg.counts {
					n += c
				}
				return n
			}
			calls, atCall := 0, 0
			tc.spec.Measuring = func() { calls++; atCall = asked() }
			out := tc.spec.Run(context.Background(), tg, inputs, nil)
			if out.Stopped != nil {
				t.Fatal(out.Stopped)
			}
			measured := int(out.Recorder.Requests())
			if calls != 1 || atCall == 0 || atCall+measured > asked()+2*4 || measured == 0 {
				t.Errorf("called %d times, with %d asked then; %d measured of %d asked in all: want once, after the warm-up's requests, before the measured ones",
					calls, atCall, measured, asked())
			}
		})
	}
}
