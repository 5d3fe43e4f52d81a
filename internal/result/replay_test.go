package result

import "testing"

// A merge keeps each replay's impact once: every shard of a replay found it before its load.
func TestMergeKeepsReplaysOnce(t *testing.T) {
	a := docOf(syntheticRun(t, 1, uniform(10_000, 20_000, 50), []int64{5e6}, []int64{80e3}, uniform(5_000, 50_000, 50)))
	b := docOf(syntheticRun(t, 1, uniform(30_000, 40_000, 50), []int64{6e6}, []int64{70e3}, uniform(5_000, 50_000, 60)))
	flip := Flip{DecisionID: "d1", Path: "authz/allow", Old: "allow", New: "deny"}
	a.Replays = []Replay{{Workload: "log", Log: "log.jsonl", Events: 2, Reproduced: 1, Flipped: []Flip{flip}}}
	b.Replays = []Replay{a.Replays[0], {Workload: "log:other", Log: "log.jsonl", Events: 1, Reproduced: 1}}
	doc, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Replays) != 2 || doc.Replays[0].Flipped[0] != flip || doc.Replays[1].Workload != "log:other" {
		t.Errorf("replays %+v", doc.Replays)
	}
}
