package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/result"
)

// syncBuffer is a stderr the command's goroutines and the test may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// children are the processes whose parent is this test process: the servers a command started.
func children(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to find child processes in: %v", err)
	}
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
		fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(self) {
			out = append(out, pid)
		}
	}
	return out
}

// interruptWhen runs args through execute and interrupts it, through the command's own Ctrl-C
// path, once it listens for Ctrl-C and when returns true (polled every 5 ms).
func interruptWhen(t *testing.T, when func(stderr string) bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	registered := make(chan chan<- os.Signal, 1)
	old := notifyInterrupt
	notifyInterrupt = func(c chan<- os.Signal) { registered <- c }
	defer func() { notifyInterrupt = old }()
	var out bytes.Buffer
	var errb syncBuffer
	finished := make(chan struct{})
	go func() {
		var c chan<- os.Signal
		select {
		case c = <-registered:
		case <-finished:
			return
		}
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		deadline := time.After(60 * time.Second)
		for !when(errb.String()) {
			select {
			case <-tick.C:
			case <-finished:
				return
			case <-deadline:
				t.Error("the moment to interrupt never came")
				return
			}
		}
		c <- os.Interrupt
	}()
	code = execute(args, &out, &errb)
	close(finished)
	return code, out.String(), errb.String()
}

// Interrupted means marked: Ctrl-C wherever it falls (a capacity search mid-way, replicas
// starting, a sweep's second step in its warm-up or measuring, calibrate, profile) exits 130
// saying it was interrupted, marks the result written "interrupted" with the cause, draws no
// conclusion from a search that did not end, and leaves no process it started behind.
func TestInterruptedMeansMarked(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	after := func(d time.Duration, cond func(string) bool) func(string) bool {
		var since time.Time
		return func(stderr string) bool {
			if since.IsZero() {
				if !cond(stderr) {
					return false
				}
				since = time.Now()
			}
			return time.Since(since) >= d
		}
	}
	for _, tc := range []struct {
		name string
		args func(t *testing.T, e *faultEnv) []string
		when func(t *testing.T, e *faultEnv) func(stderr string) bool
		// noResult: interrupted before anything was measured, so no file is written.
		noResult bool
		stdout   []string // in stdout
		notOut   []string // not in stdout
		check    func(t *testing.T, doc *result.Document, stdout string)
	}{
		{name: "capacity search mid-way",
			args: func(t *testing.T, e *faultEnv) []string {
				return args("capacity", "--target", "opa/server", "--url", e.url, "--workload", "nop", "--start", "50", "--max", "100000",
					"--step", "300ms", "--warmup", "0s", "--slo", "p99=1s", "--no-progress", "-o", e.out)
			},
			// 15 sends at 50/s, then 30 at 100/s: the 25th is in the second probe.
			when: func(t *testing.T, e *faultEnv) func(string) bool {
				return func(string) bool { return e.hits.Load() >= 25 }
			},
			stdout: []string{"search interrupted before it ended: no conclusion"},
			notOut: []string{"every rate tried met", "raise --max", "\nknee for", "no rate met"},
			check: func(t *testing.T, doc *result.Document, stdout string) {
				// A busy machine may fail a probe as the generator's, measured again; a rate
				// that passed is named, and only as met before the interruption.
				if _, trace, _ := strings.Cut(stdout, "\nsearch:\n"); strings.Contains(trace, " pass\n") &&
					!strings.Contains(stdout, "  met before the interruption: ") {
					t.Errorf("a probe passed, and the verdict does not name it as met before the interruption:\n%s", stdout)
				}
				if n := len(doc.Runs); n < 1 || n > 2 || doc.Runs[0].Partial {
					t.Errorf("%d runs, the first partial %t: want the finished probe and at most the cut one", n, n > 0 && doc.Runs[0].Partial)
				}
			}},
		{name: "capacity ramp mid-way",
			args: func(t *testing.T, e *faultEnv) []string {
				return args("capacity", "--target", "opa/server", "--url", e.url, "--workload", "nop", "--start", "50", "--max", "200",
					"--ramp", "5s", "--ramp-interval", "500ms", "--warmup", "0s", "--slo", "p99=1s", "--no-progress", "-o", e.out)
			},
			// About 60 sends are due in the ramp's first second: the stop falls in its second.
			when: func(t *testing.T, e *faultEnv) func(string) bool {
				return func(string) bool { return e.hits.Load() >= 60 }
			},
			stdout: []string{"ramp stopped before it ended: no conclusion"},
			notOut: []string{"ramp estimate", "confirmed", "no rate met", "every interval met"},
			check: func(t *testing.T, doc *result.Document, stdout string) {
				// The ramp alone, cut short: no probe confirms what it never estimated.
				if n := len(doc.Runs); n != 1 || !doc.Runs[0].Partial {
					t.Fatalf("%d runs, want the ramp alone, partial", n)
				}
				// Its intervals are kept, the ones after the stop due nothing.
				ivs := doc.Runs[0].Repetitions[0].Intervals
				if len(ivs) != 10 || ivs[len(ivs)-1].Due != 0 || ivs[0].Due == 0 {
					t.Errorf("intervals %+v: want 10, the first due sends, the last none", ivs)
				}
			}},
		{name: "replicas starting",
			args: func(t *testing.T, e *faultEnv) []string {
				return args("run", "--target", "opa/server", "--workload", "nop", "--replicas", "3", "--duration", "20s",
					"--warmup", "0s", "--workers", "3", "--no-progress", "-o", e.out)
			},
			// The second replica launched: the third has not.
			when: func(t *testing.T, e *faultEnv) func(string) bool {
				return func(string) bool { return len(children(t)) >= 2 }
			},
			check: func(t *testing.T, doc *result.Document, stdout string) {
				r := doc.Runs[0]
				if !strings.Contains(r.Error, "interrupted by interrupt while starting opa/server") || strings.Contains(r.Error, "context canceled") {
					t.Errorf("run error %q: want it to say it was interrupted while starting, in those words", r.Error)
				}
				if len(r.SUT.Replicas) < 2 {
					t.Fatalf("replicas %+v: want those launched recorded", r.SUT.Replicas)
				}
				for _, rep := range r.SUT.Replicas {
					if rep.PID == 0 {
						continue // not launched
					}
					if err := syscall.Kill(rep.PID, 0); !errors.Is(err, syscall.ESRCH) {
						t.Errorf("replica %d, pid %d, still exists after the command returned (kill 0: %v)", rep.Index, rep.PID, err)
					}
				}
			}},
		{name: "a sweep's second step, in its warm-up",
			args: func(t *testing.T, e *faultEnv) []string {
				setProgressEvery(t, 10*time.Millisecond)
				return args("run", "--target", "opa/server", "--url", e.url, "--workload", "nop", "--workers", "1,2",
					"--duration", "300ms", "--warmup", "3s", "-o", e.out)
			},
			when: func(t *testing.T, e *faultEnv) func(string) bool {
				return func(stderr string) bool { return strings.Contains(stderr, "[2/2] nop on opa/server, rep 1/1, warm-up") }
			},
			check: func(t *testing.T, doc *result.Document, stdout string) {
				if len(doc.Runs) != 1 || doc.Runs[0].Partial || doc.Runs[0].Load.Workers != 1 {
					t.Errorf("want the first step whole and the second, which measured nothing, left out: %+v", doc.Runs)
				}
			}},
		{name: "a sweep's second step, measuring",
			args: func(t *testing.T, e *faultEnv) []string {
				setProgressEvery(t, 10*time.Millisecond)
				return args("run", "--target", "opa/server", "--url", e.url, "--workload", "nop", "--workers", "1,2",
					"--duration", "400ms", "--warmup", "0s", "-o", e.out)
			},
			when: func(t *testing.T, e *faultEnv) func(string) bool {
				return func(stderr string) bool {
					return strings.Contains(stderr, "[2/2] nop on opa/server, rep 1/1, measuring")
				}
			},
			check: func(t *testing.T, doc *result.Document, stdout string) {
				if len(doc.Runs) != 2 || doc.Runs[0].Partial || !doc.Runs[1].Partial {
					t.Errorf("want the first step whole and the second partial: %+v", doc.Runs)
				}
			}},
		{name: "a warm-up, before anything was measured", noResult: true,
			args: func(t *testing.T, e *faultEnv) []string {
				setProgressEvery(t, 10*time.Millisecond)
				return args("run", "--target", "opa/server", "--url", e.url, "--workload", "nop", "--duration", "1s", "--warmup", "20s", "-o", e.out)
			},
			when: func(t *testing.T, e *faultEnv) func(string) bool {
				return func(stderr string) bool { return strings.Contains(stderr, "warm-up") }
			}},
		{name: "calibrate",
			args: func(t *testing.T, e *faultEnv) []string {
				return args("calibrate", "--duration", "20s", "--rate", "500", "--workers", "2", "-o", e.out)
			},
			// The trivial server started, and the closed-loop step measuring after its 1 s warm-up.
			when: func(t *testing.T, e *faultEnv) func(string) bool {
				return after(2500*time.Millisecond, func(string) bool { return len(children(t)) >= 1 })
			},
			stdout: []string{"closed loop with 2 workers: cut short (interrupted by interrupt), no ceiling or verdict drawn"},
			notOut: []string{"open loop at", "ceiling with"}},
		{name: "profile", noResult: true,
			args: func(t *testing.T, e *faultEnv) []string {
				return args("profile", "--workload", "rbac", "--rounds", "100000")
			},
			when: func(t *testing.T, e *faultEnv) func(string) bool {
				return after(300*time.Millisecond, func(string) bool { return true })
			},
			notOut: []string{"%"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newFaultEnv(t)
			cmdArgs := tc.args(t, e)
			code, stdout, stderr := interruptWhen(t, tc.when(t, e), cmdArgs...)
			if code != exitInterrupted {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, exitInterrupted, stdout, stderr)
			}
			if !strings.Contains(stderr, "authzbench: interrupted by interrupt") || strings.Contains(stderr, "context canceled") {
				t.Errorf("stderr does not end saying it was interrupted, in those words:\n%s", stderr)
			}
			for _, w := range tc.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tc.notOut {
				if strings.Contains(stdout, w) {
					t.Errorf("stdout has %q:\n%s", w, stdout)
				}
			}
			deadline := time.Now().Add(5 * time.Second)
			for left := children(t); len(left) > 0; left = children(t) {
				if time.Now().After(deadline) {
					t.Errorf("processes %v the command started are left after it returned", left)
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if tc.noResult {
				if _, err := os.Stat(e.out); err == nil {
					t.Errorf("nothing was measured, yet a result file")
				}
				// The interrupt said it would write the partial result: a run says there is none.
				if cmdArgs[0] == "run" && !strings.Contains(stderr, "nothing was measured before the run stopped: no result written") {
					t.Errorf("stderr does not say no result was written:\n%s", stderr)
				}
				return
			}
			doc := readResult(t, e.out)
			if !doc.Interrupted || doc.StopReason != "interrupted by interrupt" {
				t.Errorf("result: interrupted %t, stop reason %q; want it marked interrupted by interrupt", doc.Interrupted, doc.StopReason)
			}
			if tc.check != nil {
				tc.check(t, doc, stdout)
			}
		})
	}
}
