package sut

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/pacing"
)

func TestStopEndsTheProcess(t *testing.T) {
	p, err := Start("sleeper", exec.Command("sleep", "60"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	default:
		t.Fatal("Stop returned before the process exited")
	}
	if err := syscall.Kill(p.PID(), 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("pid %d still exists: %v", p.PID(), err)
	}
	if err := p.Stop(time.Second); err != nil {
		t.Errorf("a second Stop: %v", err)
	}
}

func TestStopKillsWhatIgnoresTerm(t *testing.T) {
	p, err := Start("stubborn", exec.Command("sh", "-c", "trap '' TERM; echo ready; sleep 60"))
	if err != nil {
		t.Fatal(err)
	}
	// Until the trap is set: a fixed sleep can be too short on a busy machine, and a TERM that
	// arrives first ends the shell and leaves the KILL path untested.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.Tail(), "ready"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the shell had not set its trap after 10 s (output %q)", p.Tail())
		}
	}
	start := time.Now()
	p.Stop(200 * time.Millisecond)
	// Never sooner than the grace: the shell ignores TERM, so only the KILL after it ends it.
	if took := time.Since(start); took < 200*time.Millisecond || took > 5*time.Second {
		t.Errorf("stop took %s, want the 200ms grace and then the KILL", took)
	}
	if err := syscall.Kill(p.PID(), 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("pid %d still exists after Stop: %v", p.PID(), err)
	}
}

func TestEarlyExitIsReportedWithItsOutput(t *testing.T) {
	p, err := Start("failing server", exec.Command("sh", "-c", "echo 'listen tcp: address already in use' >&2; exit 1"))
	if err != nil {
		t.Fatal(err)
	}
	err = WaitReady(context.Background(), HTTPProbe{URL: "http://127.0.0.1:1/health"}, p, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "address already in use") || !strings.Contains(err.Error(), "failing server") {
		t.Errorf("err = %v, want the server's last words", err)
	}
}

// A server that rejects its arguments says so first and then prints its usage, longer than the
// output kept: the error names the first error line, and none of the usage.
func TestStartErrorIsTheFirstErrorLine(t *testing.T) {
	script := `echo 'Error: unknown flag: --bogus' >&2; i=0; while [ $i -lt 400 ]; do echo "  --flag$i string   usage text of a flag"; i=$((i+1)); done; exit 1`
	p, err := Start("opa server", exec.Command("sh", "-c", script))
	if err != nil {
		t.Fatal(err)
	}
	err = WaitReady(context.Background(), HTTPProbe{URL: "http://127.0.0.1:1/health"}, p, 10*time.Second)
	var se *StartError
	if !errors.As(err, &se) || se.FirstError != "Error: unknown flag: --bogus" || strings.Contains(err.Error(), "usage text") {
		t.Errorf("err = %v, want a StartError with the first error line alone", err)
	}
}

func TestTailKeepsTheEnd(t *testing.T) {
	tl := newTail(10)
	tl.Write([]byte("0123456789"))
	tl.Write([]byte("abc"))
	if got := tl.String(); got != "3456789abc" {
		t.Errorf("tail %q", got)
	}
}

func TestCheckFree(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if _, err := CheckFree(port); err == nil || !strings.Contains(err.Error(), "already in use") {
		t.Errorf("busy port: %v", err)
	}
	addr, err := FreeAddr()
	if err != nil || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Errorf("FreeAddr: %q %v", addr, err)
	}
}

// The sampler's CPU figure must match the kernel's own account of the same process over the same
// window. A fixed share of a core cannot be asked for: on a busy machine a spinner gets what the
// scheduler gives it (0.39 of a core has been seen beside two CPU burners). The spinner stops
// itself before it spins and is stopped again before the sampler's last sample, so it runs only
// between the first and the last sample, and its rusage once reaped (the kernel's count, read
// apart from the sampler's /proc ticks) is the truth for that window.
func TestSamplerMeasuresABusyProcess(t *testing.T) {
	p, err := Start("spinner", exec.Command("sh", "-c", "kill -STOP $$; while :; do :; done"))
	if err != nil {
		t.Fatal(err)
	}
	pid := p.PID()
	defer func() { _ = syscall.Kill(pid, syscall.SIGKILL); <-p.Exited() }()
	waitStopped(t, pid)
	s := StartSampler(pid, 50*time.Millisecond)
	for deadline := time.Now().Add(10 * time.Second); samplesSoFar(s) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the sampler took no sample of the stopped spinner in 10 s")
		}
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// Spin until the spinner has had about 0.4 s of CPU, however little of a core the machine
	// gives it, or 10 s have passed. /proc's ticks serve only as the stop rule here.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		if _, ticks, _, ok := readStat(pid); ok && ticks >= 40 {
			break
		}
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, pid)
	samples := s.Stop() // its last sample is taken now, with the spinner stopped
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.Exited()
	kernelCPU := p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()

	r, ok := Summarise(samples, time.Time{}, time.Now())
	if !ok {
		t.Fatalf("no summary from %d samples", len(samples))
	}
	window := samples[len(samples)-1].At.Sub(samples[0].At)
	sampledCPU := time.Duration(r.CPUCoresMean * float64(window))
	t.Logf("%+v over %v: sampled %v of CPU, kernel %v", r, window, sampledCPU, kernelCPU)
	// Below this the comparison says nothing: the tolerance would swallow a sampler reading 0.
	if kernelCPU < 100*time.Millisecond {
		t.Fatalf("the spinner had %v of CPU in %v: too little to compare", kernelCPU, window)
	}
	// /proc counts in 10 ms ticks, truncated, in two fields; the shell's start before it stops
	// itself is in the rusage only. Both are a few ticks; a sampler off by a factor is far out.
	tolerance := 30*time.Millisecond + kernelCPU/20
	if diff := sampledCPU - kernelCPU; diff > tolerance || -diff > tolerance {
		t.Errorf("sampler saw %v of CPU, the kernel counted %v (tolerance %v)", sampledCPU, kernelCPU, tolerance)
	}
	if r.Samples != len(samples) || r.RSSMaxMB <= 0 || r.CPUCoresMax < r.CPUCoresMean {
		t.Errorf("summary %+v of %d samples", r, len(samples))
	}
}

// samplesSoFar is how many samples s has taken, read under its lock.
func samplesSoFar(s *Sampler) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.samples)
}

// waitStopped waits until pid is in the stopped state, so it spends no CPU from then on.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && strings.HasPrefix(string(b[i+1:]), " T") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d did not stop in 10 s: %s", pid, b)
		}
	}
}

func TestTrivialServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go ServeTrivial(l)
	for i := range 3 {
		resp, err := http.Post("http://"+l.Addr().String()+"/v1/data/x", "application/json", strings.NewReader(`{"input":{}}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != `{"result":true}` {
			t.Errorf("request %d: %d %q", i, resp.StatusCode, b)
		}
	}
}

// The recording server counts every request, pipelined ones included, and once its listener is
// closed it returns, though a client still holds a connection open, so its record can be read.
func TestTrivialServerRecordsEveryArrival(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rec := pacing.NewRecorder(100)
	served := make(chan error, 1)
	go func() { served <- ServeTrivialRecording(l, rec) }()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := "POST /v1/data/x HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\n{\"input\":{}}"
	r := bufio.NewReader(c)
	for _, batch := range []int{1, 2, 3} { // 2 and 3 requests sent in one write: pipelined
		if _, err := io.WriteString(c, strings.Repeat(req, batch)); err != nil {
			t.Fatal(err)
		}
		for range batch {
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	l.Close()
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("the recording server did not return within 10 s of its listener closing, with a connection open")
	}
	if got := len(rec.Arrivals()); got != 6 || rec.Seen() != 6 {
		t.Errorf("recorded %d arrivals (seen %d), want 6", got, rec.Seen())
	}
}

func TestPinnedProcessRunsOnItsCPUs(t *testing.T) {
	cmd, err := Pinned(exec.Command("/bin/sleep", "5"), []int{0})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start("pinned sleeper", cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	// Until the wrapper has exec'd the program: a second can pass on a busy machine, so the
	// wait is long and a wrapper that never execs fails by name rather than as an empty set.
	var cpus []int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		comm, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.PID()), "comm"))
		if strings.TrimSpace(string(comm)) == "sleep" {
			cpus, err = Affinity(p.PID())
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pinning wrapper had not exec'd sleep after 10 s (comm %q)", comm)
		}
	}
	if err != nil || len(cpus) != 1 || cpus[0] != 0 {
		t.Errorf("affinity %v (%v), want [0]", cpus, err)
	}
}

func TestParseCPUs(t *testing.T) {
	if got, err := ParseCPUs("1,0-1"); err != nil || FormatCPUs(got) != "0,1" {
		t.Errorf("%v %v", got, err)
	}
	for _, bad := range []string{"", "a", "1-0", "-1", "0,99"} {
		if _, err := ParseCPUs(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
