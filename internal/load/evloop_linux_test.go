package load

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/httpload"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
)

// The event loop (evloop_linux.go) against a fake HTTP/1.1 server with known behaviour, in a
// process of its own as a real server is: a fixed service time, answers in two pieces, a
// stall, kept-alive connections it closes, requests it never answers. The deciders fail every
// Decide, so a run the goroutine engine served instead fails too.

// fakeHTTP is how the fake server behaves; it travels to the child process as arguments.
type fakeHTTP struct {
	service  time.Duration // before each answer
	pieceGap time.Duration // >0: the answer goes out in two pieces this far apart
	// >0: every dropEvery-th request is read, then its connection closed unanswered, if the
	// connection carried a request before (as a server closing idle or worn connections drops
	// only kept-alive ones): a request resent on a new connection is never dropped again.
	dropEvery int
	hangEvery int // >0: every hangEvery-th request is never answered
	stallAt   int // >0: from request stallAt on, answers wait until stallFor after it arrived
	stallFor  time.Duration
}

func (f fakeHTTP) args() []string {
	return []string{"fake-http", f.service.String(), f.pieceGap.String(), strconv.Itoa(f.dropEvery), strconv.Itoa(f.hangEvery),
		strconv.Itoa(f.stallAt), f.stallFor.String()}
}

// serveFakeHTTPFromArgs runs the fake server when the test binary is started as one.
func serveFakeHTTPFromArgs(args []string) {
	var f fakeHTTP
	var err error
	parseDuration := func(s string) time.Duration {
		d, e := time.ParseDuration(s)
		err = errors.Join(err, e)
		return d
	}
	atoi := func(s string) int {
		n, e := strconv.Atoi(s)
		err = errors.Join(err, e)
		return n
	}
	f.service, f.pieceGap, f.dropEvery, f.hangEvery = parseDuration(args[0]), parseDuration(args[1]), atoi(args[2]), atoi(args[3])
	f.stallAt, f.stallFor = atoi(args[4]), parseDuration(args[5])
	if err != nil {
		os.Exit(2)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(1)
	}
	fmt.Println(l.Addr())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	var requests atomic.Int64
	var stallUntil atomic.Int64
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go f.serve(c, &requests, &stallUntil)
	}
}

func (f fakeHTTP) serve(c net.Conn, requests, stallUntil *atomic.Int64) {
	defer c.Close()
	r := bufio.NewReader(c)
	for onConn := 1; ; onConn++ {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		// "GET /k HTTP/1.1": input k; the headers up to the blank line (no body).
		input, _ := strconv.Atoi(strings.TrimPrefix(strings.Fields(line)[1], "/"))
		for {
			h, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if h == "\r\n" {
				break
			}
		}
		n := int(requests.Add(1))
		switch {
		case f.dropEvery > 0 && n%f.dropEvery == 0 && onConn > 1:
			return
		case f.hangEvery > 0 && n%f.hangEvery == 0:
			io.Copy(io.Discard, c)
			return
		}
		if f.stallAt > 0 && n == f.stallAt {
			stallUntil.Store(time.Now().Add(f.stallFor).UnixNano())
		}
		if until := stallUntil.Load(); until > 0 {
			time.Sleep(time.Until(time.Unix(0, until)))
		}
		if f.service > 0 {
			ts := syscall.NsecToTimespec(int64(f.service))
			for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
			}
		}
		body := strconv.FormatBool(input%2 == 0)
		answer := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		if f.pieceGap > 0 {
			half := len(answer) / 2
			if _, err := c.Write([]byte(answer[:half])); err != nil {
				return
			}
			time.Sleep(f.pieceGap)
			answer = answer[half:]
		}
		if _, err := c.Write([]byte(answer)); err != nil {
			return
		}
	}
}

// startFakeHTTP runs the fake server in a child process and returns its address.
func startFakeHTTP(t *testing.T, f fakeHTTP) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], f.args()...)
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
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("fake server: %v", err)
	}
	return strings.TrimSpace(line)
}

// plainTarget drives the fake server through the event loop: its deciders are kinds.PlainHTTP.
type plainTarget struct {
	fakeTarget
	addr string
	// sent counts the sends of each input, across every connection (the loop asks for each
	// send's request once).
	mu   sync.Mutex
	sent map[int]int
}

func (p *plainTarget) Worker() kinds.Decider { return &plainDecider{p: p} }

type plainDecider struct{ p *plainTarget }

func (d *plainDecider) Decide(context.Context, int) verify.Outcome {
	return verify.Outcome{Kind: verify.TransportFailure, Err: errors.New("Decide called: the event loop did not serve this run")}
}

func (d *plainDecider) PlainHTTP() (kinds.HTTPExchange, bool) {
	e := httpload.Endpoint{Addr: d.p.addr, Host: d.p.addr, KeepAlive: true}
	return kinds.HTTPExchange{Endpoint: e,
		Request: func(i int) []byte {
			d.p.mu.Lock()
			if d.p.sent != nil {
				d.p.sent[i]++
			}
			d.p.mu.Unlock()
			return httpload.EncodeRequest(e, "GET", "/"+strconv.Itoa(i), nil, nil)
		},
		Judge: func(status int, body []byte) verify.Outcome {
			if status != 200 {
				return verify.Outcome{Kind: verify.HTTPStatus, Status: status}
			}
			return verify.Outcome{Kind: verify.Decided, Allow: string(body) == "true"}
		}}, true
}

// runPlain runs spec against the fake server through the event loop and checks what every run
// must hold: served by the loop, every send due accounted for once.
func runPlain(t *testing.T, spec Spec, f fakeHTTP) Outcome {
	t.Helper()
	p := &plainTarget{addr: startFakeHTTP(t, f)}
	out := spec.Run(context.Background(), p, inputs(10), nil)
	if out.Stopped != nil {
		t.Fatalf("stopped: %v", out.Stopped)
	}
	sc := out.Schedule
	if out.Recorder.Requests() != uint64(sc.Intended) || sc.Sent+sc.Unsent != sc.Intended {
		t.Errorf("%d recorded, %d sent, %d unsent, for %d sends due", out.Recorder.Requests(), sc.Sent, sc.Unsent, sc.Intended)
	}
	t.Logf("schedule %+v, counts %v, p50 %s, uncorrected p50 %s, reconnects %d", *sc, out.Recorder.Counts,
		time.Duration(out.Recorder.OK.ValueAtQuantile(50)), time.Duration(out.Recorder.Uncorrected.ValueAtQuantile(50)), out.Recorder.Reconnects)
	return out
}

// A 2 ms server at 400/s: every answer right, latency from the intended time at least the
// service time (the kernel's arrival stamps never place an answer before it was possible),
// and near it; at one scheduler slot as at more.
func TestEventLoopKnownServiceTime(t *testing.T) {
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprintf("GOMAXPROCS %d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			out := runPlain(t, Spec{Rate: 400, Connections: 8, Duration: 1500 * time.Millisecond, Warmup: 300 * time.Millisecond, Timeout: 2 * time.Second},
				fakeHTTP{service: 2 * time.Millisecond})
			if ok := out.Recorder.Counts[verify.OK]; ok != 600 {
				t.Errorf("%d ok of 600 sends due", ok)
			}
			p50, uncorrected := time.Duration(out.Recorder.OK.ValueAtQuantile(50)), time.Duration(out.Recorder.Uncorrected.ValueAtQuantile(50))
			if uncorrected < 2*time.Millisecond || p50 < uncorrected {
				t.Errorf("p50 %s, from the actual send %s, for a 2 ms service time: want at least 2 ms, from the intended time no less", p50, uncorrected)
			}
			// Wide: a busy machine delays the server's answers, never the stamps' account of them.
			if p50 > 20*time.Millisecond {
				t.Errorf("p50 %s for a 2 ms service time", p50)
			}
		})
	}
}

// An answer that comes in pieces is read whole: the loop parses what came and waits for more.
func TestEventLoopAnswerInPieces(t *testing.T) {
	out := runPlain(t, Spec{Rate: 200, Connections: 8, Duration: time.Second, Timeout: 2 * time.Second}, fakeHTTP{pieceGap: 3 * time.Millisecond})
	if ok := out.Recorder.Counts[verify.OK]; ok != 200 {
		t.Errorf("%d ok of 200 sends due", ok)
	}
	if p50 := time.Duration(out.Recorder.OK.ValueAtQuantile(50)); p50 < 3*time.Millisecond {
		t.Errorf("p50 %s: the answer's first piece was taken for the whole (its second came 3 ms later)", p50)
	}
}

// A server that stalls for 500 ms: every request due during the stall is charged its wait from
// its intended time (coordinated omission), and the sends that found every connection busy are
// counted as waited, not as the generator's lateness.
func TestEventLoopSeesAServerStall(t *testing.T) {
	out := runPlain(t, Spec{Rate: 200, Connections: 4, Duration: 2 * time.Second, Timeout: 2 * time.Second},
		fakeHTTP{service: time.Millisecond, stallAt: 100, stallFor: 500 * time.Millisecond})
	if ok := out.Recorder.Counts[verify.OK]; ok != 400 {
		t.Errorf("%d ok of 400 sends due", ok)
	}
	// 100 sends are due in the 500 ms: the first waits about 500 ms, the last a few; p95 (the
	// 20th slowest) is over 300 ms. Measured from the actual send, only 4 (one per connection)
	// waited long.
	if p95 := time.Duration(out.Recorder.OK.ValueAtQuantile(95)); p95 < 300*time.Millisecond {
		t.Errorf("p95 %s with a 500 ms stall in a quarter of the window", p95)
	}
	if w := out.Schedule.Waited(); w < 50 {
		t.Errorf("%d late sends waited for a connection, want most of the 100 due in the stall (%d were the generator's)", w, out.Schedule.GeneratorLate)
	}
}

// A server that closes a kept-alive connection after reading every 7th request, without an
// answer: each such request goes out once more on a new connection and is answered, counted
// as a reconnect; none is lost or charged as an error.
func TestEventLoopResendsOnAKeepAliveDrop(t *testing.T) {
	out := runPlain(t, Spec{Rate: 300, Connections: 4, Duration: time.Second, Timeout: 2 * time.Second}, fakeHTTP{dropEvery: 7})
	if ok := out.Recorder.Counts[verify.OK]; ok != 300 {
		t.Errorf("%d ok of 300 sends due (errors: %v)", ok, out.Recorder.Counts)
	}
	// About 300/6 requests were dropped (each resend is a request too); wide margins.
	if r := out.Recorder.Reconnects; r < 30 || r > 60 {
		t.Errorf("%d reconnects, want about 50", r)
	}
}

// A request the server never answers is charged as a timeout at --timeout, its connection is
// closed, and the next send on it dials again: every other request is answered.
func TestEventLoopTimesOutAStuckRequest(t *testing.T) {
	out := runPlain(t, Spec{Rate: 200, Connections: 8, Duration: time.Second, Timeout: 100 * time.Millisecond}, fakeHTTP{hangEvery: 20})
	timedOut, ok := out.Recorder.Counts[verify.Timeout], out.Recorder.Counts[verify.OK]
	if timedOut != 10 || ok != 190 {
		t.Errorf("%d timed out and %d ok of 200, want 10 and 190 (every 20th never answered)", timedOut, ok)
	}
	if max := time.Duration(out.Recorder.Errors.Max()); max < 100*time.Millisecond || max > time.Second {
		t.Errorf("slowest error %s, want about the 100 ms timeout", max)
	}
}

// Two generators, each given one segment of a schedule, send every send once through their
// loops, whichever loop (GOMAXPROCS 2: two of them) holds it.
func TestEventLoopSegmentsSendTheScheduleOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	addr := startFakeHTTP(t, fakeHTTP{})
	p := &plainTarget{addr: addr, sent: map[int]int{}}
	const n = 2
	for i := range n {
		spec := Spec{Rate: 400, Connections: 4, Warmup: 250 * time.Millisecond, Duration: 500 * time.Millisecond, Timeout: 2 * time.Second,
			Segment: Segment{Index: i + 1, Count: n}}
		out := spec.Run(context.Background(), p, inputs(1000), nil)
		if out.Stopped != nil {
			t.Fatal(out.Stopped)
		}
		if sc := out.Schedule; sc.Intended != 100 || out.Recorder.Counts[verify.OK] != 100 {
			t.Errorf("segment %d/%d: %d due, %d ok; want 100", i+1, n, sc.Intended, out.Recorder.Counts[verify.OK])
		}
	}
	for k := range 300 {
		if p.sent[k] != 1 {
			t.Errorf("send %d went out %d times, want once", k, p.sent[k])
		}
	}
	if len(p.sent) != 300 {
		t.Errorf("%d inputs sent, want sends 0 to 299 only", len(p.sent))
	}
}

// A server that is not there: every connect fails, the connections back off, and the run ends
// as a dead server ends it (WatchFailing), with what it measured kept.
func TestEventLoopEndsAgainstNoServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p := &plainTarget{addr: addr}
	begin := time.Now()
	out := Spec{Rate: 100, Connections: 2, Duration: 20 * time.Second, Timeout: 500 * time.Millisecond}.Run(context.Background(), p, inputs(10), nil)
	if out.Stopped == nil {
		t.Fatalf("not stopped after %s against no server: %+v", time.Since(begin), *out.Schedule)
	}
	// WatchFailing's silence is 2 s at this timeout.
	if took := time.Since(begin); took > 8*time.Second {
		t.Errorf("took %s to give up on a server that is not there", took)
	}
	if out.Recorder.Counts[verify.Transport] == 0 {
		t.Errorf("no transport failures recorded: %v", out.Recorder.Counts)
	}
	t.Logf("stopped after %s: %v", time.Since(begin), out.Stopped)
}

// Asked to coalesce (100 µs here), a loop wakes once for the sends due within that of its next
// one, at the last one's time (none goes out before it is due), and no more of them than it has
// free connections; where sends are further apart, it wakes for each. Not asked, it wakes for
// each send at its own time, however close they are.
func TestEventLoopCoalescesSendsDueTogether(t *testing.T) {
	for _, c := range []struct {
		rate          float64
		loops, free   int
		next          int64
		wantDueOfSend int64 // the send whose due time the loop wakes at
		coalesce      time.Duration
	}{
		{rate: 20000, loops: 1, free: 8, next: 0, wantDueOfSend: 0, coalesce: -1}, // not asked: each at its time
		{rate: 1e6, loops: 1, free: 200, next: 5, wantDueOfSend: 5, coalesce: -1},
		{rate: 20000, loops: 1, free: 8, next: 0, wantDueOfSend: 2},  // 0, 50 and 100 µs
		{rate: 20000, loops: 1, free: 8, next: 5, wantDueOfSend: 7},  // 250, 300 and 350 µs
		{rate: 20000, loops: 1, free: 2, next: 0, wantDueOfSend: 1},  // two connections free
		{rate: 20000, loops: 2, free: 8, next: 1, wantDueOfSend: 3},  // this loop's sends: 1 and 3 (50 and 150 µs)
		{rate: 10000, loops: 1, free: 8, next: 4, wantDueOfSend: 5},  // 400 and 500 µs
		{rate: 5000, loops: 1, free: 8, next: 0, wantDueOfSend: 0},   // 200 µs apart: each alone
		{rate: 1e6, loops: 1, free: 200, next: 0, wantDueOfSend: 63}, // at most maxCoalesced
	} {
		pacer, err := ConstantRate(c.rate)
		if err != nil {
			t.Fatal(err)
		}
		coalesce := 100 * time.Microsecond
		if c.coalesce < 0 {
			coalesce = 0
		}
		l := &eventLoop{pl: newPlan(pacer, Segment{}), next: c.next, stride: int64(c.loops), pastLast: 1 << 40,
			free: make([]*loopConn, c.free), coalesce: coalesce}
		if got, want := l.sendWake(), l.pl.due(c.wantDueOfSend); got != want {
			t.Errorf("%.0f/s, %d loops, %d free, next send %d: wakes at %s, want %s (send %d's time)", c.rate, c.loops, c.free, c.next, got, want, c.wantDueOfSend)
		}
	}
}

// The loop counts the measured sends its coalesce window sent at a wake-up after another, so a
// run can tell the user that a window sent none together. At 5,000/s on one loop, a 500 µs
// window sends them in threes; at 200/s (sends 5 ms apart) a 100 µs one has nothing to send
// together: sends caught up after a late wake-up on a busy machine are due 5 ms apart, and are
// not counted. Never asked, a loop sends none together. The 5,000/s bound is wide (a quarter,
// where a quiet machine sends about two thirds together): on a loaded one (a full `go test ./...`
// on two cores) late wake-ups were seen sending 43 % together, still far from none.
func TestEventLoopCountsSendsSentTogether(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, c := range []struct {
		rate     float64
		coalesce time.Duration
		atLeast  float64 // of the sends, went out after another at their wake-up
		atMost   float64
	}{
		{rate: 5000, coalesce: 500 * time.Microsecond, atLeast: 0.25, atMost: 1},
		{rate: 200, coalesce: 100 * time.Microsecond, atLeast: 0, atMost: 0},
		{rate: 200, atLeast: 0, atMost: 0},
	} {
		t.Run(fmt.Sprintf("%.0f per second, window %s", c.rate, c.coalesce), func(t *testing.T) {
			out := runPlain(t, Spec{Rate: c.rate, Connections: 16, Duration: 600 * time.Millisecond, Timeout: 2 * time.Second, Coalesce: c.coalesce},
				fakeHTTP{})
			sc := out.Schedule
			if sc.Sender != SenderEventLoop {
				t.Fatalf("sent by %s: the event loop was to send", sc.Sender)
			}
			share := float64(sc.Together) / float64(max(1, sc.Sent))
			if share < c.atLeast || share > c.atMost {
				t.Errorf("%d of %d sends went out after another at their wake-up (%.2f): want %.2f to %.2f", sc.Together, sc.Sent, share, c.atLeast, c.atMost)
			}
		})
	}
}

// An answer's kernel stamp (wall clock) is placed on the loop's clock by the pair of readings
// taken together at the clock's last reading, never before the send it answers nor after that
// reading; an answer with no stamp arrived at that reading.
func TestEventLoopPlacesArrivalStamps(t *testing.T) {
	l := &eventLoop{wall: 1_000_000, wallAt: 5_000}
	for _, c := range []struct {
		stamp      int64
		sent, want time.Duration
	}{
		{stamp: 999_000, sent: 1_000, want: 4_000},   // 1 µs before the reading
		{stamp: 990_000, sent: 1_000, want: 1_000},   // stamped before the send: at the send
		{stamp: 1_000_500, sent: 1_000, want: 5_000}, // after the reading: at the reading
		{stamp: 0, sent: 1_000, want: 5_000},         // no stamp
	} {
		if got := l.arrival(c.stamp, c.sent); got != c.want {
			t.Errorf("stamp %d, sent %s: arrival %s, want %s", c.stamp, c.sent, got, c.want)
		}
	}
}
