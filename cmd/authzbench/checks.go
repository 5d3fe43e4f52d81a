package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/bench"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/outputs"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/workload"
)

// opaLogLevels are the levels `opa run --server --log-level` accepts.
var opaLogLevels = []string{"debug", "info", "error"}

// checkRunFlags finds flags that are wrong on their face, or that would be ignored, before
// anything is built or started.
func checkRunFlags(fl *pflag.FlagSet, f runFlags) error {
	var errs []error
	http2 := f.options.on("http2")
	errs = append(errs, f.options.check()...)
	if !slices.Contains(opaLogLevels, f.logLevel) {
		errs = append(errs, fmt.Errorf("--log-level %q: want one of %v", f.logLevel, opaLogLevels))
	}
	if f.procs < 0 {
		errs = append(errs, fmt.Errorf("--generator-procs %d: want 1 or more, or 0 for the default", f.procs))
	}
	if fl.Changed("http2-connections") && !http2 && f.file == "" {
		errs = append(errs, errors.New("--http2-connections sets the HTTP/2 connections the workers share; give --http2 with it"))
	}
	if http2 && f.noReuse {
		errs = append(errs, errors.New("--http2 multiplexes requests over kept connections; it does not go with --no-reuse (measure connection costs over HTTP/1.1, without --http2)"))
	}
	if f.serverTimes < 0 {
		errs = append(errs, fmt.Errorf("--server-metrics %d: want N >= 1 to sample every Nth request, or 0 for none", f.serverTimes))
	}
	return errors.Join(errs...)
}

// saveResult writes the document to path, replacing a file there only with replace (--force),
// and says where it went. A finished run is not lost when that fails at the end (the disk
// filled, the directory went away, another process put a file there): the document goes to a
// new file in the temporary directory, and the error names it.
func saveResult(path, prefix string, doc *result.Document, replace bool, stderr io.Writer) error {
	write := result.WriteNew
	if replace {
		write = result.Write
	}
	err := write(path, doc)
	if err == nil {
		fmt.Fprintf(stderr, "authzbench: result written to %s\n", path)
		return nil
	}
	fallback := outputs.FreeName(filepath.Join(os.TempDir(), defaultResultName(prefix, doc)))
	if ferr := result.WriteNew(fallback, doc); ferr != nil {
		return fmt.Errorf("%w; writing it to %s failed too: %v", err, fallback, ferr)
	}
	fmt.Fprintf(stderr, "authzbench: result written to %s instead\n", fallback)
	return fmt.Errorf("%w; the result was written to %s instead", err, fallback)
}

// checkBeforeLoad tries, before any load, what only a server can tell: whether a running one a
// URL names takes the run (kinds.Prober), and whether each server authzbench starts accepts
// --sut-arg (a server that rejects one exits at once, and would otherwise do so after other
// targets' load). It starts those with the plan's workloads, as the run will.
func checkBeforeLoad(ctx context.Context, plan *bench.Plan, o bench.Options, f runFlags) error {
	// A running server a target's URL names may refuse the run outright (a key it does not
	// take, a schema it has): asked now, that is bad input, and nothing is measured or written.
	for _, t := range plan.Scenario.Targets {
		if p, ok := t.Settings().(kinds.Prober); ok {
			if err := p.Probe(ctx); err != nil {
				return fmt.Errorf("%s: %w", t.Name, err)
			}
		}
	}
	var servers []scenario.TargetRef
	for _, t := range plan.Scenario.Targets {
		seen := slices.ContainsFunc(servers, func(r scenario.TargetRef) bool { return r.Name == t.Name })
		if len(f.options.list("sut_args")) > 0 && t.Placement() == kinds.LaunchedServer && !seen {
			servers = append(servers, t)
		}
	}
	if len(servers) == 0 {
		return nil
	}
	workloads := plan.Workloads
	tmp, err := os.MkdirTemp("", "authzbench-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, t := range servers {
		name := t.Kind().Engine
		i := slices.IndexFunc(workloads, func(w *workload.Workload) bool { _, ok := engine.WrittenFor(name, w); return ok })
		if i < 0 {
			continue // the run reports a workload without a version for the engine itself
		}
		common := o.Common
		common.TempDir = tmp
		common.Prepared = plan.Prepared
		common.Workers = 1
		tg, err := kinds.New(t.Name, common, t.Settings())
		if err != nil {
			return err
		}
		err = tg.Start(ctx, workloads[i])
		tg.Stop(context.Background())
		// Only a server's refusal is decided here; anything else the run meets and reports.
		var rejected *sut.StartError
		if errors.As(err, &rejected) {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	return nil
}
