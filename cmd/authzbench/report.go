package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/result"
)

func newReportCommand(stdout io.Writer) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "report RESULT.json [RESULT.json ...]",
		Short: "Render kept result files as a table, Markdown or JSON",
		Long: `report renders result files. Several are rendered one after another, each under a line
naming its file: every result keeps its own machine, versions and comparisons, so runs from
different files are never put in one table or divided by each other. With --format json,
several files give a JSON array of their documents.`,
		Example: `  authzbench report results/authzbench-20261122-120000.json
  authzbench report results/before.json results/after.json
  authzbench report --format markdown results/latest.json >> docs/results.md`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
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
			if err := renderAll(stdout, args, docs, format); err != nil {
				return &exitError{exitFailed, err}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "table, markdown or json")
	return cmd
}

// renderAll renders one document as run renders it, or several one after another under their
// file names (a JSON array of them for json).
func renderAll(w io.Writer, paths []string, docs []*result.Document, format string) error {
	if len(docs) == 1 {
		return render(w, docs[0], format)
	}
	if format == "json" {
		parts := make([]json.RawMessage, len(docs))
		for i, doc := range docs {
			var b bytes.Buffer
			if err := render(&b, doc, format); err != nil {
				return err
			}
			parts[i] = b.Bytes()
		}
		out, err := json.MarshalIndent(parts, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", out)
		return err
	}
	for i, doc := range docs {
		heading := "== %s ==\n"
		if format == "markdown" {
			heading = "### %s\n\n"
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, heading, paths[i])
		if err := render(w, doc, format); err != nil {
			return err
		}
	}
	return nil
}
