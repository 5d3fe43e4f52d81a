// Command authzbench-opa is OPA's command line and nothing else: the opa/cli target runs it
// once per decision where it lies beside authzbench.
package main

import (
	"os"

	"github.com/authzbench/authzbench/internal/engine/opa/opacli"
)

func main() { os.Exit(opacli.Main(os.Args[1:])) }
