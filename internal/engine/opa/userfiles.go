package opa

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"

	"github.com/authzbench/authzbench/internal/workload"
)

// Users' Rego files: the policies, data and bundles that come with an inputs file, which the
// workload package reads through this registration (the query derived from the policies'
// package, the policy directories checked before any load).
func init() {
	workload.RegisterPolicyFiles(workload.PolicyFiles{Engine: Name, Check: policyDirProblems,
		Query: func(s workload.UserSpec) (string, error) { return deriveQuery(s.Policies, s.V0Compatible) },
		Add:   addUserVersion})
}

// deriveQuery returns data.<package>.allow when the policies define exactly one package and it
// has a rule named allow. Tests beside the policy (files named *_test.rego, packages of test_
// rules only), as `opa test` runs them, are not a decision and are left out.
func deriveQuery(policies []string, v0 bool) (string, error) {
	version := ast.RegoV1
	if v0 {
		version = ast.RegoV0
	}
	res, err := loader.NewFileLoader().WithRegoVersion(version).Filtered(policies, func(_ string, info os.FileInfo, _ int) bool {
		return !info.IsDir() && !strings.HasSuffix(info.Name(), ".rego")
	})
	if err != nil {
		return "", fmt.Errorf("load policies: %w", SuggestV0(err, v0))
	}
	packages := map[string]bool{}
	hasAllow := map[string]bool{}
	for name, f := range res.Modules {
		m := f.Parsed
		if strings.HasSuffix(name, "_test.rego") || onlyTests(m) {
			continue
		}
		pkg := m.Package.Path.String()
		packages[pkg] = true
		for _, r := range m.Rules {
			if r.Head.Name.String() == "allow" || r.Head.Ref().String() == "allow" {
				hasAllow[pkg] = true
			}
		}
	}
	names := make([]string, 0, len(packages))
	for p := range packages {
		names = append(names, p)
	}
	sort.Strings(names)
	switch {
	case len(names) == 0:
		return "", fmt.Errorf("no Rego policy found in %s", strings.Join(policies, ", "))
	case len(names) > 1:
		return "", fmt.Errorf("cannot derive the query: the policies define packages %s; give the query to ask, such as %s.allow",
			strings.Join(names, ", "), names[0])
	case !hasAllow[names[0]]:
		return "", fmt.Errorf("cannot derive the query: package %s has no rule named allow; give the query to ask", names[0])
	}
	return names[0] + ".allow", nil
}

// onlyTests reports whether a module holds nothing but test_ rules (a test package in a file not
// named *_test.rego).
func onlyTests(m *ast.Module) bool {
	for _, r := range m.Rules {
		if !strings.HasPrefix(r.Head.Name.String(), "test_") && !strings.HasPrefix(r.Head.Ref().String(), "test_") {
			return false
		}
	}
	return len(m.Rules) > 0
}

// v0Hints are the parser's words for syntax that Rego v1 requires and v0 lacks.
var v0Hints = []string{"`if` keyword is required", "`contains` keyword is required", "rego_parse_error: var cannot be used for rule name"}

// SuggestV0 adds to a Rego parse error that looks like v0 syntax how to run the policy anyway:
// --v0-compatible, as OPA names it, or a rewrite with OPA's formatter.
func SuggestV0(err error, v0 bool) error {
	if err == nil || v0 {
		return err
	}
	msg := err.Error()
	for _, h := range v0Hints {
		if strings.Contains(msg, h) {
			return fmt.Errorf("%w\nthe policy looks like Rego v0 (OPA before 1.0): add --v0-compatible (v0_compatible: true in a scenario), "+
				"or rewrite it in v1 with: authzbench opa fmt --v0-v1 -w FILE.rego", err)
		}
	}
	return err
}
