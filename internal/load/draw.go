package load

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// A Draw is how a run picks the input of each request: every input in turn (the default, each
// asked equally often), or drawn at random, uniformly or skewed. An engine with caches answers a
// repeated question from them, so the share of requests on inputs asked before, not the number
// of inputs, sets its hit ratio: a skewed draw makes that share a setting of the run.
//
// A random draw is a sequence of input numbers drawn before the clock, from a fixed seed (so
// every repetition and every target of a run asks the same inputs in the same order), which the
// load walks as it walks the inputs in turn. Which inputs are the popular ones is itself drawn
// (a shuffle of the inputs from the same seed): a file's first lines are often of one kind (its
// allowed checks), and the hot set would be those.
type Draw struct {
	Kind DrawKind
	// S is Zipf's exponent: the input of rank k is drawn with a weight of 1/k^S (S > 0).
	S float64
	// HotChecks percent of the requests go to HotInputs percent of the inputs (at least one),
	// the rest to the others, each set drawn uniformly.
	HotChecks, HotInputs float64
}

// DrawKind names a Draw's shape.
type DrawKind int

const (
	// DrawCycle asks every input in turn, in the file's order: today's load, and the default.
	DrawCycle DrawKind = iota
	// DrawUniform draws each input at random, every input as likely.
	DrawUniform
	// DrawZipf draws the input of rank k with a weight of 1/k^S.
	DrawZipf
	// DrawHot sends HotChecks % of the requests to HotInputs % of the inputs.
	DrawHot
)

// DrawSeed is the seed of every random draw: fixed, so that runs to be compared ask the same.
const DrawSeed = 1

// drawLength bounds the drawn sequence: long enough that its draws follow the shape closely,
// short enough to build in milliseconds and hold in a few MB.
func drawLength(inputs int) int { return min(max(16*inputs, 1<<16), 1<<20) }

// ParseDraw reads an --input-skew value: cycle, uniform, zipf:S or hot:K/H.
func ParseDraw(s string) (Draw, error) {
	kind, arg, hasArg := strings.Cut(strings.TrimSpace(s), ":")
	switch kind {
	case "", "cycle":
		if hasArg {
			return Draw{}, fmt.Errorf("%q: cycle takes no parameter; want cycle, uniform, zipf:S or hot:K/H", s)
		}
		return Draw{}, nil
	case "uniform":
		if hasArg {
			return Draw{}, fmt.Errorf("%q: uniform takes no parameter; want cycle, uniform, zipf:S or hot:K/H", s)
		}
		return Draw{Kind: DrawUniform}, nil
	case "zipf":
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) || v > 10 {
			return Draw{}, fmt.Errorf("%q: want zipf:S, Zipf's exponent S above 0 and at most 10 (1 is the classic Zipf; YCSB uses 0.99)", s)
		}
		return Draw{Kind: DrawZipf, S: v}, nil
	case "hot":
		k, h, ok := strings.Cut(arg, "/")
		kv, err1 := strconv.ParseFloat(strings.TrimSuffix(k, "%"), 64)
		hv, err2 := strconv.ParseFloat(strings.TrimSuffix(h, "%"), 64)
		if !ok || err1 != nil || err2 != nil || kv < 0 || kv > 100 || !(hv > 0) || hv >= 100 {
			return Draw{}, fmt.Errorf("%q: want hot:K/H, K %% of the checks (0 to 100) on H %% of the inputs (above 0, below 100), e.g. hot:90/10", s)
		}
		return Draw{Kind: DrawHot, HotChecks: kv, HotInputs: hv}, nil
	}
	return Draw{}, fmt.Errorf("%q: want cycle (each input in turn, the default), uniform, zipf:S or hot:K/H", s)
}

// String is the draw as --input-skew takes it.
func (d Draw) String() string {
	switch d.Kind {
	case DrawUniform:
		return "uniform"
	case DrawZipf:
		return "zipf:" + strconv.FormatFloat(d.S, 'g', -1, 64)
	case DrawHot:
		return "hot:" + strconv.FormatFloat(d.HotChecks, 'g', -1, 64) + "/" + strconv.FormatFloat(d.HotInputs, 'g', -1, 64)
	}
	return "cycle"
}

// Random reports whether the draw is a drawn sequence rather than the inputs in turn.
func (d Draw) Random() bool { return d.Kind != DrawCycle }

// Sequence draws the input numbers a run over n inputs asks, in order; nil for every input in
// turn. It is all setup: call it before the clock.
func (d Draw) Sequence(n int) []int32 {
	if !d.Random() || n <= 0 {
		return nil
	}
	r := rand.New(rand.NewPCG(DrawSeed, uint64(d.Kind)))
	ranked := r.Perm(n) // ranked[k] is the input of rank k+1
	seq := make([]int32, drawLength(n))
	switch d.Kind {
	case DrawUniform:
		for i := range seq {
			seq[i] = int32(r.IntN(n))
		}
	case DrawZipf:
		// The inverse of the cumulative weights, searched: exact for any S, where math/rand's
		// Zipf takes only S > 1.
		cum := make([]float64, n)
		total := 0.0
		for k := range n {
			total += math.Pow(float64(k+1), -d.S)
			cum[k] = total
		}
		for i := range seq {
			x := r.Float64() * total
			k := sort.SearchFloat64s(cum, x)
			seq[i] = int32(ranked[min(k, n-1)])
		}
	case DrawHot:
		hot := d.HotSet(n)
		for i := range seq {
			if hot == n || r.Float64()*100 < d.HotChecks {
				seq[i] = int32(ranked[r.IntN(hot)])
			} else {
				seq[i] = int32(ranked[hot+r.IntN(n-hot)])
			}
		}
	}
	return seq
}

// HotSet is how many of n inputs a hot draw's hot set holds: HotInputs % of them, at least one.
func (d Draw) HotSet(n int) int {
	return min(max(int(math.Round(float64(n)*d.HotInputs/100)), 1), n)
}

// pick is the input of the run's k-th request: k's place in the drawn sequence, or input k in
// turn.
func pick(seq []int32, k int64, n int) int {
	if seq == nil {
		return int(k % int64(n))
	}
	return int(seq[k%int64(len(seq))])
}
