package load

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
)

// TestMain lets this test binary serve as a fake server in a process of its own
// ("<self> fake-server <socket> <service time>", or an HTTP one: "<self> fake-http ...",
// evloop_linux_test.go), so the generator under test keeps its
// scheduler to itself, as it does against a real server.
func TestMain(m *testing.M) {
	if len(os.Args) == 8 && os.Args[1] == "fake-http" {
		serveFakeHTTPFromArgs(os.Args[2:])
		os.Exit(0)
	}
	if len(os.Args) > 3 && os.Args[1] == "fake-server" {
		service, err := time.ParseDuration(os.Args[3])
		if err != nil {
			os.Exit(2)
		}
		serveFake(os.Args[2], service)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveFake answers each byte it reads with the same byte after the service time, one
// connection per goroutine, until its standard input closes (the test is over). It listens on
// a Unix socket: replies reach the generator through the runtime's network poller as over TCP,
// for less CPU, which on a busy 2-core machine the generator is short of.
func serveFake(socket string, service time.Duration) {
	l, err := net.Listen("unix", socket)
	if err != nil {
		os.Exit(1)
	}
	fmt.Println(l.Addr())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			b := make([]byte, 1)
			for {
				if _, err := c.Read(b); err != nil {
					return
				}
				ts := syscall.NsecToTimespec(int64(service))
				for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
				}
				if _, err := c.Write(b); err != nil {
					return
				}
			}
		}()
	}
}

// socketTarget drives a fake server over a socket, one connection per worker: replies come
// back through the Go runtime's network poller, as a real server's do.
type socketTarget struct {
	fakeTarget
	addr string
}

func (f *socketTarget) Worker() kinds.Decider {
	c, err := net.Dial("unix", f.addr)
	return &socketDecider{conn: c, err: err}
}

type socketDecider struct {
	conn net.Conn
	err  error
	b    [1]byte
}

func (d *socketDecider) Close() {
	if d.conn != nil {
		d.conn.Close()
	}
}

func (d *socketDecider) Decide(ctx context.Context, i int) verify.Outcome {
	if d.err != nil {
		return verify.Outcome{Kind: verify.TransportFailure, Err: d.err}
	}
	d.b[0] = byte(i % 2)
	if _, err := d.conn.Write(d.b[:]); err != nil {
		return verify.Outcome{Kind: verify.TransportFailure, Err: err}
	}
	if _, err := io.ReadFull(d.conn, d.b[:]); err != nil {
		return verify.Outcome{Kind: verify.TransportFailure, Err: err}
	}
	return verify.Outcome{Kind: verify.Decided, Allow: d.b[0] == 0}
}

// startFakeServer runs the fake server in a child process and returns its address.
func startFakeServer(t *testing.T, service time.Duration) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "fake-server", filepath.Join(t.TempDir(), "fake.sock"), service.String())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { stdin.Close(); cmd.Wait() }) })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("fake server: %v", err)
	}
	return strings.TrimSpace(line)
}

// With the generator on one scheduler slot (GOMAXPROCS 1: --generator-procs 1, taskset to one
// CPU, a one-CPU container) the pacer must still let the connections read their replies as
// they come. Against a server answering in about 70 µs the median is a fraction of a
// millisecond; a pacer that holds the only slot while it waits for the next send leaves
// replies unread until every connection is busy, and the median reads up to 64/rate (12.8 ms
// at 5,000/s, 6.4 ms at 10,000/s; 1.4 to 490 ms on a busy 2-core machine). A machine too busy
// to give the generator its one CPU spoils a run either way (with two CPU burners beside it the
// fixed pacer read 1.2 to 64 ms), so each rate gets up to three runs, each preceded by a check
// of how much of a CPU one thread of this process gets; it must reach a median under 1 ms in
// one of them. Runs where that thread got under 70 % of a CPU are not judged on latency (the
// machine, not the pacer, is then what they measure), only on their accounting; if every run
// was starved so, the test says so and judges nothing more. Both engines: the goroutines
// against a fake server over a Unix socket, the event loop against a fake HTTP/1.1 server with
// the same service time (the loop reads its replies when it wakes to send, timed by the
// kernel's arrival stamps, or as they come when no send is due soon).
func TestOpenLoopOneSchedulerSlot(t *testing.T) {
	if testing.Short() {
		t.Skip("several seconds of load")
	}
	targets := map[string]kinds.Target{
		"goroutines": &socketTarget{addr: startFakeServer(t, 70*time.Microsecond)},
		"event loop": &plainTarget{addr: startFakeHTTP(t, fakeHTTP{service: 70 * time.Microsecond})},
	}
	for _, engine := range []string{"goroutines", "event loop"} {
		for _, rate := range []float64{5000, 10000} {
			t.Run(fmt.Sprintf("%s %.0f/s", engine, rate), func(t *testing.T) { oneSchedulerSlot(t, targets[engine], rate) })
		}
	}
}

func oneSchedulerSlot(t *testing.T, target kinds.Target, rate float64) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var medians []time.Duration // of the runs judged on latency
	for range 3 {
		share := oneThreadCPUShare(t, 100*time.Millisecond)
		out := Spec{Rate: rate, Connections: 64, Duration: 1500 * time.Millisecond, Warmup: 300 * time.Millisecond}.
			Run(context.Background(), target, inputs(10), nil)
		if out.Stopped != nil {
			t.Fatal(out.Stopped)
		}
		if n := out.Recorder.Counts[verify.Transport]; n != 0 {
			t.Fatalf("%d transport errors", n)
		}
		if sc := out.Schedule; out.Recorder.Requests() != uint64(sc.Intended) {
			t.Fatalf("%d requests recorded for %d sends due", out.Recorder.Requests(), sc.Intended)
		}
		p50 := time.Duration(out.Recorder.OK.ValueAtQuantile(50))
		t.Logf("p50 %s, p99 %s, schedule %+v, generator CPU %s in %s, one thread's CPU share before %.2f", p50,
			time.Duration(out.Recorder.OK.ValueAtQuantile(99)), *out.Schedule, out.UsageEnd.CPU-out.UsageStart.CPU, out.Elapsed, share)
		if p50 < time.Millisecond {
			return
		}
		if share >= 0.7 {
			medians = append(medians, p50)
		}
	}
	if len(medians) == 0 {
		t.Logf("every run found the machine too busy to give the generator its CPU: latency not judged")
		return
	}
	t.Errorf("p50 %v at %.0f/s against a 70 µs server with the generator given its CPU; the replies waited for the pacer (64/rate is %s)",
		medians, rate, time.Duration(64*float64(time.Second)/rate))
}

// oneThreadCPUShare spins one locked thread for wall and returns the share of a CPU the kernel
// gave it: near 1 on a machine with a CPU to spare, about 0.5 with two CPU burners on two cores.
func oneThreadCPUShare(t *testing.T, wall time.Duration) float64 {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	threadCPU := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
			t.Fatalf("getrusage: %v", err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	cpu0, start := threadCPU(), time.Now()
	for time.Since(start) < wall {
	}
	return float64(threadCPU()-cpu0) / float64(time.Since(start))
}
