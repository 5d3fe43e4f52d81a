package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/bench"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// addOperationFlag declares --operation: what each request of the run asks.
func addOperationFlag(fl *pflag.FlagSet, op *string) {
	fl.StringVar(op, "operation", "check", "what each request asks, one of "+strings.Join(kinds.OperationNames(), ", ")+
		": check, one decision per input; list-objects, every object of the input's resource type its subject has the permission on "+
		"(OpenFGA's ListObjects, SpiceDB's LookupResources); list-users, every user with the input's permission on its resource "+
		"(OpenFGA's ListUsers, SpiceDB's LookupSubjects); batch-check, "+strconv.Itoa(kinds.BatchSize)+" checks a request, the input's and those after it "+
		"(OpenFGA's BatchCheck, SpiceDB's CheckBulkPermissions). Each answer is judged whole: a list against the reference model's set, "+
		"a member missing or extra a wrong answer; a batch against each check's expectation, one decision otherwise a wrong answer; "+
		"one the engine cut short (its deadline, its cap on results, a stream ending early, a check left without a decision) is "+
		"counted as truncated, never ok. On openfga/inproc, openfga/server and spicedb/server; lists over rbac and rbac-data-N")
}

// readOperation reads --operation against the run, before any load: an unknown operation, a
// target that cannot answer it, a workload without list queries, or a run whose world changes
// is refused here, naming the flag.
func readOperation(name string, plan *bench.Plan, changes *bench.Changes) (kinds.Operation, error) {
	op, err := kinds.ParseOperation(name)
	if err != nil {
		return kinds.Check, fmt.Errorf("--operation: %w", err)
	}
	if op == kinds.Check {
		return op, nil
	}
	if changes != nil {
		return kinds.Check, fmt.Errorf("--operation %s with --changes: answers under changes are judged as decisions; a list under changes is to come", op)
	}
	for _, t := range plan.Scenario.Targets {
		if err := kinds.TakesOperation(t.Name, t.Settings(), op); err != nil {
			return kinds.Check, fmt.Errorf("--operation %s: %w", op, err)
		}
	}
	for _, w := range plan.Workloads {
		if !op.IsList() {
			break
		}
		if _, err := workload.ListQueriesOf(w, op.Lists()); err != nil {
			return kinds.Check, fmt.Errorf("--operation %s: %w", op, err)
		}
	}
	return op, nil
}
