package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/profile"
	"github.com/authzbench/authzbench/internal/workload"
)

// profileFormat is how profile prints its report.
type profileFormat string

const (
	profileTable profileFormat = "table"
	profileJSON  profileFormat = "json"
)

var profileFormats = map[profileFormat]func(*profile.Report, io.Writer) error{
	profileTable: (*profile.Report).WriteTable,
	profileJSON:  (*profile.Report).WriteJSON,
}

func newProfileCommand(stdout, stderr io.Writer) *cobra.Command {
	var name, format string
	var top, rounds int
	var user runFlags
	cmd := &cobra.Command{
		Use:   "profile",
		Short: "Show where a Rego policy spends its evaluation time, line by line (--format table|json)",
		Long: `profile evaluates every input of a workload (a built-in one with --workload, or your files
with --policy, --data and --inputs, as run takes them) in process under OPA's profiler, and
prints the policy's lines hottest first: file:line, the time spent in the line's expressions,
its share of the total, how many times its expressions were evaluated, and how many times Rego
backtracked into them for another binding (redos: a loop's further elements).

The profiler reads the clock around every expression, so its times are inflated: read the
shares to choose what to rewrite, then measure the rewrite with authzbench run. Every decision
is checked as in a run; a wrong one fails the command.` + exitStatusHelp,
		Example: `  # Where a built-in policy spends its time, hottest line first
  authzbench profile --workload risk
  # The 5 hottest lines, as JSON
  authzbench profile --workload api --top 5 --format json
  # Your own policy, every input evaluated 3 times
  authzbench profile --policy authz.rego --data data.json --inputs inputs.jsonl --rounds 3`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			write, ok := profileFormats[profileFormat(format)]
			if !ok {
				return usageError(fmt.Errorf("--format %q: want table or json", format))
			}
			if top < 0 || rounds < 0 {
				return usageError(errors.New("--top and --rounds must not be negative"))
			}
			spec := user.userSpec()
			userFiles := spec.HasRego() || spec.HasCedar()
			if err := checkPolicyOptions(&user, userFiles); err != nil {
				return usageError(err)
			}
			var w *workload.Workload
			var err error
			switch {
			case userFiles && name != "":
				return usageError(errors.New("--workload names a built-in workload; give it or --policy and --inputs, not both"))
			case userFiles:
				if spec.HasCedar() {
					return usageError(errors.New("profile reads Rego only: leave out the Cedar flags"))
				}
				if w, err = workload.FromFiles(spec); err != nil {
					return usageError(flagNamed(err))
				}
			case name == "":
				return usageError(errors.New("give --workload NAME (one of " + fmt.Sprint(workload.Names()) + ") or --policy and --inputs"))
			default:
				if w, err = workload.Builtin(name); err != nil {
					return usageError(fmt.Errorf("--workload: %w", err))
				}
			}
			profiler, err := engine.ProfilerOf(w)
			if err != nil {
				return usageError(err)
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			defer onInterrupt(cancel, stderr)()
			rep, err := profiler.Profile(ctx, w, profile.Options{Rounds: rounds})
			if err != nil {
				if ctx.Err() != nil {
					return &exitError{exitInterrupted, context.Cause(ctx)}
				}
				return usageError(err)
			}
			if err := write(rep.Top(top), stdout); err != nil {
				return &exitError{exitFailed, err}
			}
			if rep.Wrong > 0 {
				return &exitError{exitFailed, fmt.Errorf("workload %s: %d of %d evaluations gave another decision than expected; run authzbench workloads verify to see which", w.Name, rep.Wrong, rep.Evaluations)}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&name, "workload", "", "built-in workload to profile")
	fl.IntVar(&top, "top", 15, "show the N hottest lines (0: all)")
	fl.IntVar(&rounds, "rounds", 1, "evaluate every input this many times")
	fl.StringVar(&format, "format", string(profileTable), "table or json")
	addUserFileFlags(fl, &user)
	markCounts(fl, "rounds")
	return cmd
}
