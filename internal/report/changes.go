package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/textwrap"
)

// Runs with changes: each operation beside the decisions (the writes) gets rows of its own,
// and the judging of the answers a table of its own, after the notes; a run without changes
// writes nothing here.

var operationHeader = []string{"Run", "Operation", "sent", "ok", "errors", "P50", "P99", "max"}

var changesHeader = []string{"Run", "Figure", "Value"}

// operationRows are a run's decisions and each of its other operations, a row each.
func operationRows(r *result.Run) [][]string {
	s := r.Summary
	name := r.Workload + " on " + r.Label()
	op := "decision"
	if r.Operation != "" {
		op = r.Operation // a list or a batch: its answers are what the summary counts
	}
	rows := [][]string{{name, op, strconv.FormatUint(s.Requests, 10), strconv.FormatUint(s.OK, 10), strconv.FormatUint(s.Errors, 10),
		Duration(s.LatencyUS.P50), Duration(s.LatencyUS.P99), Duration(s.LatencyUS.Max)}}
	for _, o := range r.Operations {
		row := []string{name, o.Name, strconv.FormatUint(o.Requests, 10), strconv.FormatUint(o.OK, 10), strconv.FormatUint(o.Errors, 10), "-", "-", "-"}
		if o.OK > 0 {
			row[5], row[6], row[7] = Duration(o.LatencyUS.P50), Duration(o.LatencyUS.P99), Duration(o.LatencyUS.Max)
		}
		rows = append(rows, row)
	}
	return rows
}

// changesRows say how the world changed and how the answers were judged.
func changesRows(r *result.Run) [][]string {
	c := r.Changes
	name := r.Workload + " on " + r.Label()
	var rows [][]string
	add := func(figure, value string) { rows = append(rows, []string{name, figure, value}) }
	add("changes applied", fmt.Sprintf("%d of %d at %g/s (%s)", c.Applied, c.Stream, c.RatePS, c.Source))
	judged := "by their decisions (each given the newest version it matches)"
	if c.VersionNamed {
		judged = "by the version each named"
		var total uint64
		for _, n := range c.Answers {
			total += n
		}
		if c.AnswersNamed != 0 && c.AnswersNamed < total {
			judged += fmt.Sprintf(" (%d of %d; the others, whose version could not be told, by their decisions)", c.AnswersNamed, total)
		}
	}
	add("answers judged", judged)
	add("fresh", strconv.FormatUint(c.Answers["fresh"], 10))
	stale := strconv.FormatUint(c.Answers["stale"], 10)
	if a := c.StaleAgeUS; a != nil {
		stale += fmt.Sprintf(" (age p50 %s, max %s)", Duration(a.P50), Duration(a.Max))
	}
	within := "stale, within " + Duration(c.AllowedStaleMS*1e3)
	if c.AllowedStaleMS == 0 {
		within = "stale, within the promise (none may be)"
	}
	add(within, stale)
	add("stale beyond the promise", strconv.FormatUint(c.Answers["stale_beyond_promise"], 10))
	add("wrong (no version gave it)", strconv.FormatUint(c.Answers["wrong"], 10))
	if p := c.TimeToVisibleUS; p != nil {
		add("time to visible", fmt.Sprintf("p50 %s, p99 %s, max %s over %d changes", Duration(p.P50), Duration(p.P99), Duration(p.Max), c.Visible))
	}
	if c.Unseen > 0 {
		add("changes never seen", strconv.Itoa(c.Unseen))
	}
	if p := c.NewEnemyWindowUS; p != nil {
		add("new-enemy window", fmt.Sprintf("p50 %s, p99 %s, max %s", Duration(p.P50), Duration(p.P99), Duration(p.Max)))
	}
	add("pause (longest without an answer)", Duration(c.PauseMS*1e3))
	if n := c.NearChangeUS; n != nil {
		steady := "no decision was sent a second or more after a change"
		if st := c.SteadyUS; st != nil {
			steady = "steady " + Duration(st.P99)
		}
		add("P99 in the second after a change", fmt.Sprintf("%s (%s)", Duration(n.P99), steady))
	}
	return rows
}

// changesNotes say what the changes' figures cannot: a closed loop hides a pause, and a write
// that failed stopped the stream.
func changesNotes(r *result.Run) []string {
	c := r.Changes
	if c == nil {
		return nil
	}
	var notes []string
	if r.Load.Model != result.OpenLoop {
		notes = append(notes, "a closed loop hides a pause: its workers wait out a write that stops reads and send nothing meanwhile; an open loop (--rate) shows it")
	}
	if p := r.SUT.Consistency; p != nil {
		asked := ""
		if p.Default {
			asked = " (the default: no --consistency given)"
		}
		notes = append(notes, fmt.Sprintf("the checks asked consistency %s%s: %s", p.Name, asked, p.Why))
	}
	if n := c.Answers["stale_beyond_promise"]; n > 0 {
		notes = append(notes, fmt.Sprintf("%d answers were staler than the %s the consistency promises (--stale-allowed)", n, Duration(c.AllowedStaleMS*1e3)))
	}
	if s := r.Summary; s.Requests > 0 && r.Load.DurationS > 0 && r.WorkloadDoc.Inputs > 1 {
		every := float64(r.WorkloadDoc.Inputs) / (float64(s.Requests) / r.Load.DurationS)
		notes = append(notes, fmt.Sprintf("each input was asked about every %s on average: a time to visible or a new-enemy window reads no finer than how soon the inputs a change flips are asked again",
			Duration(every*1e6)))
	}
	if c.WriteError != "" {
		notes = append(notes, "the stream stopped: "+c.WriteError)
	}
	return notes
}

// writeChanges writes the operations and changes tables of the runs with changes.
func writeChanges(w io.Writer, doc *result.Document, markdown bool) error {
	var ops, changes [][]string
	var notes []string
	for i := range doc.Runs {
		r := &doc.Runs[i]
		if r.Changes == nil && len(r.Operations) == 0 && r.Operation == "" {
			continue
		}
		ops = append(ops, operationRows(r)...)
		if r.Changes != nil {
			changes = append(changes, changesRows(r)...)
			for _, n := range changesNotes(r) {
				notes = append(notes, r.Workload+" on "+r.Label()+": "+n)
			}
		}
	}
	if len(ops) == 0 {
		return nil
	}
	opTitle, chTitle := "Operations: decisions and writes, each with its own latency", "Changes: the world during the run, every answer judged"
	table := textTable
	if markdown {
		table, opTitle, chTitle = mdTable, "**"+opTitle+"**", "**"+chTitle+"**"
	}
	if err := table(w, opTitle, operationHeader, ops); err != nil {
		return err
	}
	if len(changes) > 0 {
		if err := table(w, chTitle, changesHeader, changes); err != nil {
			return err
		}
	}
	for _, n := range notes {
		text := textwrap.Fill("- "+n, TerminalWidth, "  ")
		if markdown {
			text = "- " + n + "\n"
		}
		if _, err := io.WriteString(w, text); err != nil {
			return err
		}
	}
	return nil
}
