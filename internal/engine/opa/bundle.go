package opa

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"

	"github.com/authzbench/authzbench/internal/workload"
)

// SplitBundles parts Rego policy paths into the OPA bundles, directories with a .manifest, read
// as `opa run --bundle DIR` reads them (the .rego files, the data.json and data.yaml files
// mounted at their directory's path, the manifest's roots and revision; other files ignored),
// and the rest: files, and directories without a manifest, which OPA's plain loader reads as
// `opa run DIR` does (every .rego, and every JSON or YAML file as data at its directory's
// path). Without a manifest the two read a bundle's layout alike; a manifest is what only a
// bundle has, so it is what makes a directory one. A path that cannot be read counts as a file:
// its reader names it.
func SplitBundles(policies []string) (bundles, rest []string) {
	for _, p := range policies {
		if isBundle(p) {
			bundles = append(bundles, p)
		} else {
			rest = append(rest, p)
		}
	}
	return bundles, rest
}

func isBundle(path string) bool {
	info, err := os.Stat(path)
	if err != nil || !info.IsDir() {
		return false
	}
	_, err = os.Stat(filepath.Join(path, ".manifest"))
	return err == nil
}

// policyDirProblems reads every policy directory before any load: a directory with no .rego file
// in it, and for a bundle a broken .manifest, a policy outside its roots or data that is not
// JSON, is an error naming the directory, not a server that fails to start or a policy that
// is silently empty. OPA reads bundles or loose files, never both at once (`opa run --bundle`
// takes every path for a bundle), so loose policy or data files beside a bundle are refused.
func policyDirProblems(s workload.UserSpec) []error {
	var errs []error
	bundles, rest := SplitBundles(s.Policies)
	if loose := append(slices.Clone(rest), s.Data...); len(bundles) > 0 && len(loose) > 0 {
		errs = append(errs, workload.NewSettingError("policy", func(n func(string) string) string {
			return fmt.Sprintf("%s %s is an OPA bundle (it has a .manifest), read as OPA's --bundle reads it, with its policy and data inside; "+
				"%s cannot be loaded beside it (OPA loads bundles or loose files, not both): put them in the bundle "+
				"(data as data.json in the directory of its path), or drop the .manifest to read the directory as loose files",
				n("policy"), bundles[0], strings.Join(loose, ", "))
		}))
	}
	version := ast.RegoV1
	if s.V0Compatible {
		version = ast.RegoV0
	}
	for _, p := range s.Policies {
		if info, err := os.Stat(p); err != nil || !info.IsDir() {
			continue
		}
		if !holdsRego(p) {
			errs = append(errs, workload.NewSettingError("policy", func(n func(string) string) string {
				return fmt.Sprintf("%s %s: a policy directory with no .rego file in it", n("policy"), p)
			}))
			continue
		}
		if !isBundle(p) {
			continue
		}
		if _, err := loader.NewFileLoader().WithRegoVersion(version).AsBundle(p); err != nil {
			errs = append(errs, workload.NewSettingError("policy", func(n func(string) string) string {
				return fmt.Sprintf("%s %s: read as an OPA bundle (it has a .manifest): %v", n("policy"), p, SuggestV0(err, s.V0Compatible))
			}))
		}
	}
	return errs
}

// holdsRego says whether a .rego file is anywhere under dir.
func holdsRego(dir string) bool {
	found := errors.New("found")
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".rego") {
			return found
		}
		return nil
	})
	return err == found
}
