package load

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// failingTarget answers input i with a malformed body when i%3 == 1, an evaluation error when
// i%3 == 2, and a decision otherwise; each error names its input.
type failingTarget struct{ fakeTarget }

func (f *failingTarget) Worker() kinds.Decider { return f }

func (f *failingTarget) Decide(_ context.Context, i int) verify.Outcome {
	switch i % 3 {
	case 1:
		return verify.Outcome{Kind: verify.Malformed, Err: fmt.Errorf("input %d: the body is not JSON", i)}
	case 2:
		return verify.Outcome{Kind: verify.EvalFailed, Err: fmt.Errorf("input %d: eval_builtin_error", i)}
	}
	return verify.Outcome{Kind: verify.Decided, Allow: true}
}

// Both drivers keep the first message of each class, and build histograms up to the ceiling the
// spec asks for.
func TestDriversKeepFirstMessagesAndCeiling(t *testing.T) {
	in := make([]workload.Input, 3)
	for _, tc := range []struct {
		name string
		spec Spec
		// served: the target is behind an HTTP front, which the open loop's event loop serves.
		served bool
	}{
		{"closed", Spec{Workers: 1, Requests: 9, Ceiling: 3 * time.Minute}, false},
		{"open", Spec{Rate: 300, Connections: 1, Duration: 100 * time.Millisecond, Ceiling: 3 * time.Minute}, false},
		{"open, served", Spec{Rate: 300, Connections: 1, Duration: 100 * time.Millisecond, Ceiling: 3 * time.Minute}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var target kinds.Target = &failingTarget{}
			if tc.served {
				target = serveOverHTTP(t, target)
			}
			out := tc.spec.Run(context.Background(), target, in, nil)
			rec := out.Recorder
			if rec.Counts[verify.MalformedResponse] == 0 || rec.Counts[verify.EvalError] == 0 {
				t.Fatalf("counts %v: want malformed_response and eval_error", rec.Counts)
			}
			want := map[string]string{"malformed_response": "input 1: the body is not JSON", "eval_error": "input 2: eval_builtin_error"}
			for class, msg := range want {
				if rec.FirstMessages[class] != msg {
					t.Errorf("first %s message %q, want %q", class, rec.FirstMessages[class], msg)
				}
			}
			if rec.Ceiling() != 3*time.Minute {
				t.Errorf("ceiling %s, want 3m0s", rec.Ceiling())
			}
		})
	}
}
