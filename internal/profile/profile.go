// Package profile finds where a Rego policy spends its evaluation time: it evaluates every
// input of a workload under OPA's profiler and ranks the policy's lines by the time spent in
// their expressions, with how often each was evaluated and its share of the total.
//
// It is for choosing what to rewrite in a policy, not for measuring it: the profiler reads the
// clock around every expression, so its times are inflated and only their proportions mean
// something. Measure a rewrite with `authzbench run`.
package profile

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/profiler"
	"github.com/open-policy-agent/opa/v1/rego"

	engineopa "github.com/authzbench/authzbench/internal/engine/opa"
	"github.com/authzbench/authzbench/internal/workload"
)

// Options configure Run.
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
	// Rego backtracked into them for another binding (a loop's next element).
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

// Run evaluates every input of w under OPA's profiler, with the query every OPA target of a
// run uses (engineopa.Compiled).
func Run(ctx context.Context, w *workload.Workload, o Options) (*Report, error) {
	if !w.HasRego() {
		return nil, fmt.Errorf("workload %s has no Rego version to profile", w.Name)
	}
	pq, err := engineopa.Compiled(ctx, nil, w)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", w.Name, err)
	}
	inputs := make([]ast.Value, len(w.Inputs))
	for i, in := range w.Inputs {
		if inputs[i], err = ast.ValueFromReader(strings.NewReader(string(in.JSON))); err != nil {
			return nil, fmt.Errorf("workload %s input %d: %w", w.Name, i+1, err)
		}
	}
	builtinFile := map[string]bool{}
	source := map[string][]string{} // each policy file's lines, to show a line as written
	for _, f := range w.Policies {
		builtinFile[f.Name] = true
		source[f.Name] = strings.Split(string(f.Content), "\n")
	}
	sourceLine := func(file string, row int) string {
		lines, ok := source[file]
		if !ok {
			b, _ := os.ReadFile(file) // a directory's files are only known by their locations
			lines = strings.Split(string(b), "\n")
			source[file] = lines
		}
		if row >= 1 && row <= len(lines) {
			return strings.TrimSpace(lines[row-1])
		}
		return ""
	}
	type key struct {
		file string
		line int
	}
	lines := map[key]*Line{}
	rep := &Report{Workload: w.Name, Query: w.Query, Inputs: len(w.Inputs)}
	for range max(o.Rounds, 1) {
		for i, in := range inputs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			// A profiler per evaluation: one profiler across evaluations would charge the time
			// between them to the last expression of each.
			p := profiler.New()
			rs, err := pq.Eval(ctx, rego.EvalParsedInput(in), rego.EvalQueryTracer(p))
			if err != nil {
				return nil, fmt.Errorf("workload %s input %d: %w", w.Name, i+1, err)
			}
			rep.Evaluations++
			if !decided(rs, w.Inputs[i].Expect, w.UndefinedAs) {
				rep.Wrong++
			}
			for _, s := range p.ReportTopNResults(0, []string{"total_time_ns"}) {
				if s.Location == nil {
					continue
				}
				file := s.Location.File
				if base := filepath.Base(file); builtinFile[base] {
					file = base // written to a temporary directory to be compiled
				}
				k := key{file, s.Location.Row}
				l := lines[k]
				if l == nil {
					l = &Line{File: file, Line: s.Location.Row, Source: sourceLine(file, s.Location.Row)}
					if file == "" {
						l.Source = "(the query " + w.Query + ")"
					}
					lines[k] = l
				}
				l.TimeNS += s.ExprTimeNs
				l.Evals += s.NumEval
				l.Redos += s.NumRedo
				rep.TotalNS += s.ExprTimeNs
			}
		}
	}
	for _, l := range lines {
		if rep.TotalNS > 0 {
			l.Share = float64(l.TimeNS) / float64(rep.TotalNS)
		}
		rep.Lines = append(rep.Lines, *l)
	}
	slices.SortFunc(rep.Lines, func(a, b Line) int {
		return cmp.Or(cmp.Compare(b.TimeNS, a.TimeNS), cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	return rep, nil
}

// decided reports whether the result is the expected decision (any, for an input without one).
func decided(rs rego.ResultSet, want, undefinedAs workload.Expect) bool {
	got := undefinedAs
	if len(rs) > 0 && len(rs[0].Expressions) > 0 {
		switch v := rs[0].Expressions[0].Value.(type) {
		case bool:
			got = map[bool]workload.Expect{true: workload.ExpectAllow, false: workload.ExpectDeny}[v]
		case map[string]any:
			if b, ok := v["allow"].(bool); ok {
				got = map[bool]workload.Expect{true: workload.ExpectAllow, false: workload.ExpectDeny}[b]
			}
		}
	}
	return want == workload.Unverified || got == want
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
