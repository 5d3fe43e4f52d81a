package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// EquivalenceOptions configure VerifyWorkloads.
type EquivalenceOptions struct {
	Targets  []string     // default target.EngineModes(): every engine in every mode authzbench can start by itself
	Inputs   int          // check the first Inputs inputs of each workload; 0 for all
	Parallel int          // concurrent deciders per target; default the number of CPUs
	Common   kinds.Common // how targets are run; each takes its kind's default settings
	// Progress, if set, is called after each workload and target is checked.
	Progress func(Equivalence)
}

// Equivalence is what one target decided on one workload's inputs.
type Equivalence struct {
	Workload string
	Target   string // the mode: the kind's name, with its variant's when not the default settings
	Kind     string // the kind's name alone
	Checked  int
	Agreed   int
	// Skipped says why the target was not run (the workload has no version for its engine).
	Skipped string
	// First is the lowest-numbered input the target got wrong; nil when all agreed.
	First *Disagreement
}

// Disagreement is an input on which an engine did not give the expected decision.
type Disagreement struct {
	Input int // 1-based, among the workload's inputs
	// Source is the file and line of the input, for a workload from the user's files; empty
	// for a built-in.
	Source string
	Expect workload.Expect
	// DecidedBy names the target whose decision Expect is, for an input without an expected
	// decision of its own: the first target that decided it; empty when the input had one.
	DecidedBy string
	Got       string // "allow", "deny", or the error class (http_400, undefined ...)
	Request   []byte // what the engine was given: the input document, or the Cedar request
}

// VerifyWorkloads runs every input of every workload through every target and reports, per
// workload and target, how many inputs got their expected decision; an input without one must
// get the same decision from every target. A target that cannot start
// is an error; a decision that disagrees is not an error here but a row with First set.
func VerifyWorkloads(ctx context.Context, ws []*workload.Workload, o EquivalenceOptions) ([]Equivalence, error) {
	targets := o.Targets
	if len(targets) == 0 {
		targets = kinds.EngineModes()
	}
	parallel := o.Parallel
	if parallel <= 0 {
		parallel = runtime.NumCPU()
	}
	if o.Common.Prepared == nil {
		// Every mode of an engine checks the same compiled policy, compiled once.
		o.Common.Prepared = engine.NewPrepared()
	}
	var rows []Equivalence
	for _, w := range ws {
		// An input without an expected decision takes the first decision an engine gives it,
		// and every other engine and mode must give the same.
		decided := make([]reference, len(w.Inputs))
		for _, name := range targets {
			kind, err := kinds.LookupAny(name)
			if err != nil {
				return rows, err
			}
			// Each kind in its default settings and in each variant that is a mode of its own.
			for _, mode := range kind.ModesOf() {
				row, err := verifyOne(ctx, w, mode, parallel, o, decided)
				if err != nil {
					return rows, err
				}
				rows = append(rows, row)
				if o.Progress != nil {
					o.Progress(row)
				}
			}
		}
	}
	return rows, nil
}

// reference is the decision an input without an expected one got first, and from which target.
type reference struct {
	expect workload.Expect
	target string
}

func verifyOne(ctx context.Context, w *workload.Workload, mode kinds.Mode, parallel int, o EquivalenceOptions, decided []reference) (Equivalence, error) {
	name, kind := mode.Label, mode.Kind
	row := Equivalence{Workload: w.Name, Target: name, Kind: kind.Name}
	if lang, ok := engine.WrittenFor(kind.Engine, w); !ok {
		row.Skipped = "no " + lang + " version"
		if why := engine.WhyNotFor(kind.Engine, w); why != "" {
			row.Skipped += ": " + why
		}
		return row, nil
	}
	if reason := kind.Refuses(w); reason != "" {
		row.Skipped = reason
		return row, nil
	}
	common := o.Common
	common.Workers = parallel
	t, err := kinds.New(kind.Name, common, mode.Config)
	var notInstalled *kinds.NotInstalledError
	if errors.As(err, &notInstalled) && len(o.Targets) == 0 {
		// Every mode by default: one whose program is not installed here says so in its row,
		// and the others are still checked. A mode named with --target is refused instead.
		row.Skipped = "not installed: " + notInstalled.Missing + " (--target " + kind.Name + " says how to get it)"
		return row, nil
	}
	if err != nil {
		return row, err
	}
	t = kinds.WithUndefinedAs(t, w.UndefinedAs)
	defer t.Stop(context.Background())
	if err := t.Start(ctx, w); err != nil {
		return row, fmt.Errorf("workload %s, target %s: %w", w.Name, name, err)
	}
	n := len(w.Inputs)
	if o.Inputs > 0 && o.Inputs < n {
		n = o.Inputs
	}
	outcomes := make([]verify.Outcome, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(parallel, n) {
		d := t.Worker()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer kinds.CloseDecider(d)
			for i := range next {
				outcomes[i] = d.Decide(ctx, i)
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return row, err
	}
	for i, out := range outcomes {
		in := w.Inputs[i]
		row.Checked++
		expect, by := in.Expect, ""
		if expect == workload.Unverified {
			expect, by = decided[i].expect, decided[i].target
		}
		class := verify.Classify(expect, out)
		if class == verify.OK {
			if expect == workload.Unverified {
				decided[i] = reference{workload.ExpectDeny, name}
				if out.Allow {
					decided[i].expect = workload.ExpectAllow
				}
			}
			row.Agreed++
			continue
		}
		if row.First != nil {
			continue
		}
		got := verify.Name(class, out.Status)
		if out.Kind == verify.Decided {
			got = workload.ExpectDeny.String()
			if out.Allow {
				got = workload.ExpectAllow.String()
			}
		}
		row.First = &Disagreement{Input: i + 1, Source: engine.SourceFor(kind.Engine, in), Expect: expect, DecidedBy: by, Got: got,
			Request: engine.RequestFor(kind.Engine, in)}
	}
	return row, nil
}
