package report

import (
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// The table says how the answers were judged: by their decisions, by the version each named, or
// (SpiceDB's server, whose answers asked while a write was in flight cannot be placed) by the
// versions of most and the decisions of the rest, with how many.
func TestChangesRowsSayHowAnswersWereJudged(t *testing.T) {
	answers := map[string]uint64{"fresh": 90, "stale": 8, "stale_beyond_promise": 0, "wrong": 0}
	for _, c := range []struct {
		name  string
		named bool
		count uint64
		want  string
	}{
		{"by decision", false, 0, "by their decisions (each given the newest version it matches)"},
		{"every answer named (a result before the count)", true, 0, "by the version each named"},
		{"every answer named", true, 98, "by the version each named"},
		{"some by decision", true, 95, "by the version each named (95 of 98; the others, whose version could not be told, by their decisions)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &result.Run{Workload: "rbac", Target: "spicedb/server",
				Changes: &result.Changes{Answers: answers, VersionNamed: c.named, AnswersNamed: c.count}}
			got := ""
			for _, row := range changesRows(r) {
				if row[1] == "answers judged" {
					got = row[2]
				}
			}
			if got != c.want {
				t.Errorf("answers judged %q, want %q", got, c.want)
			}
		})
	}
}
