package sut

import (
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
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	p.Stop(200 * time.Millisecond)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("stop took %s", took)
	}
}

func TestEarlyExitIsReportedWithItsOutput(t *testing.T) {
	p, err := Start("failing server", exec.Command("sh", "-c", "echo 'listen tcp: address already in use' >&2; exit 1"))
	if err != nil {
		t.Fatal(err)
	}
	err = WaitHealthy(context.Background(), "http://127.0.0.1:1/health", p, 10*time.Second)
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
	err = WaitHealthy(context.Background(), "http://127.0.0.1:1/health", p, 10*time.Second)
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

// A process that burns one core is measured at about one core.
func TestSamplerMeasuresABusyProcess(t *testing.T) {
	p, err := Start("spinner", exec.Command("sh", "-c", "while :; do :; done"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	s := StartSampler(p.PID(), 100*time.Millisecond)
	time.Sleep(1500 * time.Millisecond)
	samples := s.Stop()
	r, ok := Summarise(samples, time.Time{}, time.Now())
	if !ok {
		t.Fatalf("no summary from %d samples", len(samples))
	}
	t.Logf("%+v", r)
	if r.CPUCoresMean < 0.5 || r.CPUCoresMean > 1.2 || r.RSSMaxMB <= 0 || r.CPUCoresMax < r.CPUCoresMean {
		t.Errorf("a one-core spinner measured %+v", r)
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
	var cpus []int
	for range 50 { // until the wrapper has exec'd the program
		time.Sleep(20 * time.Millisecond)
		comm, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.PID()), "comm"))
		if strings.TrimSpace(string(comm)) == "sleep" {
			cpus, err = Affinity(p.PID())
			break
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
