package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// SpiceDB's server (its pkg/cmd, and through pkg/cmd/datastore every storage engine SpiceDB
// supports) is linked by authzbench-spicedb, never by authzbench: linked here it took the clean
// build from ~116 s to 207 s, past the first run's budget. The one package under pkg/cmd that
// SpiceDB's memory datastore itself imports, dsconfig (its options, no driver), is allowed.
func TestSpiceDBServerNotLinked(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot list authzbench's imports")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	imports := map[string][]string{}
	root := ""
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		imports[fields[0]] = fields[1:]
		root = fields[0] // go list -deps lists a package after everything it imports
	}
	if !strings.HasSuffix(root, "/cmd/authzbench") {
		t.Fatalf("go list -deps ended with %q, not authzbench", root)
	}
	if _, ok := imports["github.com/authzed/spicedb/pkg/embedded"]; !ok {
		t.Fatal("SpiceDB's embedded checker is not linked: the test would pass for no reason")
	}
	for _, chain := range chainsTo(root, imports, serverPackage) {
		t.Errorf("authzbench links SpiceDB's server: %s", strings.Join(chain, "\n\timports "))
	}
}

// serverPackage reports whether p is part of SpiceDB's server command. (The checker's own
// imports reach a few small packages of other datastores, their error types: those were
// measured in the 139 s the engine alone costs.)
func serverPackage(p string) bool {
	const cmd = "github.com/authzed/spicedb/pkg/cmd"
	if p == cmd+"/datastore/dsconfig" {
		return false
	}
	return p == cmd || strings.HasPrefix(p, cmd+"/")
}

// chainsTo returns, for each package bad says is forbidden, the first import chain from root
// that reaches it (breadth first: the shortest).
func chainsTo(root string, imports map[string][]string, bad func(string) bool) [][]string {
	from := map[string]string{root: ""}
	queue := []string{root}
	var chains [][]string
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if bad(p) {
			var chain []string
			for q := p; q != ""; q = from[q] {
				chain = append([]string{q}, chain...)
			}
			chains = append(chains, chain)
			continue
		}
		for _, q := range imports[p] {
			if _, seen := from[q]; !seen {
				from[q] = p
				queue = append(queue, q)
			}
		}
	}
	return chains
}

// The seam between the target kinds and the engines: an engine whose kinds live in its own
// package is linked by this command's one import line, and internal/kinds reaches none of it,
// so adding an engine cannot quietly need an edit to internal/kinds again.
func TestKindsReachNoOtherEngine(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot list internal/kinds' imports")
	}
	const module = "github.com/authzbench/authzbench"
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"/internal/kinds").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		imports[fields[0]] = fields[1:]
	}
	root := module + "/internal/kinds"
	if _, ok := imports[root]; !ok {
		t.Fatalf("go list -deps did not list %s", root)
	}
	allowed := map[string]bool{}
	if _, ok := imports[module+"/internal/engine"]; !ok {
		t.Fatal("internal/kinds does not reach the engines' registry, internal/engine: the test would pass for no reason")
	}
	engines := module + "/internal/engine/"
	for _, chain := range chainsTo(root, imports, func(p string) bool { return strings.HasPrefix(p, engines) && !allowed[p] }) {
		t.Errorf("internal/kinds reaches an engine whose kinds belong in its own package: %s", strings.Join(chain, "\n\timports "))
	}
}

// authzbench-opa is OPA's command line and no more: opa/cli starts one of it per decision, and
// its start-up is what each decision pays (docs/benchmarks.md). Of this module it links OPA's
// command tree alone (internal/engine/opa/opacli): not the registry, whose every engine's
// package inits it would pay, not the workloads, not OPA's engine package with its ext_authz
// plugin.
func TestSlimOPALinksOPAAlone(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot list authzbench-opa's imports")
	}
	const module = "github.com/authzbench/authzbench"
	out, err := exec.Command(goTool, "list", "-deps", module+"/cmd/authzbench-opa").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, module+"/internal/engine/opa/opacli") {
		t.Fatalf("authzbench-opa does not link opacli: the test would pass for no reason; it links %v", deps)
	}
	for _, p := range deps {
		if strings.HasPrefix(p, module+"/") && p != module+"/cmd/authzbench-opa" && p != module+"/internal/engine/opa/opacli" {
			t.Errorf("authzbench-opa links %s: each opa/cli decision would pay its start-up", p)
		}
	}
}
