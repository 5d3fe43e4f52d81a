package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/report"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/userwords"
)

func newReportCommand(stdout io.Writer) *cobra.Command {
	var format, prometheus string
	cmd := &cobra.Command{
		Use:   "report RESULT.json [RESULT.json ...]",
		Short: "Render kept result files (--format " + report.NameList() + ")",
		Long: `report renders result files. Several are rendered one after another, each under a line
naming its file: every result keeps its own machine, versions and comparisons, so runs from
different files are never put in one table or divided by each other. With --format json,
several files give a JSON array of their documents, and --format csv one table whose first
column names each row's file.

Formats: table (a terminal), markdown, csv (one row per run, plain units), json (the
document), gobench (Go benchmark lines, one per repetition, for benchstat), html (one
self-contained page with charts, no script, nothing fetched when viewed).
--prometheus FILE also writes the result's summary as OpenMetrics text (one result file).`,
		Example: `  authzbench report results/authzbench-20261122-120000.json
  authzbench report results/before.json results/after.json
  authzbench report --format markdown results/latest.json >> docs/results.md
  authzbench report --format html results/latest.json > report.html
  authzbench report --format gobench results/before.json > before.txt  # then: benchstat before.txt after.txt
  authzbench report --prometheus latest.prom results/latest.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
			if prometheus != "" {
				if len(docs) != 1 {
					return usageError(fmt.Errorf("--prometheus takes one result file, %d given: the same series from two files would collide", len(docs)))
				}
				if err := writeFileWith(prometheus, "--prometheus", docs[0], report.Prometheus); err != nil {
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
	cmd.Flags().StringVar(&prometheus, "prometheus", "", "also write the result's summary to this file as OpenMetrics text (for a Pushgateway)")
	return cmd
}

// writeFileWith renders doc into the file at path, named by flag in any error: rendered in
// full first, so a render that fails leaves no half-written file.
func writeFileWith(path, flag string, doc *result.Document, render func(io.Writer, *result.Document) error) error {
	var b bytes.Buffer
	if err := render(&b, doc); err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return nil
}

// checkReportPath refuses, before any load, a --html or --prometheus path that could not be
// written: a directory, or one in a directory that does not exist.
func checkReportPath(flag, path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s %s is a directory: name a file", flag, path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s %s: no directory %s", flag, path, dir)
		}
		return fmt.Errorf("%s %s: %w", flag, path, userwords.Unreadable(dir, err))
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s %s: %s is not a directory", flag, path, dir)
	}
	return nil
}

// writeReports writes the HTML report and the OpenMetrics summary a run was asked for, saying
// where; every failure is returned, none stops the others.
func writeReports(htmlPath, promPath string, doc *result.Document, stderr io.Writer) error {
	var errs []error
	for _, w := range []struct {
		flag, path string
		render     func(io.Writer, *result.Document) error
	}{{"--html", htmlPath, report.HTML}, {"--prometheus", promPath, report.Prometheus}} {
		if w.path == "" {
			continue
		}
		if err := writeFileWith(w.path, w.flag, doc, w.render); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(stderr, "authzbench: %s written to %s\n", strings.TrimPrefix(w.flag, "--"), w.path)
	}
	return errors.Join(errs...)
}
