package opa

import (
	"context"
	"fmt"
	"os"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// workloadFiles compiles the workload's Rego in-process first (once per run, shared with the
// other OPA targets), so a policy error is reported with file:line before any OPA process
// starts, then writes its policy and data files under a new directory of the run's temporary
// one for the processes that read them.
func workloadFiles(ctx context.Context, common kinds.Common, w *workload.Workload) (dir string, policies, data []string, err error) {
	if _, err := Compiled(ctx, common.Prepared, w); err != nil {
		return "", nil, nil, err
	}
	if dir, err = os.MkdirTemp(common.TempDir, "authzbench-workload-"); err != nil {
		return "", nil, nil, fmt.Errorf("create directory for workload files: %w", err)
	}
	policies, data, err = w.Files(dir)
	return dir, policies, data, err
}

// runPaths are the policy and data paths as `opa run` takes them: a bundle (a policy directory
// with a .manifest, SplitBundles) is read only with --bundle, which takes every path
// for one (the workload refuses loose files beside a bundle, so there are none here).
func runPaths(policies, data []string) []string {
	paths := append(append([]string{}, policies...), data...)
	if bundles, _ := SplitBundles(policies); len(bundles) > 0 {
		return append([]string{"--bundle"}, paths...)
	}
	return paths
}
