package opa

import (
	"context"
	"testing"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// In process, a write OPA acknowledged is committed to its store: a decision begun after it
// reads it. Each change of rbac's own stream, applied in turn, is seen by the next decision of
// every input it sets, on a worker that decided before the write (opa/inproc's prepared query is
// dropped at the commit and prepared again, the SDK's kept).
func TestStoreWritesSeenOnceAcknowledged(t *testing.T) {
	for _, kind := range []string{"opa/inproc", "opa/sdk"} {
		t.Run(kind, func(t *testing.T) {
			w := builtin(t, "rbac", 400)
			made, err := workload.BuiltinChanges(w, 12)
			if err != nil {
				t.Fatal(err)
			}
			var cfg kinds.Config
			if kind == "opa/sdk" {
				cfg = &SDKConfig{}
			}
			tg := startTarget(t, kind, kinds.Common{}, cfg, w)
			applier, err := kinds.WriterOf(tg)
			if err != nil {
				t.Fatal(err)
			}
			d := tg.Worker()
			defer kinds.CloseDecider(d)
			decide := func(i int) bool {
				out := d.Decide(context.Background(), i)
				if out.Kind != verify.Decided {
					t.Fatalf("input %d: %v %v", i+1, out.Kind, out.Err)
				}
				return out.Allow
			}
			for i, in := range w.Inputs {
				if in.Expect != workload.Unverified && decide(i) != (in.Expect == workload.ExpectAllow) {
					t.Fatalf("before any write, input %d decided against its expectation", i+1)
				}
			}
			flipped := 0
			for k, c := range made {
				before := map[int]bool{}
				for i := range c.Sets {
					before[i] = decide(i)
				}
				form, err := engine.WriteFor(Name, w, c)
				if err != nil {
					t.Fatal(err)
				}
				if ack := applier.Apply(context.Background(), k+1, change.Change{Sets: c.Sets, Form: form}); ack.Class != "" || ack.Err != nil {
					t.Fatalf("change %d (%s): %s %v", k+1, c.What, ack.Class, ack.Err)
				}
				for i, want := range c.Sets {
					if got := decide(i); got != want {
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
			if ack := applier.Apply(context.Background(), 13, change.Change{Form: []byte(`[{"op": "move", "path": "/rbac"}]`)}); ack.Class != "refused" {
				t.Errorf("a move: %+v, want refused", ack)
			}
		})
	}
}
