package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/workload"
)

func newWorkloadsCommand(stdout io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workloads",
		Short: "List the built-in workloads, or show one's policy and inputs",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tQUERY\tINPUTS\tALLOW\tDENY\tDESCRIPTION")
			for _, name := range workload.Names() {
				w, err := workload.Builtin(name)
				if err != nil {
					return err
				}
				allow, deny, _ := w.Counts()
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", w.Name, w.Query, len(w.Inputs), allow, deny, w.Description)
			}
			return tw.Flush()
		},
	}
	show := &cobra.Command{
		Use:   "show NAME",
		Short: "Print a built-in workload's policy, its data size and its first inputs",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			w, err := workload.Builtin(args[0])
			if err != nil {
				return usageError(err)
			}
			fmt.Fprintf(stdout, "# %s: %s\n# query: %s\n# data: %d bytes\n", w.Name, w.Description, w.Query, len(w.Data))
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
			return nil
		},
	}
	export := &cobra.Command{
		Use:   "export NAME DIR",
		Short: "Write a built-in workload's policy, data and inputs to DIR, for other tools",
		Long: `export writes the files authzbench loads for a built-in workload: the policy (*.rego),
data.json, inputs.jsonl (one {"input": ..., "expect": ...} per line, the format --inputs reads),
input-1.json (the first input alone, for opa eval/bench) and body-1.json (the first request body
POSTed to OPA's REST API, for wrk or curl).`,
		Example: `  authzbench workloads export rbac /tmp/rbac
  authzbench opa bench --data /tmp/rbac/rbac.rego --data /tmp/rbac/data.json --input /tmp/rbac/input-1.json data.authzbench.rbac.allow`,
		Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			w, err := workload.Builtin(args[0])
			if err != nil {
				return usageError(err)
			}
			if err := workload.Export(w, args[1]); err != nil {
				return &exitError{exitFailed, err}
			}
			fmt.Fprintf(stdout, "wrote %s to %s (query %s)\n", w.Name, args[1], w.Query)
			return nil
		},
	}
	cmd.AddCommand(show, export)
	return cmd
}
