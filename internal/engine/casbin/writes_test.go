package casbin

import (
	"context"
	"testing"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// rbac's own stream in Casbin's form, applied to casbin/inproc's own enforcer: each change,
// once acknowledged, is seen by the next decision of every input it sets, and the run's shared
// enforcer, which other targets of the run decide with, is left as loaded.
func TestInprocWritesSeenOnceAcknowledged(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	// Odd: the last change revokes, so the world written differs from the one loaded.
	made, err := workload.BuiltinChanges(w, 11)
	if err != nil {
		t.Fatal(err)
	}
	common := kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared()}
	tg, err := kinds.New("casbin/inproc", common, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	applier, err := kinds.WriterOf(tg)
	if err != nil {
		t.Fatal(err)
	}
	d := tg.Worker()
	decide := func(d kinds.Decider, i int) bool {
		out := d.Decide(context.Background(), i)
		if out.Kind != verify.Decided {
			t.Fatalf("input %d: %v %v", i+1, out.Kind, out.Err)
		}
		return out.Allow
	}
	flipped := 0
	for k, c := range made {
		form, err := engine.WriteFor(Name, w, c)
		if err != nil {
			t.Fatal(err)
		}
		before := map[int]bool{}
		for i := range c.Sets {
			before[i] = decide(d, i)
		}
		if ack := applier.Apply(context.Background(), k+1, change.Change{Sets: c.Sets, Form: form}); ack.Class != "" || ack.Err != nil {
			t.Fatalf("change %d (%s): %s %v", k+1, c.What, ack.Class, ack.Err)
		}
		for i, want := range c.Sets {
			if got := decide(d, i); got != want {
				t.Errorf("change %d (%s): input %d decided %v right after the acknowledgement, want %v", k+1, c.What, i+1, got, want)
			}
			if before[i] != want {
				flipped++
			}
		}
	}
	if flipped == 0 {
		t.Fatal("no change flipped a decision: the test shows nothing")
	}
	// The shared enforcer, which the run's other targets decide with, decides as loaded.
	differs := false
	for i, want := range made[len(made)-1].Sets {
		differs = differs || want != (w.Inputs[i].Expect == workload.ExpectAllow)
	}
	if !differs {
		t.Fatal("the last change leaves every input it sets as loaded: the check below shows nothing")
	}
	shared, err := Load(context.Background(), common.Prepared, w)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range w.Inputs {
		if c := verify.Classify(in.Expect, shared.Decide(i)); c != verify.OK {
			t.Fatalf("the shared enforcer: input %d %s after the writes", i+1, verify.Name(c, 0))
		}
	}
}
