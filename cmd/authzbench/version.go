package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/open-policy-agent/opa/v1/version"
	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/buildinfo"
)

func newVersionCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the authzbench version, commit, Go and OPA versions",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v, commit := buildinfo.Get()
			fmt.Fprintf(stdout, "authzbench %s\ncommit     %s\ngo         %s %s/%s\nopa        %s\n",
				v, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH, version.Version)
			return nil
		},
	}
}
