package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/compare"
	"github.com/authzbench/authzbench/internal/result"
)

// compareFlags are the flags compare and ab share: how the comparison is written and gated.
type compareFlags struct {
	format string
	failOn string
	alpha  float64
}

func (f *compareFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "table", "output: table, markdown (for a pull request comment) or json")
	fl.StringVar(&f.failOn, "fail-on", "", "exit 1 on a significant change beyond any of these: FIGURE>PERCENT or FIGURE<PERCENT, comma-separated, "+
		"figures throughput, p50, p90, p99, p999, mean (p99>+10%,throughput<-5%); also on a run one side lacks, "+
		"a run without samples, or repetitions too few for the test")
	fl.Float64Var(&f.alpha, "alpha", compare.DefaultAlpha, "significance level of the test: a change is called when p is at or below it")
}

// parsed checks the flags before anything is read or run, naming the flag at fault.
func (f *compareFlags) parsed(cmd *cobra.Command) (compare.Format, compare.Gate, error) {
	format, err := compare.ParseFormat(f.format)
	if err != nil {
		return "", nil, fmt.Errorf("--format: %w", err)
	}
	if !(f.alpha > 0 && f.alpha < 1) {
		return "", nil, fmt.Errorf("--alpha %g: want a level between 0 and 1, such as 0.05", f.alpha)
	}
	var gate compare.Gate
	// --fail-on '' (a CI variable left unset) is refused, not read as no gate: a gate that
	// silently vanished would pass everything.
	if cmd.Flags().Changed("fail-on") {
		if gate, err = compare.ParseGate(f.failOn); err != nil {
			return "", nil, fmt.Errorf("--fail-on: %w", err)
		}
	}
	return format, gate, nil
}

const compareExitHelp = `

Exit status: 0 compared (and the gate, if any, passed); 1 the gate failed; 2 bad input (a flag,
an unreadable result file, files that hold one repetition twice), nothing compared.`

func newCompareCommand(stdout io.Writer) *cobra.Command {
	var f compareFlags
	var anyWorkload, anyTarget bool
	cmd := &cobra.Command{
		Use:   "compare BASE.json NEW.json",
		Short: "Compare two result files run for run, with a significance test; gate CI with --fail-on",
		Long: `compare matches the runs of two result files by workload, target (with its TLS mode and
HTTP/2) and load (model, workers or rate and connections), and shows for each the change in
throughput and latency percentiles from BASE to NEW.

Each change is tested across the runs' repetitions (Mann-Whitney U, two-sided, over one figure
per repetition): "~" says the change is within the noise, a percentage with its p-value that it
is not; "?" says the repetitions are too few for the test to call anything (it needs 4 a side
for p ≤ 0.05: run with --repeat 5). Percentiles are from each side's merged histograms.

With --fail-on, compare is a regression gate: it exits 1 on a significant change beyond a
threshold, and also whenever it cannot judge — a run only one side has, a run with no ok
response, repetitions too few for the test, wrong decisions on the new side, no runs at all. It
never passes on nothing. Two files that share a repetition (one file given twice, a merged
file and one of its inputs), or a file that holds one repetition twice, are refused: the test
would count one measurement as two. Setups that differ (CPU model, cores, GOMAXPROCS, pinning, engine
versions) are warned about: a change may be the machine's.` + compareExitHelp,
		Example: `  # What changed from main to the pull request, each change tested across repetitions
  authzbench compare results/main.json results/pr.json
  # A CI gate, written as a pull request comment
  authzbench compare --format markdown --fail-on 'p99>+10%,throughput<-5%' main.json pr.json > comment.md
  # The two policies authzbench ab measured, compared on purpose
  authzbench compare --any-workload results/ab-20261123-171000-a.json results/ab-20261123-171000-b.json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, gate, err := f.parsed(cmd)
			if err != nil {
				return usageError(err)
			}
			docs := make([]*result.Document, 2)
			var errs []error
			for i, path := range args {
				if docs[i], err = result.Read(path); err != nil {
					errs = append(errs, err)
				}
			}
			if err := errors.Join(errs...); err != nil {
				return usageError(err)
			}
			// The same repetition on both sides, or twice on one, would make the test count one
			// measurement as several: nothing to compare.
			if err := result.Distinct(result.Source{Name: args[0], Doc: docs[0]}, result.Source{Name: args[1], Doc: docs[1]}); err != nil {
				return usageError(fmt.Errorf("compare: %w", err))
			}
			o := compare.Options{Alpha: f.alpha, IgnoreWorkload: anyWorkload, IgnoreTarget: anyTarget}
			res := compare.Compare(args[0], docs[0], args[1], docs[1], o)
			return writeComparison(stdout, res, format, gate)
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&anyWorkload, "any-workload", false, "match runs whatever their workload: two policies compared on purpose (the files authzbench ab wrote for --policy-a/-b or --workload-a/-b)")
	cmd.Flags().BoolVar(&anyTarget, "any-target", false, "match runs whatever their target: two targets compared on purpose (ab's --target-a/-b)")
	return cmd
}

// writeComparison writes the comparison and judges it by the gate, if any: exit 1 when it fails.
func writeComparison(w io.Writer, res *compare.Result, format compare.Format, gate compare.Gate) error {
	var verdict *compare.Verdict
	if gate != nil {
		v := gate.Check(res)
		verdict = &v
	}
	if err := compare.NewReport(res, gate, verdict).Write(w, format); err != nil {
		return &exitError{exitFailed, err}
	}
	if verdict != nil && !verdict.Passed {
		return &exitError{exitFailed, fmt.Errorf("gate %s failed: %d reason(s) (see above)", verdict.Expression, len(verdict.Failures))}
	}
	return nil
}
