package result

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/authzbench/authzbench/internal/buildinfo"
)

// Env records where a result was measured; two results are comparable only when their
// environments are.
type Env struct {
	CPUModel   string `json:"cpu_model"`
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	OS         string `json:"os"`
	Kernel     string `json:"kernel,omitempty"`
	Arch       string `json:"arch"`
	Go         string `json:"go"`
	// OPA and Cedar are the two engines' versions as results recorded them before Engines
	// (OPA's and cedar-go's linked in). They are read, never written: EngineVersions gives them
	// where Engines is missing.
	OPA   string `json:"opa,omitempty"`
	Cedar string `json:"cedar,omitempty"`
	// Engines are the versions of every engine linked into authzbench, by the engine's name or
	// the library's whose version it is (engine.Versions): {"cedar-go": "v1.9.0", "opa": "v1.22.2"}.
	// A run's sut.version says which version a CLI or server run used.
	Engines    map[string]string `json:"engines,omitempty"`
	Authzbench string            `json:"authzbench"`
	// Commit is the commit authzbench was built from ("-dirty" when the checkout had changes);
	// CommitSource says how it was found ("-ldflags", "vcs stamp", "checkout at run time",
	// "none") and Modified whether the checkout had changes ("true", "false", "unknown").
	Commit       string `json:"commit"`
	CommitSource string `json:"commit_source,omitempty"`
	Modified     string `json:"modified,omitempty"`
	Hostname     string `json:"hostname,omitempty"`
	// Pinning says whether generator and servers were pinned to separate CPUs. When they are
	// not, they share cores and each one's figures include contention with the other.
	Pinning string `json:"pinning"`
	// GeneratorCPUs is the CPUs the authzbench process was allowed when the run began, as the
	// kernel reports them (sched_getaffinity), whoever set them: --pin-load, taskset, a cgroup.
	GeneratorCPUs string `json:"generator_cpus,omitempty"`
	// CPUFreq is the CPU frequency policy the kernel applied when the run began, as cpufreq
	// names it ("intel_pstate powersave"); empty where the kernel exposes none (most virtual
	// machines). A change of it moves figures as a change of code would.
	CPUFreq string `json:"cpu_freq,omitempty"`
	// Testbed names the machine the result was measured on, as the user named it (run
	// --testbed, a scenario's testbed:); empty when none was given. A history files its series
	// under this name (CheckTestbed says what it may hold).
	Testbed string `json:"testbed,omitempty"`
}

// CheckTestbed says whether name can name a testbed: it goes into URLs, file names and series
// keys as it is, so 1 to 64 letters, digits, '.', '_' and '-', beginning with a letter or digit.
func CheckTestbed(name string) error {
	if name == "" {
		return fmt.Errorf("testbed name is empty: name the machine, such as ci-4core or laptop")
	}
	ok := len(name) <= 64 && isAlnum(name[0])
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = isAlnum(c) || c == '.' || c == '_' || c == '-'
	}
	if !ok {
		return fmt.Errorf("testbed name %q: want 1 to 64 letters, digits, '.', '_' or '-', beginning with a letter or digit (it goes into URLs and file names as it is)", name)
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// EngineVersion is one linked engine's version, by the engine's name or its library's. Label
// is the name as the text reports (table, markdown, HTML, compare) print it: the name, but
// "OPA" for a result written before the engines map, as they always printed it.
type EngineVersion struct{ Name, Version, Label string }

// EngineVersions are the linked engines' versions: Engines, sorted by name, or for a result
// written before it, the OPA and cedar-go versions it recorded, in that order (as reports
// printed them). Every report reads them here, so that none knows an engine's name.
func (e Env) EngineVersions() []EngineVersion {
	var out []EngineVersion
	if len(e.Engines) > 0 {
		for _, n := range slices.Sorted(maps.Keys(e.Engines)) {
			out = append(out, EngineVersion{n, e.Engines[n], n})
		}
		return out
	}
	for _, v := range []EngineVersion{{"opa", e.OPA, "OPA"}, {"cedar-go", e.Cedar, "cedar-go"}} {
		if v.Version != "" {
			out = append(out, v)
		}
	}
	return out
}

// EngineVersion is the version recorded of the engine (or library) called name; empty when
// none was.
func (e Env) EngineVersion(name string) string {
	for _, v := range e.EngineVersions() {
		if v.Name == name {
			return v.Version
		}
	}
	return ""
}

// CPUs is what the machine has and what this process may run on, as the caller read them from
// the kernel (bench.CaptureEnv reads them with sut): the result package only records them.
type CPUs struct {
	Machine int   // CPUs the machine has online
	Allowed []int // the CPUs this process may run on (sched_getaffinity); nil when unknown
}

// CaptureEnv reads the environment of this process; engines are the versions of the engines
// linked in (engine.Versions), cpus says what the kernel lets it run on.
func CaptureEnv(engines map[string]string, cpus CPUs) Env {
	build := buildinfo.Read()
	host, _ := os.Hostname()
	env := Env{
		CPUModel:     cpuModel(),
		Cores:        cpus.Machine,
		GOMAXPROCS:   runtime.GOMAXPROCS(0),
		OS:           runtime.GOOS,
		Kernel:       kernel(),
		Arch:         runtime.GOARCH,
		Go:           runtime.Version(),
		Engines:      engines,
		Authzbench:   build.Version,
		Commit:       build.Commit,
		CommitSource: string(build.Source),
		Modified:     build.Modified,
		Hostname:     host,
		Pinning:      "none: generator and system under test share all cores",
		CPUFreq:      cpuFreq(),
	}
	if cpus.Allowed != nil {
		env.GeneratorCPUs = formatCPUs(cpus.Allowed)
		if len(cpus.Allowed) < env.Cores {
			// Pinned before authzbench began: the servers it starts unpinned inherit this too.
			env.Pinning = "set outside authzbench (taskset, a cgroup): generator on CPUs " + env.GeneratorCPUs +
				", and the servers it starts unpinned inherit them"
		}
	}
	return env
}

// formatCPUs writes a CPU list as the kernel's tools do without ranges: "0,2,3".
func formatCPUs(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// cpuFreq is CPU 0's frequency driver and governor ("acpi-cpufreq performance"), the policy
// every CPU usually shares; "" where cpufreq is absent.
func cpuFreq() string {
	var parts []string
	for _, f := range []string{"scaling_driver", "scaling_governor"} {
		if b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/" + f); err == nil {
			if v := strings.TrimSpace(string(b)); v != "" {
				parts = append(parts, v)
			}
		}
	}
	return strings.Join(parts, " ")
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
