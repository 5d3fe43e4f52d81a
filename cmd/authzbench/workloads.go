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
	cmd.AddCommand(show)
	return cmd
}
