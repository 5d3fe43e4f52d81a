package sut

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// ParseCPUs reads a CPU list such as "0", "1-3" or "0,2-3", as taskset and cgroups write them,
// and checks every CPU exists on this machine.
func ParseCPUs(s string) ([]int, error) {
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return nil, fmt.Errorf("CPU list %q: want numbers and ranges such as 0,2-3", s)
		}
		for c := a; c <= b; c++ {
			if n := MachineCPUs(); c >= n {
				return nil, fmt.Errorf("CPU list %q: CPU %d does not exist (this machine has %d: 0-%d)", s, c, n, n-1)
			}
			seen[c] = true
		}
	}
	cpus := make([]int, 0, len(seen))
	for c := range seen {
		cpus = append(cpus, c)
	}
	sort.Ints(cpus)
	return cpus, nil
}

// MachineCPUs is the number of CPUs the machine has online, whatever this process's own
// affinity (runtime.NumCPU counts only the CPUs this process may use, and a pinned parent
// passes its pinning to its children).
func MachineCPUs() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return runtime.NumCPU()
	}
	highest := -1
	for _, part := range strings.Split(strings.TrimSpace(string(b)), ",") {
		_, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = part
		}
		if n, err := strconv.Atoi(hi); err == nil && n > highest {
			highest = n
		}
	}
	if highest < 0 {
		return runtime.NumCPU()
	}
	return highest + 1
}

// AllCPUs lists every CPU of the machine, to undo a pinning.
func AllCPUs() []int {
	all := make([]int, MachineCPUs())
	for i := range all {
		all[i] = i
	}
	return all
}

// FormatCPUs writes a CPU list back: "0,2,3".
func FormatCPUs(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}
