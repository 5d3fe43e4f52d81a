package main

import (
	"fmt"
	"io"
	"runtime"
	"sort"

	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/buildinfo"
	"github.com/authzbench/authzbench/internal/engine"
)

func newVersionCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the authzbench version, commit, Go and the linked engines' versions",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v, commit := buildinfo.Get()
			fmt.Fprintf(stdout, "authzbench %s\ncommit     %s\ngo         %s %s/%s\n",
				v, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			versions := engine.Versions()
			names := make([]string, 0, len(versions))
			for n := range versions {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				fmt.Fprintf(stdout, "%-10s %s\n", n, versions[n])
			}
			return nil
		},
	}
}
