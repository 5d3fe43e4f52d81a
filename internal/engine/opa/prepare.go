package opa

import (
	"context"
	"fmt"
	"os"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/userwords"
	"github.com/authzbench/authzbench/internal/workload"
)

// Compiled is the workload's policy and data compiled, exactly as OPA's loader reads them, with
// its query prepared: built once per run, through the run's p, and shared by every OPA target of
// the run and every check before it (evaluating it is safe from many goroutines).
func Compiled(ctx context.Context, p *engine.Prepared, w *workload.Workload) (rego.PreparedEvalQuery, error) {
	v, err := engine.Prepare(ctx, p, Engine, w)
	if err != nil {
		return rego.PreparedEvalQuery{}, err
	}
	return v.(rego.PreparedEvalQuery), nil
}

// Prepare compiles the workload's Rego (engine.Preparer).
func (opa) Prepare(ctx context.Context, w *workload.Workload) (any, error) {
	dir, err := os.MkdirTemp("", "authzbench-compile-")
	if err != nil {
		return nil, fmt.Errorf("create directory for workload files: %w", err)
	}
	defer os.RemoveAll(dir) // compiled, the query no longer reads its files
	policies, data, err := w.Files(dir)
	if err != nil {
		return nil, err
	}
	return CompileFiles(ctx, w.Query, policies, data, regoV0(w))
}

// LoadOptions load the policy and data files as OPA reads them: a bundle (a policy directory
// with a .manifest, SplitBundles) as opa run --bundle reads it, every other path with
// OPA's plain loader, as opa run reads it.
func LoadOptions(policies, data []string) []func(*rego.Rego) {
	bundles, files := SplitBundles(policies)
	var opts []func(*rego.Rego)
	for _, b := range bundles {
		opts = append(opts, rego.LoadBundle(b))
	}
	if paths := append(files, data...); len(paths) > 0 {
		opts = append(opts, rego.Load(paths, nil))
	}
	return opts
}

// CompileFiles compiles the policy and data files exactly as OPA's loader reads them, so a Rego
// error names its file and line, and prepares query for evaluation. v0 reads the policy in Rego
// v0 syntax, as OPA's --v0-compatible does; without it, an error that looks like v0 syntax says
// how to run it.
func CompileFiles(ctx context.Context, query string, policies, data []string, v0 bool) (rego.PreparedEvalQuery, error) {
	if len(policies) == 0 || query == "" {
		return rego.PreparedEvalQuery{}, workload.NewSettingError("policy", func(n func(string) string) string {
			return fmt.Sprintf("the OPA targets need a policy (%s) and a query; only the http target runs inputs alone", n("policy"))
		})
	}
	opts := append([]func(*rego.Rego){rego.Query(query)}, LoadOptions(policies, data)...)
	if v0 {
		opts = append(opts, rego.SetRegoVersion(ast.RegoV0))
	}
	pq, err := rego.New(opts...).PrepareForEval(ctx)
	if err != nil {
		return pq, fmt.Errorf("compile policy for %s: %w", query, userwords.Rewritten(SuggestV0(err, v0)))
	}
	return pq, nil
}
