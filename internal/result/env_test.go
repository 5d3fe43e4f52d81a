package result

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/sut"
)

// TestMain lets this test binary be started pinned (<self> __pin CPUS -- <self> ...), as taskset
// would start authzbench.
func TestMain(m *testing.M) {
	sut.DispatchPinIfAsked()
	os.Exit(m.Run())
}

const envChild = "AUTHZBENCH_TEST_PRINT_ENV"

// A generator pinned before authzbench began (taskset) records the CPUs it really had, and the
// pinning says so; it used to say "none".
func TestEnvRecordsAffinitySetOutside(t *testing.T) {
	if os.Getenv(envChild) != "" {
		json.NewEncoder(os.Stdout).Encode(CaptureEnv("test"))
		return
	}
	if runtime.GOOS != "linux" {
		env := CaptureEnv("test")
		if _, err := sut.Affinity(0); err == nil || env.GeneratorCPUs != "" || !strings.HasPrefix(env.Pinning, "none") {
			t.Errorf("without sched_getaffinity: generator CPUs %q, pinning %q", env.GeneratorCPUs, env.Pinning)
		}
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(self, "-test.run=^TestEnvRecordsAffinitySetOutside$")
	pinned, err := sut.Pinned(child, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	pinned.Env = append(os.Environ(), envChild+"=1")
	out, err := pinned.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var env Env
	line, _, _ := bytes.Cut(out, []byte("\n"))
	if err := json.Unmarshal(line, &env); err != nil {
		t.Fatalf("child printed %q: %v", out, err)
	}
	if env.GeneratorCPUs != "0" {
		t.Errorf("generator CPUs %q, want 0", env.GeneratorCPUs)
	}
	if sut.MachineCPUs() > 1 && !strings.Contains(env.Pinning, "outside authzbench") {
		t.Errorf("pinning %q; want it to say the generator was pinned from outside", env.Pinning)
	}
	if sut.MachineCPUs() == 1 && !strings.HasPrefix(env.Pinning, "none") {
		t.Errorf("one CPU: pinning %q, want none", env.Pinning)
	}
	// Unpinned, the same capture lists every CPU this process may use.
	if own := CaptureEnv("test"); own.GeneratorCPUs == "" || strings.Contains(own.Pinning, "outside") != (len(strings.Split(own.GeneratorCPUs, ",")) < own.Cores) {
		t.Errorf("this process: generator CPUs %q of %d cores, pinning %q", own.GeneratorCPUs, own.Cores, own.Pinning)
	}
}

// The engines linked in are recorded: cedar-go beside OPA, from the module information (test
// binaries carry none, so the lookup is checked on a list like a built binary's).
func TestEnvRecordsCedarVersion(t *testing.T) {
	deps := []*debug.Module{{Path: "github.com/open-policy-agent/opa", Version: "v1.22.2"},
		{Path: "github.com/cedar-policy/cedar-go", Version: "v1.9.0"}}
	if v := moduleVersion(deps, "github.com/cedar-policy/cedar-go"); v != "v1.9.0" {
		t.Errorf("cedar-go %q, want v1.9.0", v)
	}
	deps[1].Replace = &debug.Module{Path: "../cedar-go", Version: "v1.9.1-fork"}
	if v := moduleVersion(deps, "github.com/cedar-policy/cedar-go"); v != "v1.9.1-fork" {
		t.Errorf("replaced cedar-go %q, want the replacement's version", v)
	}
	if v := moduleVersion(deps[:1], "github.com/cedar-policy/cedar-go"); v != "" {
		t.Errorf("absent module: %q", v)
	}
	if env := CaptureEnv("v1.22.2"); env.Cedar == "" || env.OPA != "v1.22.2" {
		t.Errorf("cedar %q, opa %q; want both recorded", env.Cedar, env.OPA)
	}
}
