package change

import (
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/workload"
)

const ms = time.Millisecond

// world: input 0 starts allowed and is revoked by change 1 and granted again by change 3;
// input 1 starts denied and is granted by change 2; input 2 is never changed; input 3 has no
// expectation. Change k is sent at k*100 ms and acknowledged 10 ms later.
func world(t *testing.T, allowed time.Duration) *Judge {
	t.Helper()
	s, err := NewStream([]workload.Expect{workload.ExpectAllow, workload.ExpectDeny, workload.ExpectAllow, workload.Unverified},
		[]Change{{Sets: map[int]bool{0: false}}, {Sets: map[int]bool{1: true, 2: true}}, {Sets: map[int]bool{0: true}}})
	if err != nil {
		t.Fatal(err)
	}
	l := NewLog(3, time.Now())
	for k := 1; k <= 3; k++ {
		l.Started(k, time.Duration(k)*100*ms)
		l.Acknowledged(k, time.Duration(k)*100*ms+10*ms)
	}
	return &Judge{Stream: s, Log: l, Allowed: allowed}
}

func TestStreamAllowed(t *testing.T) {
	j := world(t, 0)
	want := map[[2]int]bool{{0, 0}: true, {0, 1}: false, {0, 2}: false, {0, 3}: true, {1, 0}: false, {1, 1}: false, {1, 2}: true, {2, 2}: true}
	for iv, allow := range want {
		if got := j.Stream.Allowed(iv[0], iv[1]); got != allow {
			t.Errorf("input %d at version %d: allowed %v, want %v", iv[0], iv[1], got, allow)
		}
	}
	// change 2 sets input 2 to what it already is: no flip
	if got := j.Stream.Flips(2); len(got) != 0 {
		t.Errorf("input 2 flips %v, want none", got)
	}
	if got := j.Stream.Flipped(); got[1] != 1 || got[2] != 1 || got[3] != 1 {
		t.Errorf("flipped per change %v, want one input each", got)
	}
}

func TestJudge(t *testing.T) {
	cases := []struct {
		name    string
		a       Answer
		allowed time.Duration
		want    Verdict
		matched int
		age     time.Duration
	}{
		{"before any change, the loaded world", Answer{Input: 0, Allow: true, Sent: 10 * ms, Received: 20 * ms}, 0, Fresh, 0, 0},
		{"a decision no version gave", Answer{Input: 2, Allow: false, Sent: 10 * ms, Received: 20 * ms}, 0, Wrong, -1, 0},
		{"a decision only a later version gives", Answer{Input: 1, Allow: true, Sent: 10 * ms, Received: 20 * ms}, 0, Wrong, -1, 0},
		{"the revocation in flight at the send: either is fresh", Answer{Input: 0, Allow: true, Sent: 105 * ms, Received: 106 * ms}, 0, Fresh, 0, 0},
		{"the revocation in flight at the send, seen", Answer{Input: 0, Allow: false, Sent: 105 * ms, Received: 106 * ms}, 0, Fresh, 1, 0},
		{"the revocation sent after the send, before the answer: fresh", Answer{Input: 0, Allow: false, Sent: 95 * ms, Received: 101 * ms}, 0, Fresh, 1, 0},
		{"the revocation sent after the answer came back: not yet a version", Answer{Input: 0, Allow: false, Sent: 90 * ms, Received: 99 * ms}, 0, Wrong, -1, 0},
		{"acknowledged during the request: fresh either way", Answer{Input: 0, Allow: true, Sent: 109 * ms, Received: 111 * ms}, 0, Fresh, 0, 0},
		{"acknowledged before the send and missed: stale", Answer{Input: 0, Allow: true, Sent: 150 * ms, Received: 151 * ms}, 0, StaleBeyond, 0, 40 * ms},
		{"stale within the promise", Answer{Input: 0, Allow: true, Sent: 150 * ms, Received: 151 * ms}, 50 * ms, Stale, 0, 40 * ms},
		{"stale two changes behind, its age from the change that superseded it", Answer{Input: 1, Allow: false, Sent: 320 * ms, Received: 321 * ms}, time.Second, Stale, 1, 110 * ms},
		{"matching the last version after a regrant", Answer{Input: 0, Allow: true, Sent: 320 * ms, Received: 321 * ms}, 0, Fresh, 3, 0},
		{"missing the regrant", Answer{Input: 0, Allow: false, Sent: 320 * ms, Received: 321 * ms}, time.Second, Stale, 2, 10 * ms},
		{"an input without an expectation is not judged", Answer{Input: 3, Allow: false, Sent: 320 * ms, Received: 321 * ms}, 0, Fresh, -1, 0},
		{"named: the version it names, exactly, stale although the decision is current", Answer{Input: 2, Allow: true, Named: true, Version: 1, Sent: 250 * ms, Received: 251 * ms}, 0, StaleBeyond, 1, 40 * ms},
		{"named: fresh", Answer{Input: 2, Allow: true, Named: true, Version: 2, Sent: 250 * ms, Received: 251 * ms}, 0, Fresh, 2, 0},
		{"named: a version in flight", Answer{Input: 0, Allow: false, Named: true, Version: 1, Sent: 99 * ms, Received: 101 * ms}, 0, Fresh, 1, 0},
		{"named: a version not yet sent", Answer{Input: 0, Allow: false, Named: true, Version: 1, Sent: 90 * ms, Received: 95 * ms}, 0, Wrong, -1, 0},
		{"named: a version the world never had", Answer{Input: 2, Allow: true, Named: true, Version: 7, Sent: 400 * ms, Received: 401 * ms}, 0, Wrong, -1, 0},
		{"named: a negative version", Answer{Input: 2, Allow: true, Named: true, Version: -1, Sent: 400 * ms, Received: 401 * ms}, 0, Wrong, -1, 0},
		{"named: the decision is not that version's", Answer{Input: 0, Allow: true, Named: true, Version: 2, Sent: 250 * ms, Received: 251 * ms}, 0, Wrong, -1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := world(t, c.allowed)
			got := j.Judge(c.a)
			if got.Verdict != c.want || got.Matched != c.matched || got.Age != c.age {
				t.Errorf("got %s (version %d, age %s), want %s (version %d, age %s)", got.Verdict, got.Matched, got.Age, c.want, c.matched, c.age)
			}
		})
	}
}

func TestStreamRejects(t *testing.T) {
	exp := []workload.Expect{workload.ExpectAllow, workload.Unverified}
	for name, c := range map[string]Change{
		"an input past the last":       {Source: "c.jsonl:4", Sets: map[int]bool{2: true}},
		"an input without expectation": {Source: "c.jsonl:4", Sets: map[int]bool{1: true}},
	} {
		if _, err := NewStream(exp, []Change{c}); err == nil || err.Error()[:10] != "c.jsonl:4:" {
			t.Errorf("%s: error %v, want one naming c.jsonl:4", name, err)
		}
	}
}

func TestTallyVisibility(t *testing.T) {
	j := world(t, time.Second)
	tl := NewTally(3, 0, time.Second, 0)
	// Change 1 (acknowledged at 110 ms) revokes input 0: answers missing it until 150 ms, seen
	// from 170 ms.
	for _, a := range []Answer{
		{Input: 0, Allow: true, Sent: 100 * ms, Received: 102 * ms},  // fresh: in flight
		{Input: 0, Allow: true, Sent: 120 * ms, Received: 125 * ms},  // stale
		{Input: 0, Allow: true, Sent: 145 * ms, Received: 150 * ms},  // stale: the last missing it
		{Input: 0, Allow: false, Sent: 165 * ms, Received: 170 * ms}, // seen
		{Input: 0, Allow: false, Sent: 175 * ms, Received: 180 * ms},
		{Input: 2, Allow: false, Sent: 175 * ms, Received: 180 * ms}, // wrong
	} {
		tl.Record(j, a, a.Received-a.Sent)
		tl.Answered(a.Received)
	}
	if tl.Verdicts != [NumVerdicts]uint64{Fresh: 3, Stale: 2, Wrong: 1} {
		t.Errorf("verdicts %v", tl.Verdicts)
	}
	vis := tl.Visibility(j.Stream, j.Log)
	if len(vis) != 3 {
		t.Fatalf("visibility of %d changes, want 3", len(vis))
	}
	if v := vis[0]; !v.Seen || v.ToVisible != 60*ms || v.NewEnemy != 40*ms {
		t.Errorf("change 1: %+v, want visible 60ms after its acknowledgement, missed until 40ms after", v)
	}
	if v := vis[1]; v.Seen || v.NewEnemy != 0 {
		t.Errorf("change 2, never asked about: %+v", v)
	}
	if p := tl.Pause(); p != 25*ms {
		t.Errorf("pause %s, want 25ms (the answers of 125 and 150 ms)", p)
	}
	if n := tl.NearLatency.TotalCount() + tl.SteadyLatency.TotalCount(); n != 5 {
		t.Errorf("%d latencies recorded, want the 5 not wrong", n)
	}
	// Merging keeps the earliest sighting and the latest miss.
	other := NewTally(3, 0, time.Second, 0)
	other.Record(j, Answer{Input: 0, Allow: false, Sent: 130 * ms, Received: 140 * ms}, 10*ms)
	tl.Merge(other)
	if v := tl.Visibility(j.Stream, j.Log)[0]; v.ToVisible != 30*ms || v.NewEnemy != 40*ms {
		t.Errorf("merged change 1: %+v, want seen 30ms after, missed until 40ms after", v)
	}
}
