package opa

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/profile"
	"github.com/authzbench/authzbench/internal/workload"
)

// A policy whose cost is known: line 7 walks 200 elements for every input, line 5 compares
// once. The profile must rank the walk first, count every evaluation exactly, and share the
// whole time among the lines.
const loopPolicy = `package loop

default allow := false

allow if input.n > 0

allow if {
	some x in data.loop.items
	x == input.n
}
`

func loopWorkload(inputs int, wrongExpect bool) *workload.Workload {
	items := make([]int, 200)
	for i := range items {
		items[i] = -i
	}
	w := &workload.Workload{Name: "loop", Query: "data.loop.allow",
		Policies: []workload.File{{Name: "loop.rego", Content: []byte(loopPolicy)}},
		Data:     mustJSON(map[string]any{"loop": map[string]any{"items": items}})}
	for i := range inputs {
		// n is negative, so the cheap rule fails and the walk finds -n/2... or nothing.
		n := -(1000 + i)
		expect := workload.ExpectDeny
		if wrongExpect && i == 0 {
			expect = workload.ExpectAllow
		}
		w.Inputs = append(w.Inputs, workload.Input{JSON: []byte(fmt.Sprintf(`{"n": %d}`, n)), Expect: expect})
	}
	return w
}

func TestProfileRanksTheLoopAndCountsEvaluations(t *testing.T) {
	// Enough rounds that the walk's time outweighs a descheduling on a busy machine (a time
	// slice landing on one line ranked line 5 first once, at 2 rounds: 20 ms in all).
	const inputs, rounds = 20, 30
	rep, err := opa{}.Profile(context.Background(), loopWorkload(inputs, false), profile.Options{Rounds: rounds})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Evaluations != rounds*inputs || rep.Inputs != inputs || rep.Wrong != 0 {
		t.Errorf("evaluations %d of %d inputs, %d wrong; want %d of %d, none wrong", rep.Evaluations, rep.Inputs, rep.Wrong, rounds*inputs, inputs)
	}
	byLine := map[int]profile.Line{}
	var shares float64
	for _, l := range rep.Lines {
		shares += l.Share
		if l.File == "loop.rego" {
			byLine[l.Line] = l
		}
	}
	if math.Abs(shares-1) > 1e-9 {
		t.Errorf("shares add up to %f, want 1", shares)
	}
	cheap, walk, match := byLine[5], byLine[8], byLine[9]
	// The rule on line 5 counts its head and its body: a fixed number per evaluation.
	if cheap.Evals == 0 || cheap.Evals%(rounds*inputs) != 0 || cheap.Evals > 2*rounds*inputs {
		t.Errorf("line 5 evaluated %d times, want the same few times per evaluation (%d evaluations)", cheap.Evals, rounds*inputs)
	}
	if match.Evals != 200*rounds*inputs {
		t.Errorf("line 9 evaluated %d times, want once per item per evaluation (%d)", match.Evals, 200*rounds*inputs)
	}
	if walk.Redos < 199*rounds*inputs {
		t.Errorf("line 8 redone %d times, want at least one per further item (%d)", walk.Redos, 199*rounds*inputs)
	}
	if top := rep.Lines[0]; top.File != "loop.rego" || (top.Line != 8 && top.Line != 9) {
		t.Errorf("hottest line %s (%s), want the walk over 200 items, line 8 or 9", top.Location(), top.Source)
	}
	if match.Source != "x == input.n" {
		t.Errorf("line 9 reads %q, want it as written", match.Source)
	}
}

// A profile of a policy that decides wrongly is counted as such, so the command can fail.
func TestProfileCountsWrongDecisions(t *testing.T) {
	rep, err := opa{}.Profile(context.Background(), loopWorkload(5, true), profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Wrong != 1 || rep.Evaluations != 5 {
		t.Errorf("%d wrong of %d, want 1 of 5", rep.Wrong, rep.Evaluations)
	}
}

func TestProfileRenders(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := opa{}.Profile(context.Background(), w, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Wrong != 0 || rep.Evaluations != len(w.Inputs) {
		t.Fatalf("rbac: %d wrong of %d", rep.Wrong, rep.Evaluations)
	}
	top := rep.Top(3)
	if len(top.Lines) != 3 || top.TotalNS != rep.TotalNS {
		t.Errorf("top 3: %d lines, total %d (want 3, and the total of all %d lines)", len(top.Lines), top.TotalNS, len(rep.Lines))
	}
	var table, js bytes.Buffer
	if err := top.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, l := range top.Lines {
		if !strings.Contains(table.String(), l.Location()) {
			t.Errorf("table does not show %s:\n%s", l.Location(), table.String())
		}
	}
	if !strings.Contains(table.String(), "rbac.rego:") || strings.Contains(table.String(), "authzbench-compile-") {
		t.Errorf("table names the built-in's files by a temporary path, or not at all:\n%s", table.String())
	}
	if err := top.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back profile.Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Lines) != 3 || back.Lines[0] != top.Lines[0] {
		t.Errorf("JSON does not read back as the report: %v\n%s", err, js.String())
	}
}
