package main

import (
	"path/filepath"
	"testing"
)

// rbac's own stream through each in-process engine and Cedar's server: every answer is judged,
// none wrong, and none stale (in process a write acknowledged is committed or swapped in, and
// the Cedar server swaps before it answers): a check sent after the acknowledgement sees it.
func TestChangesLocalEnginesNeverStaleAfterAck(t *testing.T) {
	for _, target := range []string{"opa/inproc", "opa/sdk", "cedar/inproc", "cedar/server"} {
		t.Run(target, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			doc, _ := runOK(t, out, "run", "--target", target, "--workload", "rbac", "--changes", "builtin", "--change-rate", "20/s",
				"--workers", "4", "--duration", "2s", "--warmup", "0s", "--no-progress")
			r := doc.Runs[0]
			c := r.Changes
			if c == nil || c.Applied < 10 {
				t.Fatalf("changes %+v: want at least 10 applied in 2s at 20/s", c)
			}
			if c.Answers["stale"] != 0 || c.Answers["stale_beyond_promise"] != 0 || c.Answers["wrong"] != 0 || r.Summary.WrongDecision != 0 {
				t.Errorf("answers %v, wrong decisions %d: a check sent after a write was acknowledged must see it", c.Answers, r.Summary.WrongDecision)
			}
			if c.Answers["fresh"] != r.Summary.OK || r.Summary.OK == 0 {
				t.Errorf("%d fresh of %d ok decisions: every answer is judged", c.Answers["fresh"], r.Summary.OK)
			}
			if c.Visible == 0 || c.NewEnemyWindowUS == nil || c.NewEnemyWindowUS.Max != 0 {
				t.Errorf("visible %d, new-enemy window %+v: want changes seen and none missed after its acknowledgement", c.Visible, c.NewEnemyWindowUS)
			}
			if w := r.Operations[0]; w.OK != uint64(c.Applied) || w.Errors != 0 {
				t.Errorf("writes %+v", w)
			}
		})
	}
}
