package sut

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Memory is what the kernel says of a process's memory (/proc/PID/status), in bytes.
type Memory struct {
	// Peak is VmHWM, the most resident memory the process has had since it started (or since
	// it exec'd, so a pinning wrapper that execs the server measures the server alone): the
	// peak of loading its data that a sampler every 250 ms can miss.
	Peak uint64
	// Resident is VmRSS now.
	Resident uint64
}

// ReadMemory reads pid's memory from /proc; an error where there is no /proc (not Linux) or
// the process has gone.
func ReadMemory(pid int) (Memory, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return Memory{}, err
	}
	return parseStatus(b)
}

// parseStatus reads VmHWM and VmRSS ("VmHWM:    12345 kB") from a /proc/PID/status.
func parseStatus(b []byte) (Memory, error) {
	var m Memory
	var found int
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmHWM" && key != "VmRSS") {
			continue
		}
		f := strings.Fields(value)
		if len(f) != 2 || f[1] != "kB" {
			return Memory{}, fmt.Errorf("/proc status %s: %q, want a count of kB", key, strings.TrimSpace(value))
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("/proc status %s: %w", key, err)
		}
		if key == "VmHWM" {
			m.Peak = kb << 10
		} else {
			m.Resident = kb << 10
		}
		found++
	}
	if found != 2 {
		return Memory{}, fmt.Errorf("/proc status: no VmHWM and VmRSS (a kernel thread, or a process that has exited)")
	}
	return m, nil
}
