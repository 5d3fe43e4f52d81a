// Package replay tells what a new policy does to the decisions of a replayed decision log, before
// any load: how many it reproduces and which it flips. The engine of the policy's language
// decides each event (engine.Redecider: OPA, in process, once per event); this package compares
// and prints, knows no engine, does not time anything (the runs do) and does not read logs
// (internal/workload).
package replay

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/workload"
)

// Impact asks the workload's policy every replayed event's decision, through the engine of its
// language (engine.RedeciderOf), and compares it with the logged one. p is the run's store of
// compiled policies, so the policy is compiled once.
func Impact(ctx context.Context, p *engine.Prepared, w *workload.Workload) (result.Replay, error) {
	r := w.Replay
	out := result.Replay{Workload: w.Name, Log: r.Log, Path: r.Path, Query: w.Query, Field: r.Field,
		Events: len(w.Inputs), Skipped: r.Skipped, OutOfOrder: r.OutOfOrder, Flipped: []result.Flip{}}
	judge := engine.RedeciderOf(w)
	if judge == nil {
		out.NotChecked = "no policy given (--policy): the runs' answers are compared with the logged decisions"
		return out, nil
	}
	decisions, err := judge.Redecide(ctx, p, w)
	if err != nil {
		return out, err
	}
	flippedIDs := map[string]bool{}
	for i, in := range w.Inputs {
		got := decisions[i]
		old := r.Logged(in).String()
		if got == old {
			out.Reproduced++
			continue
		}
		f := result.Flip{DecisionID: in.DecisionID, Path: r.Path, Source: in.Source, Old: old, New: got, Intended: r.Intended[in.DecisionID]}
		if f.Intended && got == in.Expect.String() {
			out.Intended++
		}
		flippedIDs[in.DecisionID] = true
		out.Flipped = append(out.Flipped, f)
	}
	for _, in := range w.Inputs {
		if r.Intended[in.DecisionID] && !flippedIDs[in.DecisionID] {
			out.Unmet = append(out.Unmet, in.DecisionID)
		}
	}
	return out, nil
}

// Print writes the impact for a terminal: the counts, then the first n flips; the result
// file holds them all.
func Print(w io.Writer, r result.Replay, n int) {
	field := ""
	if r.Field != "" {
		field = fmt.Sprintf(", comparing the results' %q field", r.Field)
	}
	fmt.Fprintf(w, "replay %s: %d decisions of path %s (%s)%s\n", r.Log, r.Events, r.Path, r.Query, field)
	if len(r.Skipped) > 0 {
		fmt.Fprintf(w, "  skipped from the log: %s\n", skippedWords(r.Skipped))
	}
	if r.OutOfOrder > 0 {
		fmt.Fprintf(w, "  out of timestamp order in the log: %d events, replayed sorted\n", r.OutOfOrder)
	}
	if r.NotChecked != "" {
		fmt.Fprintf(w, "  impact not checked: %s\n", r.NotChecked)
		return
	}
	unexpected := len(r.Flipped) - r.Intended
	fmt.Fprintf(w, "  reproduced %d of %d; flipped %d (%d intended, %d unexpected)\n", r.Reproduced, r.Events, len(r.Flipped), r.Intended, unexpected)
	for i, f := range r.Flipped {
		if i == n {
			fmt.Fprintf(w, "  … and %d more flips, all in the result file (replays[].flipped)\n", len(r.Flipped)-n)
			break
		}
		mark := ""
		if f.Intended {
			mark = " (intended)"
		}
		fmt.Fprintf(w, "  flipped %s %s: %s → %s%s  [%s]\n", f.DecisionID, f.Path, f.Old, f.New, mark, f.Source)
	}
	if len(r.Unmet) > 0 {
		fmt.Fprintf(w, "  %d expected changes did not happen: %s\n", len(r.Unmet), strings.Join(r.Unmet, ", "))
	}
}

func skippedWords(skipped map[string]int) string {
	kinds := make([]string, 0, len(skipped))
	for k, n := range skipped {
		kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
	}
	sortStrings(kinds)
	return strings.Join(kinds, ", ")
}

func sortStrings(s []string) { slices.Sort(s) }
