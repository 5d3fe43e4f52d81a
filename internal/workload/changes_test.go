package workload

import (
	"encoding/json"
	"testing"
)

// The rbac family's stream: each change's decisions are the reference model's after it, and
// the model at version 0 gives the inputs' own expectations.
func TestRBACChanges(t *testing.T) {
	w, err := Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := BuiltinChanges(w, 40)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 40 {
		t.Fatalf("%d changes, want 40", len(cs))
	}
	flips := 0
	now := make([]bool, len(w.Inputs))
	for i, in := range w.Inputs {
		now[i] = in.Expect == ExpectAllow
	}
	for k, c := range cs {
		var ops []map[string]any
		if err := json.Unmarshal(c.Patch, &ops); err != nil || len(ops) != 1 || ops[0]["op"] != "replace" {
			t.Fatalf("change %d: patch %s", k+1, c.Patch)
		}
		for i, allow := range c.Sets {
			if allow != now[i] {
				flips++
				now[i] = allow
			}
		}
		// A grant restores what the revocation before it took: every decision back to version 0's.
		if k%2 == 1 {
			for i, in := range w.Inputs {
				if in.Expect != Unverified && now[i] != (in.Expect == ExpectAllow) {
					t.Fatalf("after change %d (%s), input %d is %v, not its first decision", k+1, c.What, i+1, now[i])
				}
			}
		}
	}
	if flips < 10 {
		t.Errorf("%d decisions flipped over 40 changes: the stream should change what the inputs see", flips)
	}
	// The family's version 0 agrees with the inputs' expectations (nothing set differs before a change).
	if _, err := BuiltinChanges(&Workload{Name: "nop"}, 1); err == nil {
		t.Error("a family without a stream gave one")
	}
}
