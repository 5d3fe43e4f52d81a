package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/fit"
	"github.com/authzbench/authzbench/internal/outputs"
	"github.com/authzbench/authzbench/internal/result"
)

func newMergeCommand(stdout, stderr io.Writer) *cobra.Command {
	var out, format string
	var force bool
	cmd := &cobra.Command{
		Use:   "merge RESULT.json... -o MERGED.json",
		Short: "Merge the shards of one scenario (--shard i/N), or repetitions of it, into one result, exactly",
		Long: `merge combines result files into one, exactly: histograms are added (latency, errors,
uncorrected latency, lateness, connection parts, server timers), counts summed, and every
percentile read from the sum, never averaged.

Shards (files written with --shard i/N, on one machine or several): repetition k of every
shard becomes repetition k of the merged run, its throughput taken over the common window,
from the first shard's measured start to the last one's end (a warning says when the shards
measured together for less than 90 % of it). Every shard 1/N to N/N must be given once; each shard's environment is kept in the merged file's "shards".

Whole runs (no --shard): their repetitions are concatenated, as if one run had made them all.

Files that do not belong together are refused, naming them: another scenario, workload,
target, load, deployment or histogram precision, shards overlapping or missing, shards mixed
with whole runs.

A repetition is counted once: each carries the id it was given when it was measured, and a
merge that would hold one twice (a file given twice, a merged file with one of its own inputs)
is refused, naming both files. Files written before ids existed are refused when two of their
repetitions started at the same instant with the same latency histogram.` + outputRulesHelp + exitStatusHelp,
		Example: `  # One open-loop schedule from two generators, each sending half of it from the same instant
  authzbench run --target opa/server --url http://svc:8181 --workload risk --rate 2000 --shard 1/2 --start-at 2026-11-23T18:00:00Z -o s1.json
  authzbench run --target opa/server --url http://svc:8181 --workload risk --rate 2000 --shard 2/2 --start-at 2026-11-23T18:00:00Z -o s2.json
  # ... then one result, their histograms added
  authzbench merge s1.json s2.json -o merged.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			f, err := lookupFormat(format, false)
			if err != nil {
				return usageError(err)
			}
			if out == "" {
				return usageError(errors.New("merge needs -o FILE, where the merged result is written"))
			}
			plan := outputs.Plan{Force: force}
			plan.Output("-o", out)
			plan.Input("a RESULT.json argument", args...)
			if err := checkOutputs(&plan); err != nil {
				return err
			}
			doc, apart, err := mergeFiles(args)
			if err != nil {
				return usageError(err)
			}
			for _, w := range apart {
				fmt.Fprintf(stderr, "authzbench: warning: %s\n", w)
			}
			if err := saveResult(out, "merged", doc, force, stderr); err != nil {
				return &exitError{exitFailed, err}
			}
			if err := f.Render(stdout, doc); err != nil {
				return &exitError{exitFailed, err}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "merged result file (required)")
	cmd.Flags().StringVar(&format, "format", "table", "output: the merged result as a table, or another format")
	addForceFlag(cmd.Flags(), &force)
	return cmd
}

// mergeFiles reads every file, then merges them as shards or as repetitions, as they are, and
// says which merged repetitions' shards measured apart (result.ShardsApart).
func mergeFiles(paths []string) (*result.Document, []string, error) {
	var srcs []result.Source
	var errs []error
	var sharded, whole []string
	for _, p := range paths {
		doc, err := result.Read(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		srcs = append(srcs, result.Source{Name: p, Doc: doc})
		if doc.Shard != nil {
			sharded = append(sharded, p)
		} else {
			whole = append(whole, p)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	var doc *result.Document
	var apart []string
	var err error
	switch {
	case len(sharded) > 0 && len(whole) > 0:
		return nil, nil, fmt.Errorf("merge: %s %s (--shard), %s %s: they do not merge as one measurement",
			join(sharded), plural(len(sharded), "is a shard", "are shards"), join(whole), plural(len(whole), "a whole run", "whole runs"))
	case len(sharded) > 0:
		if doc, err = result.MergeShards(srcs...); err == nil {
			apart = result.ShardsApart(srcs...)
		}
	default:
		doc, err = result.MergeSources(srcs...)
		var twice *result.CountedTwiceError
		if err != nil && !errors.As(err, &twice) { // which names its files
			err = fmt.Errorf("%w (%s)", err, result.FileList(paths))
		}
	}
	if err != nil {
		return nil, nil, err
	}
	doc.Command = append([]string{"authzbench", "merge"}, paths...)
	// The fits are of the merged runs: recomputed, as a run computes them when it ends.
	fit.Refit(doc)
	return doc, apart, nil
}

func join(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	out := ""
	for i, n := range names {
		switch {
		case i == 0:
			out = n
		case i == len(names)-1:
			out += " and " + n
		default:
			out += ", " + n
		}
	}
	return out
}

// numbered names the files as the merge's messages number them: document 1 is the first.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
