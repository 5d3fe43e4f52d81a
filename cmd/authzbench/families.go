package main

import (
	"fmt"
	"io"

	"github.com/authzbench/authzbench/internal/workload"
)

// printFamilies lists the workload families generated from their name (rules-path-1000), which
// the table of built-ins cannot list: any size in their range is a workload.
func printFamilies(w io.Writer) {
	fmt.Fprintln(w, "\nGENERATED on demand from the name, for scaling series (docs/scaling.md):")
	for _, p := range workload.FamilyPatterns() {
		fmt.Fprintln(w, "  "+p)
	}
}
