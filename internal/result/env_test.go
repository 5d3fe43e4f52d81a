package result

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/buildinfo"
)

// The CPUs the caller read from the kernel are recorded as given: a generator allowed fewer CPUs
// than the machine has was pinned before authzbench began (taskset, a cgroup), and the pinning
// says so; it used to say "none". bench's test of CaptureEnv starts a pinned child to check the
// kernel's side.
func TestEnvRecordsCPUsAsGiven(t *testing.T) {
	for _, tc := range []struct {
		name          string
		cpus          CPUs
		generatorCPUs string
		pinning       string // prefix
	}{
		{"affinity unknown", CPUs{Machine: 4}, "", "none"},
		{"every CPU", CPUs{Machine: 4, Allowed: []int{0, 1, 2, 3}}, "0,1,2,3", "none"},
		{"pinned outside", CPUs{Machine: 4, Allowed: []int{0, 2}}, "0,2", "set outside authzbench (taskset, a cgroup): generator on CPUs 0,2"},
		{"one CPU machine", CPUs{Machine: 1, Allowed: []int{0}}, "0", "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := CaptureEnv(map[string]string{"opa": "test"}, tc.cpus)
			if env.Cores != tc.cpus.Machine || env.GeneratorCPUs != tc.generatorCPUs || !strings.HasPrefix(env.Pinning, tc.pinning) {
				t.Errorf("cores %d, generator CPUs %q, pinning %q; want %d, %q, %q…", env.Cores, env.GeneratorCPUs, env.Pinning,
					tc.cpus.Machine, tc.generatorCPUs, tc.pinning)
			}
		})
	}
}

// The engines linked in are recorded: cedar-go beside OPA, from the module information (test
// binaries carry none, so the lookup is checked on a list like a built binary's).
func TestEnvRecordsCedarVersion(t *testing.T) {
	deps := []*debug.Module{{Path: "github.com/open-policy-agent/opa", Version: "v1.22.2"},
		{Path: "github.com/cedar-policy/cedar-go", Version: "v1.9.0"}}
	if v := buildinfo.DepVersion(deps, "github.com/cedar-policy/cedar-go"); v != "v1.9.0" {
		t.Errorf("cedar-go %q, want v1.9.0", v)
	}
	deps[1].Replace = &debug.Module{Path: "../cedar-go", Version: "v1.9.1-fork"}
	if v := buildinfo.DepVersion(deps, "github.com/cedar-policy/cedar-go"); v != "v1.9.1-fork" {
		t.Errorf("replaced cedar-go %q, want the replacement's version", v)
	}
	if v := buildinfo.DepVersion(deps[:1], "github.com/cedar-policy/cedar-go"); v != "" {
		t.Errorf("absent module: %q", v)
	}
}

// Reports read every engine's version from one place: the engines map where the result has one,
// else the OPA and cedar-go versions a result written before it recorded, in the order reports
// printed them.
func TestEngineVersionsReadOldResultsToo(t *testing.T) {
	now := Env{Engines: map[string]string{"spicedb": "v1.56.2", "opa": "1.22.2", "cedar-go": "v1.2.6"}}
	if got := fmt.Sprint(now.EngineVersions()); got != "[{cedar-go v1.2.6 cedar-go} {opa 1.22.2 opa} {spicedb v1.56.2 spicedb}]" {
		t.Errorf("engines map: %s", got)
	}
	old := Env{OPA: "1.10.0", Cedar: "v1.1.0"}
	if got := fmt.Sprint(old.EngineVersions()); got != "[{opa 1.10.0 OPA} {cedar-go v1.1.0 cedar-go}]" {
		t.Errorf("before the engines map: %s", got)
	}
	if got := fmt.Sprint(Env{OPA: "1.0.0"}.EngineVersions()); got != "[{opa 1.0.0 OPA}]" {
		t.Errorf("OPA alone: %s", got)
	}
	if old.EngineVersion("cedar-go") != "v1.1.0" || now.EngineVersion("openfga") != "" {
		t.Errorf("EngineVersion by name: %q, %q", old.EngineVersion("cedar-go"), now.EngineVersion("openfga"))
	}
	b, _ := json.Marshal(CaptureEnv(map[string]string{"opa": "1.22.2"}, CPUs{Machine: 2}))
	var written map[string]any
	if err := json.Unmarshal(b, &written); err != nil {
		t.Fatal(err)
	}
	if _, ok := written["opa"]; ok || fmt.Sprint(written["engines"]) != "map[opa:1.22.2]" {
		t.Errorf("a new result writes the versions in engines alone: %s", b)
	}
}
