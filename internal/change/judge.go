package change

import "time"

// Verdict is what the judge says of one decision of a run with changes.
type Verdict uint8

const (
	// Fresh: the answer matches the last version acknowledged before it was sent, or one whose
	// change was sent (in flight or acknowledged) before the answer came back.
	Fresh Verdict = iota
	// Stale: it matches only an older version, no older than the consistency asked for allows.
	Stale
	// StaleBeyond: it matches only an older version, older than the consistency promises: not
	// a wrong decision, but named in the findings.
	StaleBeyond
	// Wrong: it matches no version the world had by the time the answer came back: an error,
	// like any wrong decision.
	Wrong
	NumVerdicts
)

// String is the verdict's name in results and reports.
func (v Verdict) String() string {
	switch v {
	case Fresh:
		return "fresh"
	case Stale:
		return "stale"
	case StaleBeyond:
		return "stale_beyond_promise"
	}
	return "wrong"
}

// Judge judges the answers of a run with changes against the versions each may reflect. One
// judge serves every worker (it reads the stream and the log, writes nothing); each worker
// records into a Tally of its own.
type Judge struct {
	Stream *Stream
	Log    *Log
	// Allowed is how old a stale answer may be within the consistency's promise (SpiceDB's
	// minimize_latency: about 5.5 s); 0 when the consistency promises fresh answers, so that
	// every stale answer is beyond it.
	Allowed time.Duration
}

// Answer is one decision to judge.
type Answer struct {
	Input int
	Allow bool
	// Named: the answer names the version it was decided at (an http target's version path,
	// OPA's bundle revision), Version; it is judged by that exactly.
	Named   bool
	Version int
	// Sent and Received are offsets from the log's Base.
	Sent, Received time.Duration
}

// Judgement is the judge's word on one answer.
type Judgement struct {
	Verdict Verdict
	// Age, for a stale answer, is how long before it was sent the world had moved past the
	// version it matches (from the acknowledgement of the change that superseded it).
	Age time.Duration
	// Matched is the version taken as the answer's: the one it names, or the newest it matches
	// among those it may reflect (an answer known by its decision alone is given the benefit of
	// the doubt); -1 for a wrong answer or an input without an expectation.
	Matched int
	// Acked is the last version acknowledged before the answer was sent (what it must reflect,
	// fresh); Started the newest whose change was sent before it came back.
	Acked, Started int
}

// Judge says what a is, against every version it may reflect.
func (j *Judge) Judge(a Answer) Judgement {
	started := j.Log.StartedBy(a.Received)
	acked := min(j.Log.AckedBefore(a.Sent), started)
	out := Judgement{Matched: -1, Acked: acked, Started: started}
	s := j.Stream
	if !s.Verified(a.Input) {
		return out
	}
	matched := -1
	if a.Named {
		if a.Version >= 0 && a.Version <= started && s.Allowed(a.Input, a.Version) == a.Allow {
			matched = a.Version
		}
	} else {
		fs := s.flips[a.Input]
		n := flipsUpTo(fs, started)
		switch {
		case s.Allowed(a.Input, started) == a.Allow:
			matched = started
		case n > 0:
			matched = int(fs[n-1]) - 1 // the version before the last flip it may have seen
		}
	}
	out.Matched = matched
	switch {
	case matched < 0:
		out.Verdict = Wrong
	case matched >= acked:
		out.Verdict = Fresh
	default:
		// The change after the matched version was acknowledged before the send: the answer
		// missed it, and everything after it.
		out.Age = a.Sent - j.Log.AckOf(matched+1)
		out.Verdict = Stale
		if out.Age > j.Allowed {
			out.Verdict = StaleBeyond
		}
	}
	return out
}
