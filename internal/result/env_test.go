package result

import (
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
			env := CaptureEnv("test", tc.cpus)
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
	if env := CaptureEnv("v1.22.2", CPUs{Machine: 2}); env.Cedar == "" || env.OPA != "v1.22.2" {
		t.Errorf("cedar %q, opa %q; want both recorded", env.Cedar, env.OPA)
	}
}
