package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/bench"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/outputs"
	"github.com/authzbench/authzbench/internal/workload"
)

func newWorkloadsCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workloads",
		Short: "List the built-in workloads, or show one's policy and inputs",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			var ws []*workload.Workload
			for _, name := range workload.Names() {
				w, err := workload.Builtin(name)
				if err != nil {
					return err
				}
				ws = append(ws, w)
			}
			if err := listWorkloads(stdout, ws, engine.All()); err != nil {
				return err
			}
			printFamilies(stdout)
			return nil
		},
	}
	show := &cobra.Command{
		Use:   "show NAME",
		Short: "Print a built-in workload's policies (Rego, and each engine's version), its data size and its first inputs",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			w, err := workload.Builtin(args[0])
			if err != nil {
				return usageError(err)
			}
			fmt.Fprintf(stdout, "# %s: %s\n# query: %s\n# data: %d bytes\n", w.Name, w.Description, w.Query, len(w.Data))
			// What an engine's version is handed ready-made, because the engine cannot compute it.
			for _, e := range engine.All() {
				if h, ok := e.(engine.Handed); ok && e.Written(w) {
					if d := h.Handed(w); d != "" {
						fmt.Fprintf(stdout, "# in %s: %s\n", engine.Language(e), d)
					}
				}
			}
			for _, p := range w.Policies {
				fmt.Fprintf(stdout, "\n# --- %s ---\n%s", p.Name, p.Content)
			}
			fmt.Fprintln(stdout, "\n# --- first inputs (expected decision, deciding rule) ---")
			for i, in := range w.Inputs {
				if i == 5 {
					break
				}
				fmt.Fprintf(stdout, "# %s (%s)\n%s\n", in.Expect, in.Reason, in.JSON)
			}
			// The engines' versions that are files of their own.
			for _, e := range engine.All() {
				if x, ok := e.(engine.Exported); ok {
					x.Show(w, stdout)
				}
			}
			return nil
		},
	}
	var force bool
	export := &cobra.Command{
		Use:   "export NAME DIR",
		Short: "Write a built-in workload's policy, data and inputs to DIR, for other tools",
		Long: `export writes the files authzbench loads for a built-in workload: the policy (*.rego),
data.json, inputs.jsonl (one {"input": ..., "expect": ...} per line, the format --inputs reads),
input-1.json (the first input alone, for opa eval/bench) and body-1.json (the first request body
POSTed to OPA's REST API, for wrk or curl). A workload with a Cedar version also gets its
Cedar policies (*.cedar), schema (*.cedarschema), entities.json and requests.jsonl (one request
per line with its "expect", the format --cedar-requests reads); one with a Casbin version its
model (*.conf), policy (*.csv) and casbin-requests.csv (or .jsonl where a request value is no
string), which --policy and --inputs read back. A file already in DIR is never
replaced without --force, and every file is written whole or not at all.`,
		Example: `  # rbac's files, then run from them as your own, or with OPA's own bench
  authzbench workloads export rbac /tmp/rbac
  authzbench run --target cedar/inproc --cedar-policies /tmp/rbac/rbac.cedar --cedar-policies /tmp/rbac/rbac-roles.cedar \
    --schema /tmp/rbac/rbac.cedarschema --entities /tmp/rbac/entities.json --cedar-requests /tmp/rbac/requests.jsonl
  authzbench opa bench --data /tmp/rbac/rbac.rego --data /tmp/rbac/data.json --input /tmp/rbac/input-1.json data.authzbench.rbac.allow`,
		Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			w, err := workload.Builtin(args[0])
			if err != nil {
				return usageError(err)
			}
			if err := exportWorkload(w, args[1], force); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %s to %s (query %s)\n", w.Name, args[1], w.Query)
			return nil
		},
	}
	export.Flags().BoolVar(&force, "force", false, "overwrite files already in DIR")
	cmd.AddCommand(show, export, newVerifyCommand(stdout, stderr))
	return cmd
}

func newVerifyCommand(stdout, stderr io.Writer) *cobra.Command {
	var targets []string
	var first, parallel int
	var user runFlags
	cmd := &cobra.Command{
		Use:   "verify [NAME ...]",
		Short: "Check that every engine in every mode gives every input its expected decision",
		Long: `verify runs every input of the named built-in workloads (all of them by default), or of your
own files (--policy, --data, --inputs and the Cedar flags, as run takes them), through every
engine and mode authzbench can start: ` + strings.Join(kinds.EngineModes(), ", ") + `.

Each engine's files go to its targets: Rego to OPA's, the Cedar version to Cedar's, an OpenFGA
store (or a model, tuples and checks) to OpenFGA's, a SpiceDB validation file to SpiceDB's, a
Casbin model, policy and requests to Casbin's; a workload without a version for an engine is
shown as skipped. An input without "expect" takes the decision of the
first target that decided it, and every other target must give the same. It prints one line per
workload and target and fails, naming the first input that got another decision (or an error),
with its file and line for your files, and what the engine was given. Timing is not measured;
opa/cli starts one process per decision, so it takes the longest.` + exitStatusHelp,
		Example: `  # Every built-in workload through every engine and mode
  authzbench workloads verify
  # Two workloads, on Cedar's targets only; the first 50 inputs of each workload
  authzbench workloads verify rbac risk --target cedar/inproc,cedar/server
  authzbench workloads verify --first 50
  # Your own files: Rego in v0 syntax; an OpenFGA store
  authzbench workloads verify --policy authz.rego --data data.json --inputs inputs.jsonl --v0-compatible
  authzbench workloads verify --policy store.fga.yaml`,
		RunE: func(_ *cobra.Command, args []string) error {
			spec := user.userSpec()
			userFiles := spec.HasRego() || spec.HasCedar()
			if err := checkPolicyOptions(&user, userFiles); err != nil {
				return usageError(err)
			}
			names := args
			if len(names) == 0 && !userFiles {
				names = workload.Names()
			}
			var ws []*workload.Workload
			for _, n := range names {
				w, err := workload.Builtin(n)
				if err != nil {
					return usageError(err)
				}
				ws = append(ws, w)
			}
			for _, t := range targets {
				if !slices.Contains(kinds.EngineModes(), t) {
					return usageError(fmt.Errorf("--target %q: verify runs %s", t, strings.Join(kinds.EngineModes(), ", ")))
				}
			}
			if first < 0 || parallel < 0 {
				return usageError(errors.New("--first and --parallel must not be negative"))
			}
			tmp, err := os.MkdirTemp("", "authzbench-verify-")
			if err != nil {
				return &exitError{exitFailed, err}
			}
			defer os.RemoveAll(tmp)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			defer onInterrupt(cancel, stderr)()
			// What the engines prepare from each workload, once for every target verified.
			prepared := engine.NewPrepared()
			if userFiles {
				w, err := workload.FromFiles(spec)
				if err != nil {
					return usageError(flagNamed(err))
				}
				// A mistake in a policy is the user's to fix (exit 2), found before any engine
				// starts. Prepared once: the targets verified after take the same artefact.
				for _, e := range engine.All() {
					if !e.Written(w) {
						continue
					}
					if _, err := engine.Prepare(ctx, prepared, e, w); err != nil {
						return usageError(fmt.Errorf("workload %s: %w", w.Name, err))
					}
				}
				ws = append(ws, w)
			}

			err = verifyAndReport(ctx, stdout, stderr, ws, bench.EquivalenceOptions{
				Targets: targets, Inputs: first, Parallel: parallel,
				Common: kinds.Common{TempDir: tmp, Prepared: prepared},
			})
			if err != nil && ctx.Err() != nil {
				return &exitError{exitInterrupted, context.Cause(ctx)}
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&targets, "target", nil, "targets to check (default: every engine mode, "+strings.Join(kinds.EngineModes(), ", ")+")")
	fl.IntVar(&first, "first", 0, "check only the first N inputs of each workload (0: all)")
	fl.IntVar(&parallel, "parallel", 0, "decisions in flight per target (default: the number of CPUs)")
	addUserFileFlags(fl, &user)
	markCounts(fl, "parallel")
	return cmd
}

// listWorkloads writes the table of workloads with one column per engine, in the registry's
// order, so an engine linked in adds its column: whether the workload has a version in the
// engine's language, whether that version does the same work as the Rego or is handed some of
// it ready-made, and why it has none where the workload says. The footnotes say what.
func listWorkloads(out io.Writer, ws []*workload.Workload, engines []engine.Engine) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	header := []string{"NAME", "QUERY", "INPUTS", "ALLOW", "DENY"}
	for _, e := range engines {
		header = append(header, strings.ToUpper(e.Name()))
	}
	fmt.Fprintln(tw, strings.Join(append(header, "DESCRIPTION"), "\t"))
	var notes []string
	note := func(text string) int {
		notes = append(notes, text)
		return len(notes)
	}
	for _, w := range ws {
		allow, deny, _ := w.Counts()
		row := []string{w.Name, w.Query, fmt.Sprint(len(w.Inputs)), fmt.Sprint(allow), fmt.Sprint(deny)}
		for _, e := range engines {
			lang := engine.Language(e)
			cell := "no"
			switch {
			case e.Written(w):
				cell = "same work"
				if h, ok := e.(engine.Handed); ok && h.Handed(w) != "" {
					cell = fmt.Sprintf("handed [%d]", note(fmt.Sprintf("%s in %s: %s", w.Name, lang, h.Handed(w))))
				}
			case engine.WhyNot(e, w) != "":
				cell = fmt.Sprintf("no [%d]", note(fmt.Sprintf("%s has no %s version: %s", w.Name, lang, engine.WhyNot(e, w))))
			}
			row = append(row, cell)
		}
		fmt.Fprintln(tw, strings.Join(append(row, w.Description), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(notes) > 0 {
		fmt.Fprintln(out, "\n\"handed\": what an engine's version is given ready-made because the engine cannot compute it; \"no\": why a workload has no version in an engine's language")
	}
	for i, n := range notes {
		fmt.Fprintf(out, "[%d] %s\n", i+1, n)
	}
	return nil
}

// verifyAndReport checks every workload on every target of o, printing a row per pair as each
// ends, and fails, naming every pair that disagrees on stderr with its first wrong input and
// what the engine was given, and the first pair in the error.
func verifyAndReport(ctx context.Context, stdout, stderr io.Writer, ws []*workload.Workload, o bench.EquivalenceOptions) error {
	// Rows are printed as each check ends, so widths are fixed rather than aligned.
	const row = "%-12s %-20s %7v %7v  %s\n"
	fmt.Fprintf(stdout, row, "WORKLOAD", "TARGET", "CHECKED", "AGREED", "RESULT")
	var failed []bench.Equivalence
	o.Progress = func(e bench.Equivalence) {
		result := "ok"
		switch {
		case e.Skipped != "":
			result = "skipped: " + e.Skipped
		case e.First != nil:
			result = fmt.Sprintf("DISAGREES (%d wrong; first: %s)", e.Checked-e.Agreed, where(e.First))
			failed = append(failed, e)
		}
		fmt.Fprintf(stdout, row, e.Workload, e.Target, e.Checked, e.Agreed, result)
	}
	if _, err := bench.VerifyWorkloads(ctx, ws, o); err != nil {
		return &exitError{exitFailed, err}
	}
	if len(failed) == 0 {
		return nil
	}
	for _, e := range failed {
		d := e.First
		expects := "expects " + d.Expect.String()
		if d.DecidedBy != "" {
			expects = "has no expect; " + d.DecidedBy + " decided " + d.Expect.String()
		}
		fmt.Fprintf(stderr, "workload %s, target %s: %s %s, got %s\n  given: %s\n",
			e.Workload, e.Target, where(d), expects, d.Got, d.Request)
	}
	f := failed[0]
	return &exitError{exitFailed, fmt.Errorf("%d workload and target pairs disagree; first: workload %s, target %s, %s",
		len(failed), f.Workload, f.Target, where(f.First))}
}

// where names an input as the user finds it: its file and line, or its number.
func where(d *bench.Disagreement) string {
	if d.Source != "" {
		return d.Source
	}
	return fmt.Sprintf("input %d", d.Input)
}

// exportWorkload writes w's files to dir, refusing, unless force, to overwrite any file there: the
// files are written to a temporary directory first, so which of them exist is known before any
// is touched.
func exportWorkload(w *workload.Workload, dir string, force bool) error {
	staging, err := os.MkdirTemp("", "authzbench-export-")
	if err != nil {
		return &exitError{exitFailed, err}
	}
	defer os.RemoveAll(staging)
	if err := workload.Export(w, staging); err != nil {
		return &exitError{exitFailed, err}
	}
	for _, e := range engine.All() {
		if x, ok := e.(engine.Exported); ok {
			if err := x.Export(w, staging); err != nil {
				return &exitError{exitFailed, err}
			}
		}
	}
	entries, err := os.ReadDir(staging)
	if err != nil {
		return &exitError{exitFailed, err}
	}
	var existing []string
	for _, e := range entries {
		if _, err := os.Lstat(filepath.Join(dir, e.Name())); err == nil {
			existing = append(existing, e.Name())
		}
	}
	if len(existing) > 0 && !force {
		return usageError(fmt.Errorf("%s already holds %s: --force to overwrite", dir, strings.Join(existing, ", ")))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageError(fmt.Errorf("export to %s: %w", dir, err))
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(staging, e.Name()))
		if err == nil {
			err = outputs.Write(filepath.Join(dir, e.Name()), force, func(w io.Writer) error { _, err := w.Write(b); return err })
		}
		if err != nil {
			return &exitError{exitFailed, fmt.Errorf("export %s: %w", w.Name, err)}
		}
	}
	return nil
}
