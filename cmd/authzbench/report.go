package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/result"
)

func newReportCommand(stdout io.Writer) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "report RESULT.json",
		Short: "Render a kept result file as a table, Markdown or JSON",
		Example: `  authzbench report results/authzbench-20261122-120000.json
  authzbench report --format markdown results/latest.json >> docs/results.md`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return usageError(err)
			}
			doc, err := result.Read(args[0])
			if err != nil {
				return usageError(err)
			}
			if err := render(stdout, doc, format); err != nil {
				return &exitError{exitFailed, err}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "table, markdown or json")
	return cmd
}
