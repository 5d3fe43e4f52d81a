package opa

import (
	"context"
	"fmt"
	"os"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// workloadFiles compiles the workload's Rego in-process first (once per run, shared with the
// other OPA targets), so a policy error is reported with file:line before any OPA process
// starts, then writes its policy and data files under a new directory of the run's temporary
// one for the processes that read them.
func workloadFiles(ctx context.Context, common kinds.Common, w *workload.Workload) (dir string, policies, data []string, err error) {
	if err := engine.Check(ctx, common.Prepared, Engine, w); err != nil {
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

// Name is OPA's name in target kinds and results, and the key of its version of a workload
// (workload.Workload.Versions).
const Name = "opa"

// Rego is what OPA keeps of a user's workload in its workload.Version's Own: what of the user's
// settings only OPA reads. The policy, data and query are still the workload's own fields.
type Rego struct {
	// V0 says the Rego is written in OPA's v0 syntax (rules without "if", sets without
	// "contains"): every OPA target then parses it as OPA's --v0-compatible does.
	V0 bool
}

// regoV0 reports whether w's Rego is in OPA's v0 syntax (Rego.V0); false for a built-in.
func regoV0(w *workload.Workload) bool {
	if v := w.VersionFor(Name); v != nil {
		if r, ok := v.Own.(*Rego); ok {
			return r.V0
		}
	}
	return false
}

// addUserVersion adds OPA's version of a workload read from the user's files: the dialect the
// spec says its Rego is in. A workload of v1 Rego, the default, gets none.
func addUserVersion(s workload.UserSpec, w *workload.Workload) error {
	if !s.V0Compatible {
		return nil
	}
	if w.Versions == nil {
		w.Versions = map[string]*workload.Version{}
	}
	w.Versions[Name] = &workload.Version{Own: &Rego{V0: true}}
	return nil
}
