package workload

import "testing"

// Shared limits on a built-in workload's input mix: enough of each decision that an engine
// answering always-allow or always-deny fails loudly.
const (
	minAllowShare = 0.30
	maxAllowShare = 0.70
)

// checkInputs checks that every input of the built-in w carries the reference model's decision
// and that between 30 % and 70 % of them expect allow, and returns how many inputs each deny
// reason of the model accounts for. The engines' versions are each checked against the model
// in their own packages (internal/engine/opa's TestBuiltinsMatchReferenceModel, Cedar's ...).
func checkInputs(t *testing.T, w *Workload) (denyReasons map[string]int) {
	t.Helper()
	if len(w.Inputs) == 0 {
		t.Fatalf("workload %s has no inputs", w.Name)
	}
	denyReasons = map[string]int{}
	for i, in := range w.Inputs {
		switch in.Expect {
		case ExpectDeny:
			denyReasons[in.Reason]++
		case Unverified:
			t.Fatalf("workload %s input %d has no expected decision", w.Name, i)
		}
	}
	allows, _, _ := w.Counts()
	share := float64(allows) / float64(len(w.Inputs))
	if share < minAllowShare || share > maxAllowShare {
		t.Errorf("workload %s: %d of %d inputs (%.1f %%) expect allow; want between %.0f %% and %.0f %%",
			w.Name, allows, len(w.Inputs), 100*share, 100*minAllowShare, 100*maxAllowShare)
	}
	t.Logf("workload %s: %d inputs, %.1f %% allow, deny reasons %v", w.Name, len(w.Inputs), 100*share, denyReasons)
	return denyReasons
}

// handCase is a hand-written input with the decision and the reason the reference model must
// give for it.
type handCase[I any] struct {
	name   string
	in     I
	allow  bool
	reason string
}

// checkHandCases runs each case through the reference model of w, so a wrong answer on a
// hand-written case shows up by name rather than somewhere among the generated inputs.
func checkHandCases[I any](t *testing.T, w *Workload, cases []handCase[I], decide func(I) (bool, string)) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			allow, reason := decide(tc.in)
			if allow != tc.allow || reason != tc.reason {
				t.Errorf("%s's reference model: %v, %q; want %v, %q\ninput: %s", w.Name, allow, reason, tc.allow, tc.reason, mustJSON(tc.in))
			}
		})
	}
}
