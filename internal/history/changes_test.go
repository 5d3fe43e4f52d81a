package history

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func addAll(t *testing.T, s Store, ins []*Input) {
	t.Helper()
	for _, in := range ins {
		if _, err := s.Add(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	}
}

// A step of 15 % in the service time at commit 20 of 40 is found there, in throughput, p50 and
// p99, as a regression of about 15 % whose interval holds it; nothing else is flagged.
func testChangesStep(t *testing.T, where string) {
	s := openT(t, where)
	ins := stepSeries(t, 2000, 1.15, 11)
	addAll(t, s, ins)
	changes, err := s.Changes(context.Background(), ChangeOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	found := map[Figure]Change{}
	for _, c := range changes {
		t.Log(c)
		found[c.Figure] = c
	}
	if len(changes) != 3 {
		t.Fatalf("%d changes, want 3 (throughput, p50, p99 at commit 20)", len(changes))
	}
	at := ins[20].Doc.Env.Commit
	for _, f := range []Figure{Throughput, P50, P99} {
		c, ok := found[f]
		if !ok {
			t.Fatalf("no change in %s", f)
		}
		if c.Commit != at || c.Previous != ins[19].Doc.Env.Commit || !c.Regression || c.Branch != "main" {
			t.Errorf("%s: %+v, want a regression at %s", f, c, at)
		}
		want := 0.15 // p50 and p99 grow by 15 %
		if f == Throughput {
			want = 1/1.15 - 1
		}
		if c.Relative == nil || *c.Relative < want-0.03 || *c.Relative > want+0.03 || c.CI95[0] > want || c.CI95[1] < want {
			t.Errorf("%s: change %v in %v, want about %+.3f inside it", f, c.Relative, c.CI95, want)
		}
		if c.NBefore != 60 || c.NAfter != 60 || c.P >= 0.05 {
			t.Errorf("%s: n %d/%d p %.3f, want 60/60 and p < 0.05", f, c.NBefore, c.NAfter, c.P)
		}
	}
}

// An A/A series of 40 commits is flagged nowhere.
func testChangesAA(t *testing.T, where string) {
	s := openT(t, where)
	addAll(t, s, stepSeries(t, 2000, 1, 12))
	changes, err := s.Changes(context.Background(), ChangeOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range changes {
		t.Errorf("A/A series flagged: %v", c)
	}
}

func TestChangesImprovementAndFilters(t *testing.T) {
	s := openT(t, backends()["sqlite"](t))
	addAll(t, s, stepSeries(t, 2000, 0.8, 13)) // 20 % faster from commit 20
	ctx := context.Background()
	changes, err := s.Changes(ctx, ChangeOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 3 {
		t.Fatalf("%d changes, want 3", len(changes))
	}
	for _, c := range changes {
		if c.Regression {
			t.Errorf("%v: a faster service is an improvement", c)
		}
	}
	for filter, want := range map[string]int{"rbac opa/server": 3, "RBAC 4 workers": 3, "@test-2c": 3} {
		got, err := s.Changes(ctx, ChangeOptions{Seed: 1, Series: filter})
		if err != nil || len(got) != want {
			t.Errorf("--series %q: %d changes (%v), want %d", filter, len(got), err, want)
		}
	}
	// A filter that matches nothing is no "no change" (H22): a typo in a CI job's filter would
	// pass every regression.
	for _, o := range []ChangeOptions{{Seed: 1, Series: "cedar"}, {Seed: 1, Branch: "feature"}} {
		got, err := s.Changes(ctx, o)
		var none *NoSeriesError
		if !errors.As(err, &none) || len(got) != 0 || !strings.Contains(err.Error(), "rbac opa/server 4 workers @test-2c on main") {
			t.Errorf("%+v: %d changes, %v; want a NoSeriesError naming what the history holds", o, len(got), err)
		}
	}
	// Below the minimum effect, a significant change is not reported.
	if got, _ := s.Changes(ctx, ChangeOptions{Seed: 1, MinEffect: 0.3}); len(got) != 0 {
		t.Errorf("min effect 30 %%: %d changes of 20 %%, want none", len(got))
	}
}
