package result

import (
	"bufio"
	"os"
	"runtime"
	"strings"

	"github.com/authzbench/authzbench/internal/buildinfo"
	"github.com/authzbench/authzbench/internal/sut"
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
	OPA        string `json:"opa"`
	Authzbench string `json:"authzbench"`
	Commit     string `json:"commit"`
	Hostname   string `json:"hostname,omitempty"`
	// Pinning says whether generator and servers were pinned to separate CPUs. When they are
	// not, they share cores and each one's figures include contention with the other.
	Pinning string `json:"pinning"`
}

// CaptureEnv reads the environment of this process.
func CaptureEnv(opaVersion string) Env {
	version, commit := buildinfo.Get()
	host, _ := os.Hostname()
	return Env{
		CPUModel:   cpuModel(),
		Cores:      sut.MachineCPUs(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		OS:         runtime.GOOS,
		Kernel:     kernel(),
		Arch:       runtime.GOARCH,
		Go:         runtime.Version(),
		OPA:        opaVersion,
		Authzbench: version,
		Commit:     commit,
		Hostname:   host,
		Pinning:    "none: generator and system under test share all cores",
	}
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

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
