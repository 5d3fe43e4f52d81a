package result

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
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
	// OPA is the version linked into authzbench (the in-process engine); a run's sut.version
	// says which OPA a CLI or server run used.
	OPA string `json:"opa"`
	// Cedar is the cedar-go module linked into authzbench, which both cedar targets run.
	Cedar string `json:"cedar,omitempty"`
	// Engines are the versions of every engine linked into authzbench, by the engine's name or
	// the library's whose version it is (engine.Versions): {"cedar-go": "v1.9.0", "opa": "v1.22.2"}. OPA and Cedar repeat two of
	// them for readers of the fields they always read; results written before it have none,
	// and reports print those two fields instead.
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

// EngineNames lists the names in Engines, sorted, the order reports print them in.
func (e Env) EngineNames() []string {
	names := make([]string, 0, len(e.Engines))
	for n := range e.Engines {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// CPUs is what the machine has and what this process may run on, as the caller read them from
// the kernel (bench.CaptureEnv reads them with sut): the result package only records them.
type CPUs struct {
	Machine int   // CPUs the machine has online
	Allowed []int // the CPUs this process may run on (sched_getaffinity); nil when unknown
}

// CaptureEnv reads the environment of this process; cpus says what the kernel lets it run on.
func CaptureEnv(opaVersion string, cpus CPUs) Env {
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
		OPA:          opaVersion,
		Cedar:        cedarVersion(),
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

// cedarVersion is the cedar-go module linked in, from the binary's module information (cedar-go
// has no version constant of its own); "unknown" where the binary carries none, as test
// binaries do.
func cedarVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := buildinfo.DepVersion(bi.Deps, "github.com/cedar-policy/cedar-go"); v != "" {
		return v
	}
	return "unknown"
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
