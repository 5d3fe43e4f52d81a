package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/authzbench/authzbench/internal/profile"
	"github.com/authzbench/authzbench/internal/workload"
)

// Profiler is implemented by an engine that shows where a policy in its language spends its
// evaluation time, line by line (OPA's profiler): what `authzbench profile` prints.
type Profiler interface {
	// Profile evaluates every input of w, written in the engine's language, under the
	// engine's profiler, and checks each decision against the one expected.
	Profile(ctx context.Context, w *workload.Workload, o profile.Options) (*profile.Report, error)
}

// ProfilerOf is the registered engine that profiles w: the first, by name, that is a Profiler
// and has w written in its language. The error, when none has, names the languages that can be
// profiled.
func ProfilerOf(w *workload.Workload) (Profiler, error) {
	var languages []string
	for _, e := range All() {
		p, ok := e.(Profiler)
		if !ok {
			continue
		}
		if e.Written(w) {
			return p, nil
		}
		languages = append(languages, Language(e))
	}
	if len(languages) == 0 {
		return nil, fmt.Errorf("workload %s: no engine linked into authzbench profiles a policy", w.Name)
	}
	return nil, fmt.Errorf("workload %s has no %s version to profile", w.Name, strings.Join(languages, " or "))
}

// Redecider is implemented by an engine that decides, in process and before any load, every
// event of a decision log replayed against a policy in its language (OPA, of the logs OPA
// writes): what a replay's impact (internal/replay) compares with the logged decisions.
type Redecider interface {
	// Redecide is the decision of w's policy for each of w's inputs, in the words a flip
	// records: "allow" or "deny"; for no decision, w.UndefinedAs's word, else "undefined";
	// what else the policy gave otherwise ("error: ...", "not a boolean: ..."). p is the run's
	// store of prepared policies, so the policy is compiled once. Its errors name the
	// workload, or the input and its decision id.
	Redecide(ctx context.Context, p *Prepared, w *workload.Workload) ([]string, error)
}

// RedeciderOf is the registered engine that decides w's replayed events: the first, by name,
// that is a Redecider and has w written in its language; nil when none has (a log replayed
// without a policy, whose runs are judged against the logged decisions alone).
func RedeciderOf(w *workload.Workload) Redecider {
	for _, e := range All() {
		if r, ok := e.(Redecider); ok && e.Written(w) {
			return r
		}
	}
	return nil
}
