package report

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/textwrap"
)

// The capacity searches of a document (authzbench capacity) are one table after the runs: a
// line per workload and target searched, the answer to "what rate does each hold at the SLO",
// with a note for each search whose line alone would mislead (no rate met, every rate met, the
// generator's limit, a search that did not end).

var capacityHeader = []string{"workload", "target", "SLO", "capacity, req/s", "at capacity", "first missed, req/s", "missed because", "probes"}

// capacityRows are the searches, a line each.
func capacityRows(searches []result.Search) [][]string {
	rows := make([][]string, 0, len(searches))
	for _, s := range searches {
		capacity, at, missed, why := "-", "-", "-", ""
		if m := s.Met; m != nil {
			capacity = Thousands(m.Rate)
			at = fmt.Sprintf("p%s %s", strconv.FormatFloat(s.SLO.Percentile, 'g', -1, 64), Duration(m.LatencyUS))
			if floor := s.Ramp == nil && s.Missed == nil || s.Ramp != nil && s.Ramp.AllMet; floor && !s.Interrupted && s.Error == "" {
				capacity = "≥ " + capacity // every rate tried met it: no knee was found
			}
		} else if r := s.Ramp; r != nil && r.Estimate > 0 && s.Missed == nil {
			capacity = "≤ " + Thousands(r.Estimate) // the ramp's estimate, not confirmed
		}
		if m := s.Missed; m != nil {
			missed, why = Thousands(m.Rate), m.Why
		}
		switch {
		case s.Interrupted:
			why = "interrupted: no conclusion"
		case s.Error != "":
			why = "stopped: " + s.Error
		}
		probes := strconv.Itoa(len(s.Probes))
		if s.Ramp != nil {
			probes = "ramp + " + probes
		}
		rows = append(rows, []string{s.Workload, s.Target, searchSLO(s.SLO), capacity, at, missed, why, probes})
	}
	return rows
}

// searchSLO is the SLO in the words of --slo.
func searchSLO(s result.SearchSLO) string {
	latency := time.Duration(s.LatencyUS * 1e3)
	return fmt.Sprintf("p%s<=%s, errors<=%s%%", strconv.FormatFloat(s.Percentile, 'g', -1, 64), latency,
		strconv.FormatFloat(100*s.ErrorRatio, 'g', -1, 64))
}

// capacityNotes say what a line alone would not, and how the table reads.
func capacityNotes(searches []result.Search) []string {
	var notes []string
	for _, s := range searches {
		where := s.Workload + " on " + s.Target
		switch {
		case s.Interrupted:
			notes = append(notes, where+": the search was stopped before it ended; what it met and missed is shown, and no capacity follows from it")
		case s.Error != "":
			notes = append(notes, where+": the search could not go on: "+s.Error)
		case s.Ramp != nil:
			notes = append(notes, where+": "+rampVerdict(s))
		case s.Met == nil && s.Missed != nil && s.Missed.Unmeasured:
			notes = append(notes, fmt.Sprintf("%s: the probe at %s req/s measured no rate (%s): no capacity", where, Thousands(s.Missed.Rate), s.Missed.Why))
		case s.Met == nil && s.Missed != nil && s.Missed.GeneratorBound:
			notes = append(notes, fmt.Sprintf("%s: already at %s req/s the generator fell behind, its own limit on this machine, not the server's", where, Thousands(s.Missed.Rate)))
		case s.Met == nil && s.Missed != nil:
			notes = append(notes, fmt.Sprintf("%s: no rate met the SLO, not even the first, %s req/s: search from a lower --start", where, Thousands(s.Missed.Rate)))
		case s.Met != nil && s.Missed == nil:
			notes = append(notes, fmt.Sprintf("%s: every rate tried met the SLO, up to %s req/s: a floor, not a capacity; raise --max or --max-steps", where, Thousands(s.Met.Rate)))
		case s.Missed != nil && s.Missed.GeneratorBound:
			notes = append(notes, fmt.Sprintf("%s: the rate above the capacity, %s req/s, was missed through the generator: the capacity shown is this machine's generator's limit, not the server's", where, Thousands(s.Missed.Rate)))
		}
	}
	return append(notes, "capacity: the highest constant open-loop rate probed that met the SLO, latency measured from each request's intended send time; the knee lies between it and the first rate missed above it. Each probe is a run in the table above")
}

// rampVerdict says what a ramp's estimate came to at a constant rate.
func rampVerdict(s result.Search) string {
	r := s.Ramp
	est := Thousands(r.Estimate) + " req/s"
	switch {
	case r.Estimate == 0:
		return "the ramp gave no estimate (see its intervals)"
	case s.Met != nil && r.AllMet:
		return "every interval of the ramp met the SLO, and its top, " + est + ", held at a constant rate: a floor, not a capacity; raise --max"
	case s.Met != nil:
		return "the ramp's estimate, " + est + ", held at a constant rate"
	case s.Missed != nil:
		return "the ramp's estimate, " + est + ", did not hold at a constant rate: the ramp overestimated; search below it"
	case r.GeneratorBound:
		return "the ramp's estimate, " + est + ", is the generator's limit on this machine, not the server's, and was not confirmed"
	}
	return "the ramp's estimate, " + est + ", was not confirmed at a constant rate: an upper bound, not a capacity"
}

// writeCapacity writes the table of the document's capacity searches and their notes; nothing
// when it holds none.
func writeCapacity(w io.Writer, searches []result.Search, markdown bool) error {
	if len(searches) == 0 {
		return nil
	}
	title := "Capacity, one search per workload and target"
	var err error
	if markdown {
		err = mdTable(w, "**"+title+"**", capacityHeader, capacityRows(searches))
	} else {
		err = textTable(w, title, capacityHeader, capacityRows(searches))
	}
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	for _, n := range capacityNotes(searches) {
		line := textwrap.Fill("- "+n, TerminalWidth, "  ")
		if markdown {
			line = "- " + n + "\n"
		}
		if _, err := io.WriteString(w, line); err != nil {
			return err
		}
	}
	return nil
}
