package verify

import (
	"errors"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/workload"
)

// A list answer is judged whole: the same set in any order (a member given twice counts once)
// is ok; one member missing or extra is a wrong answer naming it; a short answer the engine may
// have cut is truncated, but an extra member is wrong even then.
func TestJudgeSets(t *testing.T) {
	want := NewSet([]string{"a", "b", "c", "b"})
	if want.Len() != 3 {
		t.Fatalf("Len %d, want 3: duplicates count once", want.Len())
	}
	var j Judge
	for _, tc := range []struct {
		name  string
		got   []string
		cut   bool
		kind  Kind
		class Class
		msg   string
	}{
		{"same, another order", []string{"c", "a", "b"}, false, Listed, OK, ""},
		{"same, one twice", []string{"c", "a", "b", "a"}, false, Listed, OK, ""},
		{"one missing", []string{"c", "a"}, false, WrongSet, WrongDecision, "expected 3 objects, got 2: 1 missing (b), 0 extra"},
		{"one missing, given twice", []string{"c", "a", "a"}, false, WrongSet, WrongDecision, "1 missing (b)"},
		{"one extra", []string{"c", "a", "b", "d"}, false, WrongSet, WrongDecision, "0 missing, 1 extra (d)"},
		{"short and cut", []string{"a"}, true, Cut, Truncated, "cut short: 1 of the 3 expected"},
		{"extra and cut", []string{"a", "z"}, true, WrongSet, WrongDecision, "1 extra (z)"},
		{"whole though cut", []string{"a", "b", "c"}, true, Listed, OK, ""},
		{"none", nil, false, WrongSet, WrongDecision, "3 missing (a, b, c)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := j.Judge(want, tc.got, tc.cut)
			if out.Kind != tc.kind {
				t.Fatalf("kind %d, want %d (%v)", out.Kind, tc.kind, out.Err)
			}
			// The expectation of a check plays no part in a list's verdict.
			for _, e := range []workload.Expect{workload.ExpectAllow, workload.ExpectDeny, workload.Unverified} {
				if c := Classify(e, out); c != tc.class {
					t.Errorf("expect %v: class %s, want %s", e, Name(c, 0), Name(tc.class, 0))
				}
			}
			if tc.msg == "" && out.Err != nil || tc.msg != "" && (out.Err == nil || !strings.Contains(out.Err.Error(), tc.msg)) {
				t.Errorf("message %v, want %q", out.Err, tc.msg)
			}
		})
	}
	if Name(Truncated, 0) != "truncated" {
		t.Errorf("Truncated is named %q", Name(Truncated, 0))
	}
}

// The judge's marks outlive their round: after its round counter wraps, a member marked long
// ago must not count as found now.
func TestJudgeRoundWraps(t *testing.T) {
	want := NewSet([]string{"a", "b"})
	j := Judge{round: ^uint32(0) - 1}
	if out := j.Judge(want, []string{"a", "b"}, false); out.Kind != Listed { // round max
		t.Fatalf("%+v", out)
	}
	if out := j.Judge(want, []string{"a"}, false); out.Kind != WrongSet { // wraps to 1
		t.Errorf("after the wrap, a short answer: %+v, want wrong", out)
	}
	if out := j.Judge(want, []string{"b", "a"}, false); out.Kind != Listed {
		t.Errorf("%+v", out)
	}
}

// A batch is judged whole: every decision as expected is ok (an unverified input takes any); one
// decision otherwise is wrong, naming the check; a check without a decision makes the answer
// truncated, unless another is wrong.
func TestJudgeBatch(t *testing.T) {
	allow, deny := workload.ExpectAllow, workload.ExpectDeny
	expects := []workload.Expect{allow, deny, workload.Unverified}
	yes, no := BatchItem{Decided: true, Allow: true}, BatchItem{Decided: true}
	for _, tc := range []struct {
		name string
		got  []BatchItem
		kind Kind
		msg  string
	}{
		{"as expected", []BatchItem{yes, no, yes}, Listed, ""},
		{"one wrong", []BatchItem{yes, yes, no}, WrongSet, "check 2 of 3: expected deny, decided allow"},
		{"one missing", []BatchItem{yes, {}, no}, Cut, "check 2 of 3: no decision"},
		{"one failed", []BatchItem{{Err: errors.New("depth exceeded")}, no, no}, Cut, "check 1 of 3: no decision: depth exceeded"},
		{"missing and wrong", []BatchItem{{}, yes, no}, WrongSet, "check 2 of 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := JudgeBatch(expects, tc.got)
			if out.Kind != tc.kind || (tc.msg == "") != (out.Err == nil) || tc.msg != "" && !strings.Contains(out.Err.Error(), tc.msg) {
				t.Errorf("%+v, want kind %d and %q", out, tc.kind, tc.msg)
			}
		})
	}
}
