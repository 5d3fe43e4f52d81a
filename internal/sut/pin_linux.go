package sut

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// PinArg is the first argument that makes an authzbench (or test) process pin itself to CPUs
// and then become another program: "<self> __pin 1 -- opa run ...". The affinity survives
// exec, so the pinned program's Go runtime sizes itself to the CPUs it was given.
const PinArg = "__pin"

// Pinned wraps a command so that it runs on the given CPUs.
func Pinned(cmd *exec.Cmd, cpus []int) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("pin: find own executable: %w", err)
	}
	args := append([]string{PinArg, FormatCPUs(cpus), "--", cmd.Path}, cmd.Args[1:]...)
	wrapped := exec.Command(self, args...)
	wrapped.Env, wrapped.Dir = cmd.Env, cmd.Dir
	return wrapped, nil
}

// DispatchPinIfAsked pins this process and execs the program named after "--", when started as
// "<self> __pin CPUS -- PROGRAM ARGS". Call it first thing in main and in TestMain.
func DispatchPinIfAsked() {
	if len(os.Args) < 5 || os.Args[1] != PinArg || os.Args[3] != "--" {
		return
	}
	cpus, err := ParseCPUs(os.Args[2])
	if err == nil {
		err = PinProcess(cpus)
	}
	if err == nil {
		err = syscall.Exec(os.Args[4], os.Args[4:], os.Environ())
	}
	fmt.Fprintln(os.Stderr, "authzbench: pin:", err)
	os.Exit(1)
}

// PinProcess sets the CPU affinity of every thread of this process (threads created later
// inherit it from their creator) and sizes the Go scheduler to it.
func PinProcess(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("pin: %w", err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil {
			return fmt.Errorf("pin to CPUs %s: %w", FormatCPUs(cpus), err)
		}
	}
	runtime.GOMAXPROCS(len(cpus))
	return nil
}

// Affinity returns the CPUs a process may run on.
func Affinity(pid int) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return nil, err
	}
	var cpus []int
	for c := range 1024 {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
