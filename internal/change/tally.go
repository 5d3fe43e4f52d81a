package change

import (
	"math/bits"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// NearChange is how long after a change is sent a decision counts as near it: its latency is
// kept apart from the steady state's, where a store that locks for a write shows its pause.
const NearChange = time.Second

// PauseStep is the resolution of the pause: answers are marked in steps this long.
const PauseStep = time.Millisecond

// Tally is one worker's record of the answers of a run with changes: the verdicts, the stale
// answers' ages, when each change was first seen and last missed, latency near changes and away
// from them, and when answers came back (for the pause). Nothing in it is shared: workers merge
// theirs after the run.
type Tally struct {
	Verdicts [NumVerdicts]uint64
	// Named counts the judged answers that named their version.
	Named uint64
	// StaleAge holds the stale answers' ages (beyond the promise or not), in ns.
	StaleAge *hdrhistogram.Histogram
	// firstSeen[k]: when the first answer reflecting change k came back; lastMissed[k]: when the
	// last answer sent after k's acknowledgement and missing it came back. 0: none.
	firstSeen, lastMissed []time.Duration
	// NearLatency and SteadyLatency split the ok decisions' latencies (ns): those sent within
	// NearChange of a change's sending, and the rest.
	NearLatency, SteadyLatency *hdrhistogram.Histogram
	// answered marks the PauseSteps from from in which an answer came back.
	from     time.Duration
	answered []uint64
}

// NewTally returns an empty tally for a stream of n changes whose answers come back between
// offsets from and to (the measured window and the wait for its last answers); answers outside
// it are judged but do not count toward the pause.
func NewTally(n int, from, to time.Duration, ceiling time.Duration) *Tally {
	ceil := max(int64(ceiling), int64(60*time.Second))
	steps := max(0, int((to-from)/PauseStep)+1)
	return &Tally{
		StaleAge:      hdrhistogram.New(1, ceil, 3),
		firstSeen:     make([]time.Duration, n+1),
		lastMissed:    make([]time.Duration, n+1),
		NearLatency:   hdrhistogram.New(1, ceil, 3),
		SteadyLatency: hdrhistogram.New(1, ceil, 3),
		from:          from,
		answered:      make([]uint64, (steps+63)/64),
	}
}

// Answered marks that an answer, of any kind, came back at offset e.
func (t *Tally) Answered(e time.Duration) {
	if e < t.from {
		return
	}
	step := int((e - t.from) / PauseStep)
	if step/64 < len(t.answered) {
		t.answered[step/64] |= 1 << (step % 64)
	}
}

// Record judges a with j and records the judgement; latency is the decision's as the run
// measures it (from the intended send in an open loop). It returns the verdict: Wrong is a
// wrong decision for the run's counts.
func (t *Tally) Record(j *Judge, a Answer, latency time.Duration) Verdict {
	jd := j.Judge(a)
	if a.Named {
		t.Named++
	}
	if jd.Matched < 0 && !j.Stream.Verified(a.Input) {
		t.latency(j, a, latency)
		return Fresh // nothing to judge it by, as an input without an expectation always is
	}
	t.Verdicts[jd.Verdict]++
	switch jd.Verdict {
	case Wrong:
		return Wrong
	case Stale, StaleBeyond:
		_ = t.StaleAge.RecordValue(max(1, int64(jd.Age)))
	}
	t.latency(j, a, latency)
	t.seen(j, a, jd)
	return jd.Verdict
}

func (t *Tally) latency(j *Judge, a Answer, latency time.Duration) {
	h := t.SteadyLatency
	if k := j.Log.StartedBy(a.Sent); k > 0 && a.Sent-j.Log.StartOf(k) < NearChange {
		h = t.NearLatency
	}
	_ = h.RecordValue(max(1, int64(latency)))
}

// seen notes which of the input's changes the answer reflects (every flip up to the version it
// matched) and which it missed although they were acknowledged before it was sent.
func (t *Tally) seen(j *Judge, a Answer, jd Judgement) {
	fs := j.Stream.flips[a.Input]
	n := flipsUpTo(fs, jd.Matched)
	// Older flips were seen by earlier answers as a rule: stop at the first already marked.
	for x := n - 1; x >= 0; x-- {
		f := fs[x]
		if t.firstSeen[f] != 0 && t.firstSeen[f] <= a.Received {
			break
		}
		t.firstSeen[f] = max(a.Received, 1)
	}
	for x := n; x < len(fs) && int(fs[x]) <= jd.Acked; x++ {
		t.lastMissed[fs[x]] = max(t.lastMissed[fs[x]], a.Received)
	}
}

// Merge adds o's record into t.
func (t *Tally) Merge(o *Tally) {
	for v := range t.Verdicts {
		t.Verdicts[v] += o.Verdicts[v]
	}
	t.Named += o.Named
	t.StaleAge.Merge(o.StaleAge)
	t.NearLatency.Merge(o.NearLatency)
	t.SteadyLatency.Merge(o.SteadyLatency)
	for k := range t.firstSeen {
		if f := o.firstSeen[k]; f != 0 && (t.firstSeen[k] == 0 || f < t.firstSeen[k]) {
			t.firstSeen[k] = f
		}
		t.lastMissed[k] = max(t.lastMissed[k], o.lastMissed[k])
	}
	for i := range t.answered {
		t.answered[i] |= o.answered[i]
	}
}

// Pause is the longest time between two answers (of any kind) that came back in the window,
// at PauseStep's resolution (answers in neighbouring steps are a step apart); 0 with fewer than
// two answers.
func (t *Tally) Pause() time.Duration {
	last, longest := -1, 0
	for w, word := range t.answered {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &^= 1 << b
			step := w*64 + b
			if last >= 0 {
				longest = max(longest, step-last)
			}
			last = step
		}
	}
	return time.Duration(longest) * PauseStep
}

// Visibility is, for each change that flips some answer and was acknowledged, the time from
// its acknowledgement to the first answer reflecting it (its time to visible; seen false when no
// answer did), and to the last answer sent after the acknowledgement that still missed it (its
// new-enemy window: for a revocation, how long the revoked could still get in; 0 when none).
type Visibility struct {
	Version             int
	ToVisible, NewEnemy time.Duration
	Seen                bool
}

// Visibility lists the visibility of each acknowledged change that flips some input's
// decision.
func (t *Tally) Visibility(s *Stream, l *Log) []Visibility {
	flipped := s.Flipped()
	var out []Visibility
	for k := 1; k <= l.Applied(); k++ {
		if flipped[k] == 0 {
			continue
		}
		ack := l.AckOf(k)
		v := Visibility{Version: k}
		if f := t.firstSeen[k]; f != 0 {
			v.Seen, v.ToVisible = true, max(0, f-ack)
		}
		if m := t.lastMissed[k]; m != 0 {
			v.NewEnemy = max(0, m-ack)
		}
		out = append(out, v)
	}
	return out
}
