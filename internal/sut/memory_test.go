package sut

import (
	"os"
	"runtime"
	"testing"
)

func TestParseStatus(t *testing.T) {
	status := "Name:\topa\nVmPeak:\t 2000000 kB\nVmHWM:\t  812345 kB\nVmRSS:\t  400000 kB\nThreads:\t12\n"
	m, err := parseStatus([]byte(status))
	if err != nil {
		t.Fatal(err)
	}
	if m.Peak != 812345<<10 || m.Resident != 400000<<10 {
		t.Errorf("got peak %d, resident %d; want VmHWM's 812345 kB and VmRSS's 400000 kB in bytes", m.Peak, m.Resident)
	}
	for _, bad := range []string{"Name:\topa\n", "VmHWM:\t12 MB\nVmRSS:\t1 kB\n", "VmHWM:\tmany kB\nVmRSS:\t1 kB\n"} {
		if _, err := parseStatus([]byte(bad)); err == nil {
			t.Errorf("parseStatus(%q) = nil error, want one", bad)
		}
	}
}

// The peak is a high-water mark: after the test allocates and touches 64 MiB, this process's
// peak is at least that, and never below what is resident.
func TestReadMemoryOfThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/PID/status is Linux's")
	}
	big := make([]byte, 64<<20)
	for i := range big {
		big[i] = 1
	}
	m, err := ReadMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.Peak < 64<<20 || m.Resident == 0 || m.Peak < m.Resident {
		t.Errorf("peak %d, resident %d: want a peak of at least 64 MiB and at least the resident", m.Peak, m.Resident)
	}
	runtime.KeepAlive(big)
	if _, err := ReadMemory(1 << 30); err == nil {
		t.Error("ReadMemory of a pid that cannot exist: want an error")
	}
}
