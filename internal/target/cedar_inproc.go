package target

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/authzbench/authzbench/internal/cedarengine"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// cedarInproc decides with cedar-go inside the authzbench process. The policy set and entities
// are loaded once, from the same files the served mode loads, and every request is parsed
// before timing, so the measured path is cedar.Authorize alone.
type cedarInproc struct {
	noWatch
	opts     Options
	engine   *cedarengine.Engine
	requests []cedarengine.Request
}

func (t *cedarInproc) Start(ctx context.Context, w *workload.Workload) error {
	var err error
	if t.engine, err = loadCedar(t.opts, w); err != nil {
		return err
	}
	t.requests, err = parseCedarRequests(t.engine, w)
	return err
}

// loadCedar writes the workload's Cedar files and loads them, so a policy error names its file
// and position before anything starts.
func loadCedar(o Options, w *workload.Workload) (*cedarengine.Engine, error) {
	paths, err := cedarPaths(o, w)
	if err != nil {
		return nil, err
	}
	return cedarengine.Load(paths)
}

func cedarPaths(o Options, w *workload.Workload) (cedarengine.Paths, error) {
	if !w.HasCedar() {
		return cedarengine.Paths{}, fmt.Errorf("workload %s has no Cedar version; the cedar targets run %s, or your own with --cedar-policies",
			w.Name, strings.Join(workload.CedarNames(), ", "))
	}
	dir, err := workDir(o)
	if err != nil {
		return cedarengine.Paths{}, err
	}
	policies, entities, schema, err := w.CedarFiles(dir)
	if err != nil {
		return cedarengine.Paths{}, err
	}
	return cedarengine.Paths{Policies: policies, Entities: entities, Schema: schema, TemplateLinks: w.Cedar.TemplateLinksPath}, nil
}

// parseCedarRequests parses every input's Cedar request, naming the first bad one.
func parseCedarRequests(e *cedarengine.Engine, w *workload.Workload) ([]cedarengine.Request, error) {
	reqs := make([]cedarengine.Request, len(w.Inputs))
	for i, in := range w.Inputs {
		if in.Cedar == nil {
			return nil, fmt.Errorf("workload %s input %d has no Cedar request", w.Name, i+1)
		}
		r, err := e.ParseRequest(in.Cedar)
		if err != nil {
			return nil, fmt.Errorf("workload %s request %d: %w", w.Name, i+1, err)
		}
		reqs[i] = r
	}
	return reqs, nil
}

func (t *cedarInproc) Worker() Decider { return cedarWorker{t} }

type cedarWorker struct{ t *cedarInproc }

func (w cedarWorker) Decide(_ context.Context, i int) verify.Outcome {
	decision, diag := w.t.engine.Decide(&w.t.requests[i])
	if len(diag.Errors) > 0 {
		// Cedar skips a policy that fails to evaluate and decides without it: that decision is
		// not the policies' answer, so it is an evaluation error, not a success.
		e := diag.Errors[0]
		return verify.Outcome{Kind: verify.EvalFailed, Err: fmt.Errorf("cedar evaluation error: %s: %s", e.PolicyID, e.Message)}
	}
	return verify.Outcome{Kind: verify.Decided, Allow: bool(decision)}
}

func (t *cedarInproc) Info() Info {
	return Info{Engine: "cedar", Mode: "inproc", Version: cedarVersion()}
}

func (t *cedarInproc) Stop(context.Context) error { return nil }

// cedarVersion is the version of cedar-go linked into this executable.
func cedarVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == "github.com/cedar-policy/cedar-go" {
				return "cedar-go " + dep.Version
			}
		}
	}
	return "cedar-go"
}
