package kinds

import (
	"fmt"
	"strings"

	"github.com/authzbench/authzbench/internal/workload"
)

// Operation is what each request of a run asks the engine: a check (one decision, the default)
// or a list query, whose answer is a whole set judged against the reference model's
// (verify.Set). It is a value of its own, as a write is: what it sends, what it expects and how
// it is judged are its own, and its histogram and rows are the run's, named by it.
type Operation uint8

const (
	// Check asks one decision: may this subject do this to this object.
	Check Operation = iota
	// ListObjects asks every object of a type the subject has the permission on: OpenFGA's
	// ListObjects, SpiceDB's LookupResources.
	ListObjects
	// ListUsers asks every subject of a type with the permission on an object: OpenFGA's
	// ListUsers, SpiceDB's LookupSubjects.
	ListUsers
	// BatchCheck asks BatchSize checks in one request, the input's and those after it, judged
	// whole: OpenFGA's BatchCheck, SpiceDB's CheckBulkPermissions.
	BatchCheck
	numOperations
)

// BatchSize is how many checks a batch-check request asks: OpenFGA's default cap on one
// BatchCheck (--max-checks-per-batch-check).
const BatchSize = 50

var operationNames = [numOperations]string{"check", "list-objects", "list-users", "batch-check"}

// IsList reports whether o is a list query, judged against the reference model's set
// (workload.ListQueriesOf).
func (o Operation) IsList() bool { return o == ListObjects || o == ListUsers }

// Lists is what a list operation lists, for its queries (workload.ListQueriesOf).
func (o Operation) Lists() workload.ListOf {
	if o == ListUsers {
		return workload.Subjects
	}
	return workload.Objects
}

func (o Operation) String() string {
	if o < numOperations {
		return operationNames[o]
	}
	return fmt.Sprintf("operation(%d)", uint8(o))
}

// OperationNames are the operations' names, for help and errors.
func OperationNames() []string { return operationNames[:] }

// ParseOperation reads an operation's name; the error lists the known ones.
func ParseOperation(s string) (Operation, error) {
	for i, n := range operationNames {
		if s == n {
			return Operation(i), nil
		}
	}
	return Check, fmt.Errorf("unknown operation %q; known: %s", s, strings.Join(operationNames[:], ", "))
}

// Batches lays out one item per input so that the batch of input i is out[i:i+size]: the input's
// item and the size-1 after it, wrapping around; size is BatchSize, or every input when fewer.
func Batches[T any](items []T) (out []T, size int) {
	size = min(BatchSize, len(items))
	out = append(append(make([]T, 0, len(items)+size-1), items...), items[:max(0, size-1)]...)
	return out, size
}

// Lister is a target that answers operations beside the check: with Common.Operation set, its
// Start prepares that operation's requests and its workers ask it. Lists says, before anything
// starts, whether it can (nil) or why not.
type Lister interface {
	Lists(op Operation) error
}

// TakesOperation says whether targets of the kind called name, with settings c, can answer op:
// nil when they can, else why not; asked before anything starts, so that a run is refused at
// once where they cannot. Every target answers a check.
func TakesOperation(name string, c Config, op Operation) error {
	if op == Check {
		return nil
	}
	k, err := LookupAny(name)
	if err != nil {
		return err
	}
	if c == nil {
		c = k.NewConfig()
	}
	if l, ok := k.New(Common{}, c).(Lister); ok {
		return l.Lists(op)
	}
	return fmt.Errorf("target %s answers checks only", name)
}
