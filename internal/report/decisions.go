package report

import (
	"fmt"
	"io"

	"github.com/authzbench/authzbench/internal/result"
)

// decisionsHeader are the columns of the allowed-and-denied table.
var decisionsHeader = []string{"Workload", "Target", "Decision", "Responses", "Share", "P50", "P90", "P99", "Max"}

// writeDecisions writes, for the runs that kept them (summary.decisions), their ok responses
// apart by decision: a denied check walks every branch of the policy where an allowed one may
// stop at the first that grants, so a run's one latency, over a mix of both, can hide either.
// A decision no response got has no row (its share is the other's 100 %); runs recorded before
// the split was kept add no row, and without any the table is left out.
func writeDecisions(w io.Writer, doc *result.Document, markdown bool) error {
	var rows [][]string
	for i := range doc.Runs {
		r := &doc.Runs[i]
		d := r.Summary.Decisions
		if d == nil {
			continue
		}
		total := d.Allow.Count + d.Deny.Count
		for _, x := range []struct {
			name string
			l    result.DecisionLatency
		}{{"allow", d.Allow}, {"deny", d.Deny}} {
			if x.l.Count == 0 {
				continue // nop allows everything: a deny row of dashes says nothing the share does not
			}
			row := []string{r.Workload, r.Label(), x.name, fmt.Sprint(x.l.Count), fmt.Sprintf("%.1f %%", 100*float64(x.l.Count)/float64(total))}
			if p := x.l.LatencyUS; p != nil {
				row = append(row, Duration(p.P50), Duration(p.P90), Duration(p.P99), Duration(p.Max))
			} else {
				row = append(row, "-", "-", "-", "-")
			}
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	title, table := "Allowed and denied apart: the ok responses by decision, each with its own latency", textTable
	if markdown {
		title, table = "**"+title+"**", mdTable
	}
	return table(w, title, decisionsHeader, rows)
}
