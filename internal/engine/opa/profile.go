package opa

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/profiler"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/authzbench/authzbench/internal/profile"
	"github.com/authzbench/authzbench/internal/workload"
)

// Profile evaluates every input of w under OPA's profiler (engine.Profiler), with the query
// every OPA target of a run uses (Compiled).
func (opa) Profile(ctx context.Context, w *workload.Workload, o profile.Options) (*profile.Report, error) {
	if !w.HasRego() {
		return nil, fmt.Errorf("workload %s has no Rego version to profile", w.Name)
	}
	pq, err := Compiled(ctx, nil, w)
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
	lines := map[key]*profile.Line{}
	rep := &profile.Report{Workload: w.Name, Query: w.Query, Inputs: len(w.Inputs)}
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
					l = &profile.Line{File: file, Line: s.Location.Row, Source: sourceLine(file, s.Location.Row)}
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
	slices.SortFunc(rep.Lines, func(a, b profile.Line) int {
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
