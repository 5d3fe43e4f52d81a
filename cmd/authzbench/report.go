package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/report"
	"github.com/authzbench/authzbench/internal/result"
)

func newReportCommand(stdout io.Writer) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "report RESULT.json [RESULT.json ...]",
		Short: "Render kept result files (--format " + report.NameList() + ")",
		Long: `report renders result files. Several are rendered one after another, each under a line
naming its file: every result keeps its own machine, versions and comparisons, so runs from
different files are never put in one table or divided by each other. With --format json,
several files give a JSON array of their documents.`,
		Example: `  authzbench report results/authzbench-20261122-120000.json
  authzbench report results/before.json results/after.json
  authzbench report --format markdown results/latest.json >> docs/results.md`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			f, err := lookupFormat(format)
			if err != nil {
				return usageError(err)
			}
			// Every file is read before anything is printed, and every unreadable one named.
			docs := make([]*result.Document, len(args))
			var errs []error
			for i, path := range args {
				doc, err := result.Read(path)
				if err != nil {
					errs = append(errs, err)
				}
				docs[i] = doc
			}
			if err := errors.Join(errs...); err != nil {
				return usageError(err)
			}
			if err := report.RenderFiles(stdout, f, args, docs); err != nil {
				return &exitError{exitFailed, err}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", report.NameList())
	return cmd
}
