package target

import (
	"context"
	"fmt"
	"os"
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
	common   Common
	engine   *cedarengine.Engine
	requests []cedarengine.Request
}

func init() {
	Register(Kind{Name: "cedar/inproc", Engine: "cedar", Placement: InProcess, LoadsPolicy: true, Order: 40,
		NewConfig: func() Config { return &NoConfig{} },
		New:       func(common Common, _ Config) Target { return &cedarInproc{common: common} }})
}

func (t *cedarInproc) Start(ctx context.Context, w *workload.Workload) error {
	c, err := loadCedar(w)
	if err != nil {
		return err
	}
	t.engine, t.requests = c.engine, c.requests
	return nil
}

// cedarLoaded is a workload's Cedar policy set, entities and schema loaded, and every request
// parsed: built once per run and shared by its Cedar targets (the engine and the parsed
// requests are only read when deciding).
type cedarLoaded struct {
	engine   *cedarengine.Engine
	requests []cedarengine.Request
}

// loadCedar loads the workload's Cedar files once per run, so a policy error names its file
// and position before anything starts, and every request is checked to parse.
func loadCedar(w *workload.Workload) (*cedarLoaded, error) {
	v, err := w.Prepared("cedar", func() (any, error) {
		dir, err := os.MkdirTemp("", "authzbench-cedar-")
		if err != nil {
			return nil, fmt.Errorf("create directory for workload files: %w", err)
		}
		defer os.RemoveAll(dir) // loaded, the engine no longer reads its files
		paths, err := cedarPaths(dir, w)
		if err != nil {
			return nil, err
		}
		e, err := cedarengine.Load(paths)
		if err != nil {
			return nil, err
		}
		reqs, err := parseCedarRequests(e, w)
		if err != nil {
			return nil, err
		}
		return &cedarLoaded{engine: e, requests: reqs}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*cedarLoaded), nil
}

// cedarPaths writes the workload's in-memory Cedar files under a new directory in tempDir and
// says where every file is.
func cedarPaths(tempDir string, w *workload.Workload) (cedarengine.Paths, error) {
	if !w.HasCedar() {
		return cedarengine.Paths{}, workload.NewSettingError("cedar_policies", func(n func(string) string) string {
			return fmt.Sprintf("workload %s has no Cedar version; the cedar targets run %s, or your own with %s",
				w.Name, strings.Join(workload.CedarNames(), ", "), n("cedar_policies"))
		})
	}
	dir, err := workDir(tempDir)
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
