package metrics

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Usage is what the authzbench process itself used: for in-process targets that includes the
// engine, for the others it is the generator's own cost.
type Usage struct {
	CPU time.Duration // user + system
	RSS uint64        // resident set now, bytes
	HWM uint64        // peak resident set of the process so far, bytes
}

// SelfUsage reads this process's CPU time and resident memory (Linux; zeros elsewhere).
func SelfUsage() Usage {
	var u Usage
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		u.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return u
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		switch k {
		case "VmRSS":
			u.RSS = kib(v)
		case "VmHWM":
			u.HWM = kib(v)
		}
	}
	return u
}

func kib(v string) uint64 {
	n, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
	return n << 10
}
