package cedar

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/engine/cedar/cedarengine"
	"github.com/authzbench/authzbench/internal/workload"
)

// Loaded is a workload's Cedar policy set, entities and schema loaded, and every request
// parsed: built once per run, through the run's engine.Prepared, and shared by its Cedar targets (the engine and
// the parsed requests are only read when deciding).
type Loaded struct {
	Engine   *cedarengine.Engine
	Requests []cedarengine.Request
}

// Load returns the workload's Cedar files loaded, once per run, so a policy error names its
// file and position before anything starts, and every request is checked to parse.
func Load(ctx context.Context, p *engine.Prepared, w *workload.Workload) (*Loaded, error) {
	v, err := engine.Prepare(ctx, p, Engine, w)
	if err != nil {
		return nil, err
	}
	return v.(*Loaded), nil
}

// Prepare loads the workload's Cedar files and parses its requests (engine.Preparer).
func (cedar) Prepare(_ context.Context, w *workload.Workload) (any, error) {
	dir, err := os.MkdirTemp("", "authzbench-cedar-")
	if err != nil {
		return nil, fmt.Errorf("create directory for workload files: %w", err)
	}
	defer os.RemoveAll(dir) // loaded, the engine no longer reads its files
	paths, err := Paths(dir, w)
	if err != nil {
		return nil, err
	}
	e, err := cedarengine.Load(paths)
	if err != nil {
		return nil, err
	}
	reqs, err := parseRequests(e, w)
	if err != nil {
		return nil, err
	}
	return &Loaded{Engine: e, Requests: reqs}, nil
}

// Paths writes the workload's in-memory Cedar files under a new directory in tempDir (the
// system's when empty) and says where every file is.
func Paths(tempDir string, w *workload.Workload) (cedarengine.Paths, error) {
	f := filesOf(w)
	if f == nil {
		return cedarengine.Paths{}, workload.NewSettingError("cedar_policies", func(n func(string) string) string {
			return fmt.Sprintf("workload %s has no Cedar version; the cedar targets run %s, or your own with %s",
				w.Name, strings.Join(workload.NamesWhere(Engine.Written), ", "), n("cedar_policies"))
		})
	}
	dir, err := os.MkdirTemp(tempDir, "authzbench-workload-")
	if err != nil {
		return cedarengine.Paths{}, fmt.Errorf("create directory for workload files: %w", err)
	}
	policies, entities, schema, err := f.write(w, dir)
	if err != nil {
		return cedarengine.Paths{}, err
	}
	return cedarengine.Paths{Policies: policies, Entities: entities, Schema: schema, TemplateLinks: f.TemplateLinksPath}, nil
}

// parseRequests parses every input's Cedar request, naming the first bad one.
func parseRequests(e *cedarengine.Engine, w *workload.Workload) ([]cedarengine.Request, error) {
	reqs := make([]cedarengine.Request, len(w.Inputs))
	for i, in := range w.Inputs {
		body := Engine.Request(in)
		if body == nil {
			return nil, fmt.Errorf("workload %s input %d has no Cedar request", w.Name, i+1)
		}
		r, err := e.ParseRequest(body)
		if err != nil {
			return nil, fmt.Errorf("workload %s request %d: %w", w.Name, i+1, err)
		}
		reqs[i] = r
	}
	return reqs, nil
}
