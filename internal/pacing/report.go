package pacing

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Alignment says in the report how the schedule was placed, so a reader of the file alone knows
// what lateness means.
const Alignment = "arrival k (in time order) is held to slot t0 + k/asked_rps, with t0 the latest start that leaves no arrival early: the earliest arrival relative to its slot is on time"

// ReplayAlignment is Alignment for a replay's schedule.
const ReplayAlignment = "arrival k (in time order) is held to t0 + due_k, event k's recorded offset from the first (gaps over max_gap_s shortened to it) divided by speed, with t0 the latest start that leaves no arrival early: the earliest arrival relative to its slot is on time"

// ReplaySchedule is the schedule a recording server judged a replay against: the decision log's
// events of one path, at their recorded offsets divided by Speed, as authzbench run --speed
// sends them. Its fields are those of the replay's result (load.replay), so the two can be
// matched.
type ReplaySchedule struct {
	Log           string  `json:"log"`
	Path          string  `json:"path"`
	Events        int     `json:"events"`
	SpanS         float64 `json:"span_s"`
	Speed         float64 `json:"speed"`
	MaxGapS       float64 `json:"max_gap_s,omitempty"`
	GapsShortened int     `json:"gaps_shortened,omitempty"`
	// Describe is the schedule in words, as run's table names it.
	Describe string `json:"describe"`
}

// Report is the file a recording server writes: where and how it recorded, and the analysis.
type Report struct {
	Created time.Time `json:"created"`
	// Listen is the address the server answered on.
	Listen string `json:"listen"`
	// Seen is every request that arrived, those past the cap included; Cap is how many were
	// stored, and CapReached says that later ones are left out of the analysis.
	Seen       int64  `json:"seen"`
	Cap        int    `json:"cap"`
	CapReached bool   `json:"cap_reached"`
	Alignment  string `json:"alignment"`
	// Replay is the schedule judged against in place of asked_rps, when it was a replay's.
	Replay *ReplaySchedule `json:"replay,omitempty"`
	// SkippedRequests is --pacing-skip-requests: the first arrivals left out, before the skip.
	SkippedRequests int `json:"skip_requests,omitempty"`
	Analysis
}

// WriteJSON writes the report as indented JSON, the form --pacing-out keeps (the command puts
// it in place whole, as every output).
func (r Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("pacing report: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Summary writes the report for a person: what was judged, how late it was, and anything left
// out.
func Summary(w io.Writer, r Report) {
	a := r.Analysis
	against := fmt.Sprintf("%.0f req/s", a.AskedRPS)
	if r.Replay != nil {
		against = fmt.Sprintf("the %s (%s, path %s)", r.Replay.Describe, r.Replay.Log, r.Replay.Path)
	}
	fmt.Fprintf(w, "pacing against %s: %d arrivals judged over %.3f s, achieved %.1f req/s, %d expected, %d missing",
		against, a.Arrivals, a.SpanSeconds, a.AchievedRPS, a.Expected, a.Missing)
	if a.Skipped > 0 || a.AfterWindow > 0 {
		if r.SkippedRequests > 0 {
			then := ""
			if a.SkipSeconds > 0 {
				then = fmt.Sprintf(", then those within %s of the next", seconds(a.SkipSeconds))
			}
			fmt.Fprintf(w, " (%d left out: the first %d requests%s; %d after the window)", a.Skipped, r.SkippedRequests, then, a.AfterWindow)
		} else {
			fmt.Fprintf(w, " (%d left out in the first %s, %d after the window)", a.Skipped, seconds(a.SkipSeconds), a.AfterWindow)
		}
	}
	if a.Extra > 0 {
		fmt.Fprintf(w, "; %d more arrivals than the schedule has slots, not judged", a.Extra)
	}
	fmt.Fprintln(w)
	if a.Arrivals > 0 {
		l := a.LatenessUS
		fmt.Fprintf(w, "lateness against the ideal schedule: p50 %.0f µs, p90 %.0f µs, p99 %.0f µs, p99.9 %.0f µs, max %.0f µs; %.2f %% of arrivals (%d) more than 1 ms late\n",
			l.P50, l.P90, l.P99, l.P999, l.Max, a.LateOver1msPercent, a.LateOver1ms)
	}
	if r.CapReached {
		fmt.Fprintf(w, "the recording cap was reached: %d arrivals seen, only the first %d stored and judged (raise --pacing-cap)\n", r.Seen, r.Cap)
	}
}

func seconds(s float64) string { return time.Duration(s * float64(time.Second)).String() }
