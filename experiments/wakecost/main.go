//go:build linux

// Command wakecost measures the two prices an open-loop send pays on this machine whatever
// the generator: a system call, and a thread put to sleep until a time and woken. It prints the
// kernel's account of its own CPU (getrusage, user + system) per call and per wake-up.
//
//	go run ./experiments/wakecost              # 1 s per figure
//	taskset -c 0 go run ./experiments/wakecost -for 3s
//
// Where a bare wake-up costs tens of microseconds and a system call a fraction of one, a
// generator that sends each request at its own time is bound by the wake-ups, not by its
// system calls: batching calls (io_uring, sendmmsg) cannot move it, sending fewer times can.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// prSetTimerSlack is prctl's PR_SET_TIMERSLACK: 1 ns, as authzbench's event loop sets it, so a
// timed sleep ends when asked and not up to 50 µs later.
const prSetTimerSlack = 29

func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		fmt.Fprintln(os.Stderr, "wakecost: getrusage:", err)
		os.Exit(1)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	span := flag.Duration("for", time.Second, "how long each figure is measured")
	flag.Parse()
	if *span <= 0 || *span > time.Minute {
		fmt.Fprintln(os.Stderr, "wakecost: -for must be above 0 and at most 1m")
		os.Exit(2)
	}
	// One thread, as an event loop has: its CPU alone is counted (RUSAGE_THREAD).
	runtime.LockOSThread()
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)

	calls := 0
	c0, w0 := cpu(), time.Now()
	for time.Since(w0) < *span {
		for range 1000 {
			syscall.RawSyscall(syscall.SYS_GETPID, 0, 0, 0)
		}
		calls += 1000
	}
	fmt.Printf("system call (getpid): %.2f µs of CPU a call, %d calls\n",
		float64(cpu()-c0)/float64(calls)/1e3, calls)

	for _, rate := range []int{1000, 2000, 5000, 10000} {
		gap := time.Second / time.Duration(rate)
		n := int(*span / gap)
		c0, w0 := cpu(), time.Now()
		for i := 1; i <= n; i++ {
			// Absolute deadlines on the monotonic clock, as a schedule has: a late wake-up
			// does not push the later ones back.
			due := w0.Add(time.Duration(i) * gap)
			if d := time.Until(due); d > 0 {
				ts := syscall.NsecToTimespec(int64(d))
				syscall.RawSyscall6(syscall.SYS_CLOCK_NANOSLEEP, 1 /* CLOCK_MONOTONIC */, 0,
					uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
			}
		}
		fmt.Printf("timed sleep and wake-up, %5d a second: %5.1f µs of CPU a wake-up, %d wake-ups in %v\n",
			rate, float64(cpu()-c0)/float64(n)/1e3, n, time.Since(w0).Round(time.Millisecond))
	}
}
