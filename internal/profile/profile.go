// Package profile is a policy's profile: where its evaluation time goes, line by line, ranked
// by the time spent in each line's expressions, with how often they were evaluated and their
// share of the total, and how it prints (a table, JSON).
//
// It is for choosing what to rewrite in a policy, not for measuring it: a profiler reads the
// clock around every expression, so its times are inflated and only their proportions mean
// something. Measure a rewrite with `authzbench run`. The profile is made by the engine of the
// policy's language (engine.Profiler: OPA's profiler for Rego); this package knows no engine.
package profile

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Options configure a profile (engine.Profiler).
type Options struct {
	// Rounds evaluates every input this many times (at least once), so that lines hit
	// rarely still gather time enough to rank.
	Rounds int
}

// Line is one line of the policy and what its expressions cost over every evaluation.
type Line struct {
	File string `json:"file"` // as the user named it; a built-in workload's file by its own name
	Line int    `json:"line"`
	// Source is the line as written in the policy.
	Source string `json:"source"`
	TimeNS int64  `json:"total_time_ns"`
	// Evals counts the expressions on the line evaluated; Redos, those evaluated again as
	// the evaluation backtracked into them for another binding (a loop's next element, in Rego).
	Evals int `json:"num_eval"`
	Redos int `json:"num_redo"`
	// Share is TimeNS over the time of every line, from 0 to 1.
	Share float64 `json:"share"`
}

// Location is where the line is, as file:line.
func (l Line) Location() string { return fmt.Sprintf("%s:%d", l.File, l.Line) }

// Report is a workload's profile: every line that took time, hottest first.
type Report struct {
	Workload    string `json:"workload"`
	Query       string `json:"query"`
	Inputs      int    `json:"inputs"`
	Evaluations int    `json:"evaluations"`
	// Wrong counts the evaluations whose decision was not the one expected: a profile of a
	// policy that decides wrongly is of little use, so the command fails on any.
	Wrong   int    `json:"wrong"`
	TotalNS int64  `json:"total_time_ns"`
	Lines   []Line `json:"lines"`
}

// Top returns the report with only its n hottest lines (all for n <= 0); shares and the total
// still count every line.
func (r *Report) Top(n int) *Report {
	out := *r
	if n > 0 && n < len(r.Lines) {
		out.Lines = r.Lines[:n]
	}
	return &out
}

// WriteJSON writes the report as one JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report for a terminal: one line of the policy per row.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "workload %s, %s: %d evaluations of %d inputs, %s in profiled expressions\n",
		r.Workload, r.Query, r.Evaluations, r.Inputs, ns(r.TotalNS))
	width := len("LOCATION")
	for _, l := range r.Lines {
		width = max(width, len(l.Location()))
	}
	fmt.Fprintf(&b, "%-*s  %10s  %6s  %9s  %9s  %s\n", width, "LOCATION", "TIME", "SHARE", "EVALS", "REDOS", "SOURCE")
	for _, l := range r.Lines {
		fmt.Fprintf(&b, "%-*s  %10s  %5.1f%%  %9d  %9d  %s\n", width, l.Location(), ns(l.TimeNS), 100*l.Share, l.Evals, l.Redos, clip(l.Source, 60))
	}
	b.WriteString("Times are the profiler's, inflated by its own clock reads: read the shares, measure with `authzbench run`.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func ns(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fs", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fms", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fµs", float64(n)/1e3)
	}
	return fmt.Sprintf("%dns", n)
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
