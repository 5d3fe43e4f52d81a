package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/outputs"
	"github.com/authzbench/authzbench/internal/report"
	"github.com/authzbench/authzbench/internal/result"
)

func newReportCommand(stdout io.Writer) *cobra.Command {
	var format, prometheus string
	var force, wide bool
	cmd := &cobra.Command{
		Use:   "report RESULT.json [RESULT.json ...]",
		Short: "Render kept result files (--format " + report.NameList() + ")",
		Long: `report renders result files. Several are rendered one after another, each under a line
naming its file: every result keeps its own machine, versions and comparisons, so runs from
different files are never put in one table or divided by each other. With --format json,
several files give a JSON array of their documents, and --format csv one table whose first
column names each row's file.

Formats: table (a terminal: the findings first, then the columns a reader needs first,
fitting 120 columns, then the notes wrapped to that width; --wide prints every column),
markdown, csv (one row per run, plain units), json (the document), gobench (Go benchmark
lines, one per repetition, for benchstat), html (one self-contained page with charts, no
script, nothing fetched when viewed).
--prometheus FILE also writes the result's summary as OpenMetrics text (one result file).` + outputRulesHelp,
		Example: `  # A kept result, as the run printed it; two, each under its file's name
  authzbench report results/authzbench-20261122-120000.json
  authzbench report results/before.json results/after.json
  # Markdown for a page; one HTML page with charts
  authzbench report --format markdown results/latest.json >> docs/results.md
  authzbench report --format html results/latest.json > report.html
  # Go benchmark lines, for benchstat before.txt after.txt
  authzbench report --format gobench results/before.json > before.txt
  # The summary as OpenMetrics, for a Pushgateway
  authzbench report --prometheus latest.prom results/latest.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := lookupFormat(format, wide)
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
			if prometheus != "" {
				if len(docs) != 1 {
					return usageError(fmt.Errorf("--prometheus takes one result file, %d given: the same series from two files would collide", len(docs)))
				}
				plan := outputs.Plan{Force: force}
				plan.Output("--prometheus", prometheus)
				plan.Input("a RESULT.json argument", args...)
				if err := checkOutputs(&plan); err != nil {
					return err
				}
				if err := writeFileWith(prometheus, "--prometheus", docs[0], force, report.Prometheus); err != nil {
					return &exitError{exitFailed, err}
				}
			}
			if err := report.RenderFiles(stdout, f, args, docs); err != nil {
				return &exitError{exitFailed, err}
			}
			for i, doc := range docs {
				if line := report.NoRuns(doc); line != "" && f.Data {
					fmt.Fprintf(cmd.ErrOrStderr(), "authzbench: %s: %s\n", args[i], line)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", report.NameList())
	cmd.Flags().BoolVar(&wide, "wide", false, wideHelp)
	cmd.Flags().StringVar(&prometheus, "prometheus", "", "also write the result's summary to this file as OpenMetrics text (for a Pushgateway)")
	addForceFlag(cmd.Flags(), &force)
	return cmd
}

// writeFileWith renders doc into the file at path, named by flag in any error: rendered in
// full first, so a render that fails writes nothing, then written whole or not at all.
func writeFileWith(path, flag string, doc *result.Document, replace bool, render func(io.Writer, *result.Document) error) error {
	var b bytes.Buffer
	if err := render(&b, doc); err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	if err := outputs.Write(path, replace, func(w io.Writer) error { _, err := w.Write(b.Bytes()); return err }); err != nil {
		return fmt.Errorf("write %s %s: %w", flag, path, err)
	}
	return nil
}

// writeReports writes the HTML report and the OpenMetrics summary a run was asked for, saying
// where; every failure is logged on its own line, none stops the others.
func writeReports(htmlPath, promPath string, doc *result.Document, replace bool, stderr io.Writer, log *writeLog) {
	for _, w := range []struct {
		flag, path string
		render     func(io.Writer, *result.Document) error
	}{{"--html", htmlPath, report.HTML}, {"--prometheus", promPath, report.Prometheus}} {
		if w.path == "" {
			continue
		}
		if err := writeFileWith(w.path, w.flag, doc, replace, w.render); err != nil {
			log.add(w.flag, w.path, err)
			continue
		}
		fmt.Fprintf(stderr, "authzbench: %s written to %s\n", strings.TrimPrefix(w.flag, "--"), w.path)
	}
}
