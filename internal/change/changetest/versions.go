package changetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// Stream is a built-in family's changes (made by its reference model) in an engine's write
// form: write puts each into the form, and checks it as the engine would before any load.
// Each change's Source is what it does, for the messages of DecidesByEachVersion.
func Stream(t testing.TB, w *workload.Workload, made []workload.Change, write func(workload.Change) (json.RawMessage, error)) *change.Stream {
	t.Helper()
	expects := make([]workload.Expect, len(w.Inputs))
	for i, in := range w.Inputs {
		expects[i] = in.Expect
	}
	cs := make([]change.Change, len(made))
	for k, c := range made {
		form, err := write(c)
		if err != nil {
			t.Fatalf("change %d (%s): %v", k+1, c.What, err)
		}
		cs[k] = change.Change{Source: c.What, Sets: c.Sets, Form: form}
	}
	s, err := change.NewStream(expects, cs)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// DecidesByEachVersion applies the stream's changes in order through a, and after each one is
// acknowledged asks d about every input: each must be decided as the stream says it is at that
// version, since an engine acknowledges a write once the next decision reads it. A stream none of
// whose changes flips a decision fails the test, which would show nothing.
func DecidesByEachVersion(t testing.TB, a change.Applier, d kinds.Decider, s *change.Stream) {
	t.Helper()
	flipped := 0
	for k, c := range s.Changes {
		v := k + 1
		if ack := a.Apply(context.Background(), v, c); ack.Class != "" || ack.Err != nil {
			t.Fatalf("change %d (%s): %s %v", v, c.Source, ack.Class, ack.Err)
		}
		for i := range s.Inputs() {
			out := d.Decide(context.Background(), i)
			if out.Kind != verify.Decided {
				t.Fatalf("change %d: input %d: %v", v, i+1, out.Err)
			}
			if want := s.Allowed(i, v); out.Allow != want {
				t.Errorf("after change %d (%s), input %d decided %v, want %v", v, c.Source, i+1, out.Allow, want)
			}
			if s.Allowed(i, v) != s.Allowed(i, v-1) {
				flipped++
			}
		}
	}
	if flipped == 0 {
		t.Fatal("no change flipped a decision: the test shows nothing")
	}
}
