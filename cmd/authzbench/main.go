// Command authzbench measures how fast authorization engines decide, deployed the way people
// deploy them, with every decision checked. See `authzbench --help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/sut"

	// The engines authzbench measures, with their target kinds: each registers itself
	// (engine.Register, kinds.Register); a new engine is one more line in package all.
	_ "github.com/authzbench/authzbench/internal/engine/all"
)

// Exit statuses, so scripts can tell a bad invocation from a run that found errors.
const (
	exitOK          = 0
	exitFailed      = 1   // the run failed, served nothing, or responses were not served decisions
	exitUsage       = 2   // bad flags, scenario, policy or inputs: nothing was measured
	exitInterrupted = 130 // stopped by Ctrl-C; the partial result was written
)

// exitStatusHelp ends the help of every command that runs load, so scripts know what to expect.
const exitStatusHelp = `

Exit status: 0 ok; 1 ran and saw errors (responses that were not served decisions, a run or
repetition that served none, a server that died, a result not written where asked);
2 bad input, nothing ran; 130 interrupted.`

// exitError carries an exit status through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageError(err error) error { return &exitError{exitUsage, err} }

// exitFor says how a command that drove load ended, one meaning per status whatever the
// command: interrupted (130); a server that rejected what it was given, or a run that measured
// nothing, is bad input (2); a run that failed or a result that could not be written where
// asked is 1.
func exitFor(ctx context.Context, runErr, writeErr error, nothingRan bool) error {
	var rejected *sut.StartError
	switch {
	case ctx.Err() != nil:
		return &exitError{exitInterrupted, context.Cause(ctx)}
	case errors.As(runErr, &rejected), runErr != nil && nothingRan:
		return usageError(runErr)
	case runErr != nil:
		return &exitError{exitFailed, runErr}
	case writeErr != nil:
		return &exitError{exitFailed, writeErr}
	}
	return nil
}

func main() {
	// "authzbench opa ..." is OPA itself; dispatch before building our own command tree so a
	// per-decision `opa eval` process pays as little start-up as the real opa binary.
	engine.DispatchIfAsked()
	sut.DispatchPinIfAsked()
	sut.DispatchTrivialIfAsked()
	// Thousands of connections need thousands of descriptors; a failure leaves the limit as it
	// was, and a load that needs more is refused before it starts (load.Spec.CheckOpenFiles).
	_ = sut.RaiseOpenFiles()
	os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr))
}

func execute(args []string, stdout, stderr io.Writer) int {
	root := newRootCommand(stdout, stderr)
	root.SetArgs(args)
	return exitStatus(root.Execute(), stderr)
}

// exitStatus says err on stderr and returns the status the process exits with.
func exitStatus(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, errHelpShown) {
		return exitOK
	}
	fmt.Fprintln(stderr, "authzbench:", err)
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return exitUsage // cobra's own errors: unknown flag or command
}

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "authzbench",
		Short: "Measure how fast authorization engines decide, with every decision checked",
		Long: `authzbench measures authorization engines (OPA, Cedar, OpenFGA and SpiceDB) the way they are
deployed: in-process, one CLI process per decision, or as a server, on the same requests. It starts what it measures, checks every
response against the decision it must produce (a 400, an undefined result or a wrong allow/deny
is an error, never a success), records latencies in HDR histograms up to p99.99, and writes one
JSON result file that every report can be rebuilt from.` + exitStatusHelp,
		Example: `  # The quickstart: 4 policies through OPA's 3 modes, Cedar's 2, OpenFGA and SpiceDB in process, about a minute
  authzbench run

  # One workload, one mode, your load
  authzbench run --target opa/server --workload rbac --workers 8 --duration 10s

  # Your own policy, data and inputs
  authzbench run --target opa/inproc --policy ./policy --data data.json --inputs inputs.jsonl

  # Re-render a kept result
  authzbench report results/authzbench-20261122-120000.json --format markdown`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// Every command refuses a count given as 0 or less, and says what a flag wants when its value
	// does not parse, in the same words.
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return checkCounts(cmd) }
	root.SetFlagErrorFunc(flagValueError)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newRunCommand(stdout, stderr), newCalibrateCommand(stdout, stderr), newCapacityCommand(stdout, stderr), newReportCommand(stdout), newWorkloadsCommand(stdout, stderr),
		newVersionCommand(stdout))
	root.AddCommand(newEngineCommands(stderr)...)
	root.AddCommand(newCompareCommand(stdout))
	root.AddCommand(newABCommand(stdout, stderr))
	root.AddCommand(newProfileCommand(stdout, stderr))
	root.AddCommand(newMergeCommand(stdout, stderr))
	root.AddCommand(newHistoryCommand(stdout, stderr))
	root.AddCommand(newServeCommand(stdout, stderr))
	installHelp(root)
	return root
}

// newEngineCommands lists the programs engines run inside authzbench ("authzbench opa ...",
// "authzbench cedar-server ...") in the help. main has already handed a process started as one
// to it (engine.DispatchIfAsked); this runs it the same way for a caller that reaches cobra (a
// test's runMain).
func newEngineCommands(stderr io.Writer) []*cobra.Command {
	var out []*cobra.Command
	for _, c := range engine.Commands() {
		out = append(out, &cobra.Command{
			Use:                c.Use,
			Short:              c.Short,
			Long:               c.Long,
			Example:            c.Example,
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, args []string) error {
				if code := c.Main(args, stderr); code != 0 {
					return &exitError{code, fmt.Errorf("%s exited with status %d", c.Arg, code)}
				}
				return nil
			},
		})
	}
	return out
}
