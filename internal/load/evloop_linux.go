package load

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/authzbench/authzbench/internal/httpload"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// The event loop: the open loop for plain HTTP/1.1 keep-alive targets (kinds.PlainHTTP).
//
// The goroutine engine (open.go) costs two sleeps and two wake-ups of the generator's thread
// per send, each through the Go scheduler: the pacer wakes at the send's time and hands the
// send over a channel to a connection's goroutine, which writes and parks in the runtime's
// network poller until the answer wakes it. An event loop does the same work in one thread
// with no hand-off: it owns its connections' non-blocking sockets and one epoll instance, and
// waits in one system call for whichever comes first, the next send's time or an answer; then
// reads every answer that is ready, writes every send that is due, and waits again. A send
// costs a write, a read and its share of the waits, and no goroutine is woken for it.
//
// There is one loop per scheduler slot (GOMAXPROCS), each with its share of the connections
// (connection id % loops) and of the plan (the plan's sends j with j % loops == its number), so
// segments and shards stay exact: the plan is split, never renumbered.

// epollPwait2 is epoll_pwait2 (Linux 5.11): epoll_wait with a timeout in nanoseconds, where
// epoll_wait's is in milliseconds, too coarse for a send's time.
const sysEpollPwait2 = 441

// loopsSupported: the event loop runs where epoll_pwait2 answers; elsewhere the goroutines do.
var loopsSupported = probeEpollPwait2()

func probeEpollPwait2() bool {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return false
	}
	defer syscall.Close(ep)
	var events [1]syscall.EpollEvent
	var zero syscall.Timespec
	_, _, errno := syscall.Syscall6(sysEpollPwait2, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), 1,
		uintptr(unsafe.Pointer(&zero)), 0, 0)
	return errno == 0
}

// prSetTimerSlack is prctl's PR_SET_TIMERSLACK. The kernel lets a thread's timed waits end up
// to its timer slack late (50 us by default) to batch wake-ups; a loop waiting for a send's
// time sets its own thread's to 1 ns, so the wait ends when the send is due.
const prSetTimerSlack = 29

// connState is where a loop's connection is with its send.
type connState uint8

const (
	connIdle       connState = iota // free for the next send (its socket open or not)
	connConnecting                  // connecting, with a send to write once connected
	connSending                     // writing a request the socket did not take whole
	connAwaiting                    // the request written, its answer awaited
	connBackingOff                  // a connect failed: free again at backoffUntil
)

// loopConn is one connection of a loop, and the send it carries.
type loopConn struct {
	index    int
	sock     *httpload.Socket
	addr     syscall.Sockaddr
	x        kinds.HTTPExchange
	answers  httpload.Answers
	attempts *Attempts
	state    connState
	events   uint32 // what the loop's epoll waits for on the socket
	// gen numbers the connection's sockets, and tags their epoll events: an event found for a
	// socket closed since, in the same wait, is not the new socket's.
	gen uint32

	// The send in flight.
	due        dueSend
	input      int
	req        []byte
	written    int
	sent       time.Duration // when the send began (an offset from the start), a dial included
	deadline   time.Duration // sent + the timeout; 0: none
	reused     bool          // written on a connection an earlier request had used
	resent     bool          // already sent again once after its kept-alive connection closed
	reconnect  bool          // went out on a new connection because the server closed the last
	dialedAt   time.Duration
	connectNS  int64
	arrived    time.Duration // when the last bytes read arrived, by the kernel's stamp
	closedIdle bool          // the server closed the connection while it was idle

	failures     int // connects that failed in a row, for the backoff
	backoffUntil time.Duration
}

// quietHorizon: when the next send is due within it, the loop sleeps until then without waking
// for answers, and reads those that came when it wakes to send: one wake-up per send instead
// of two, which is most of a send's CPU (the kernel putting the thread to sleep and waking
// it). The answers' times are the kernel's arrival stamps, so latency stays exact. With the
// next send further off, the loop waits for answers as they come, so a connection is free
// again as soon as its answer is in, however low the rate.
const quietHorizon = 2 * time.Millisecond

// maxCoalesced bounds the sends one wake-up waits for, so a schedule's due times are never
// walked far ahead (at the highest rates, 100 µs holds thousands of sends).
const maxCoalesced = 64

// eventLoop is one loop: its connections, its share of the plan, its recorder.
type eventLoop struct {
	ep, wake int // the epoll instance; an eventfd written when the run stops
	conns    []*loopConn
	free     []*loopConn
	events   []syscall.EpollEvent

	start         time.Time
	pl            plan
	next, stride  int64 // the loop's next send of the plan, and the step to the one after
	firstMeasured int64
	pastLast      int64
	giveUp        time.Duration
	timeout       time.Duration
	// coalesce (Spec.Coalesce): a send due within this of the loop's next one waits for the
	// last of them, and they go out at one wake-up. A wake-up is most of a send's CPU when sends
	// come one by one (at 10,000/s, a wake-up for each cost 31 µs a send, one for every two 21
	// to 23, measured on the 2-core machine: the kernel putting the thread to sleep and waking
	// it); the price is the lateness it adds to the earlier sends, up to this, which latency
	// from the intended time counts. So it is the user's choice, 0 by default.
	coalesce  time.Duration
	expects   []workload.Expect
	draws     []int32 // the inputs drawn (Draw.Sequence); nil: each in turn
	shard     *shard
	blocked   bool          // the next send came due with every connection busy
	unblocked time.Duration // when a busy connection last came free for a waiting send
	inFlight  int
	nextCheck time.Duration // no deadline or backoff ends before this
	stopping  atomic.Bool   // set by stop, for a loop woken by its own clock
	// together counts the measured sends that went out at a wake-up after another due within
	// the coalesce window of that wake-up's first (sendingEnd): those the window sent together,
	// not those caught up after a late wake-up, which are due further apart. sentAt is the clock
	// reading at which the last send went out, wakeFirstDue the due time of that wake-up's first.
	together     int64
	sentAt       time.Duration
	wakeFirstDue time.Duration
	// wall and wallAt are the last reading of the clock (now): the wall clock, Unix
	// nanoseconds, and the monotonic time since the start, read together. Arrival stamps are
	// placed by this pair, not by whatever now a caller still holds: a dial reads the clock
	// again in the middle of handling a wait's events.
	wall        int64
	wallAt      time.Duration
	quiet       int      // an epoll instance with the stop's eventfd alone, to sleep on
	stopped     bool     // the run was stopped: the loop returns at once
	sendingOver bool     // no more sends: all went out or the rest were given up on
	end         pacerEnd // where sending stopped
}

// noDeadline is a time no loop waits for.
const noDeadline = time.Duration(1<<63 - 1)

// plainExchanges are the deciders' exchanges if every one of them can be served by the event
// loop (kinds.PlainHTTP); otherwise nil, and the goroutines serve them.
func plainExchanges(deciders []kinds.Decider) []kinds.HTTPExchange {
	if !loopsSupported || !httpload.SocketsSupported {
		return nil
	}
	xs := make([]kinds.HTTPExchange, len(deciders))
	for i, d := range deciders {
		p, ok := d.(kinds.PlainHTTP)
		if !ok {
			return nil
		}
		if xs[i], ok = p.PlainHTTP(); !ok {
			return nil
		}
	}
	return xs
}

// newEventLoops builds the loops for the exchanges (one connection each), before the clock
// starts: every address resolved, every epoll instance made. Nothing is dialled yet.
func newEventLoops(xs []kinds.HTTPExchange, attempts []*Attempts, shards []*shard) ([]*eventLoop, error) {
	loops := make([]*eventLoop, len(shards))
	addrs := map[string]syscall.Sockaddr{}
	fail := func(err error) ([]*eventLoop, error) {
		for _, l := range loops {
			if l != nil {
				l.close()
			}
		}
		return nil, err
	}
	for i := range loops {
		ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			return fail(os.NewSyscallError("epoll_create1", err))
		}
		wake, _, errno := syscall.Syscall(syscall.SYS_EVENTFD2, 0, syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if errno != 0 {
			syscall.Close(ep)
			return fail(os.NewSyscallError("eventfd2", errno))
		}
		quiet, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			syscall.Close(ep)
			syscall.Close(int(wake))
			return fail(os.NewSyscallError("epoll_create1", err))
		}
		l := &eventLoop{ep: ep, wake: int(wake), quiet: quiet, shard: shards[i], events: make([]syscall.EpollEvent, 64)}
		loops[i] = l
		// The wake-up's index is -1: no connection's.
		for _, on := range []int{ep, quiet} {
			if err := syscall.EpollCtl(on, syscall.EPOLL_CTL_ADD, l.wake, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: -1}); err != nil {
				return fail(os.NewSyscallError("epoll_ctl", err))
			}
		}
	}
	for id, x := range xs {
		sa, ok := addrs[x.Endpoint.Addr]
		if !ok {
			var err error
			if sa, err = httpload.ResolveTCP(x.Endpoint.Addr); err != nil {
				return fail(fmt.Errorf("resolve %s: %w", x.Endpoint.Addr, err))
			}
			addrs[x.Endpoint.Addr] = sa
		}
		l := loops[id%len(loops)]
		c := &loopConn{index: len(l.conns), sock: httpload.NewSocket(), addr: sa, x: x, attempts: attempts[id]}
		l.conns = append(l.conns, c)
		l.free = append(l.free, c)
	}
	return loops, nil
}

func (l *eventLoop) close() {
	for _, c := range l.conns {
		c.sock.Close()
	}
	syscall.Close(l.wake)
	syscall.Close(l.ep)
	syscall.Close(l.quiet)
}

// stop wakes the loop from its wait for good: the run is over.
func (l *eventLoop) stop() {
	l.stopping.Store(true)
	one := uint64(1)
	syscall.Write(l.wake, (*[8]byte)(unsafe.Pointer(&one))[:])
}

// now reads the clock: the time since the start (monotonic), and the wall clock beside it,
// to place the kernel's arrival stamps (CLOCK_REALTIME) on the monotonic clock.
func (l *eventLoop) now() time.Duration {
	t := time.Now()
	l.wall, l.wallAt = t.UnixNano(), t.Sub(l.start)
	return l.wallAt
}

// arrival is when bytes the kernel stamped at wall (CLOCK_REALTIME) arrived, as an offset from
// the start, read since the clock's last reading: no later than that reading, and no earlier
// than the send they answer.
func (l *eventLoop) arrival(wall int64, sent time.Duration) time.Duration {
	if wall == 0 {
		return l.wallAt
	}
	return min(l.wallAt, max(sent, l.wallAt-time.Duration(l.wall-wall)))
}

// run sends the loop's share of the plan until every due send went out or was given up, and
// every answer came (or the run was stopped), then returns where its sending stopped.
func (l *eventLoop) run() pacerEnd {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
	// The thread goes back to the runtime's pool with the default slack.
	defer syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 0, 0)
	l.nextCheck, l.sentAt = noDeadline, -1
	for !l.stopped {
		now := l.now()
		l.sendDue(now)
		if l.sendingOver && l.inFlight == 0 {
			break
		}
		wakeAt := l.nextCheck
		switch {
		case l.sendingOver:
		case len(l.free) > 0:
			wakeAt = min(wakeAt, l.sendWake())
		default:
			wakeAt = min(wakeAt, l.giveUp) // waiting for a connection to come free
		}
		var n int
		if wakeAt-now <= quietHorizon && !l.sendingOver && len(l.free) > 0 {
			// A send is due soon: sleep until then without waking for answers, and read
			// those that came at that one wake-up (their times are the kernel's stamps).
			l.waitOn(l.quiet, wakeAt-now)
			now = l.now()
			if !l.readAwaiting(now) {
				n = l.waitOn(l.ep, 0)
			}
		} else {
			n = l.waitOn(l.ep, wakeAt-now)
			now = l.now()
		}
		for _, ev := range l.events[:n] {
			if ev.Fd < 0 {
				l.stopped = true
				break
			}
			if c := l.conns[ev.Fd]; uint32(ev.Pad) == c.gen {
				l.ready(c, ev.Events, now)
			}
		}
		if l.stopping.Load() {
			l.stopped = true
		}
		if now >= l.nextCheck {
			l.checkDeadlines(now)
		}
	}
	if !l.sendingOver {
		l.endSending()
	}
	return l.end
}

// sendWake is when the loop wakes for its next sends: when the last of those due within
// l.coalesce of the first is due, and no more of them than free connections to carry them.
func (l *eventLoop) sendWake() time.Duration {
	first := l.pl.due(l.next)
	wake := first
	for n, j := 1, l.next+l.stride; n < min(len(l.free), maxCoalesced) && j < l.pastLast; n, j = n+1, j+l.stride {
		due := l.pl.due(j)
		if due-first > l.coalesce {
			break
		}
		wake = due
	}
	return wake
}

// directReads: with at most this many answers awaited, a loop that wakes to send reads their
// sockets directly rather than asking epoll which are ready; against a server that answers
// before the next send is due, each read finds its answer, and the wake-up costs one system
// call less.
const directReads = 4

// readAwaiting reads the sockets of the sends in flight, if there are no more than
// directReads and every one is awaiting its answer (none connecting or still writing, which
// epoll watches). false: it read none, and epoll is to be asked.
func (l *eventLoop) readAwaiting(now time.Duration) bool {
	if l.inFlight > directReads {
		return false
	}
	var awaiting [directReads]*loopConn
	found := 0
	for _, c := range l.conns {
		switch c.state {
		case connAwaiting:
			awaiting[found] = c
			found++
		case connConnecting, connSending:
			return false
		}
		if found == l.inFlight {
			break
		}
	}
	for _, c := range awaiting[:found] {
		if c.state == connAwaiting {
			l.read(c, now)
		}
	}
	return true
}

// endSending says the loop hands out no more sends: those from l.next on are unsent.
func (l *eventLoop) endSending() {
	l.sendingOver, l.end = true, pacerEnd{l.next, time.Now()}
}

// waitOn waits up to timeout (forever if it is noDeadline) on the epoll instance ep, and
// returns how many events it found.
//
// A wait shorter than quietHorizon is a raw system call, one the runtime does not know may
// block, so the loop keeps its scheduler slot. Through syscall.Syscall6 the runtime's monitor
// took the slot back from every wait longer than its tick (20 us to 10 ms) and handed it on,
// and the loop's thread had to get one back after each: at 2,000 sends a second, 4 futex calls
// and 3 of the monitor's sleeps per send, and more CPU than the goroutine engine. Other
// goroutines (progress, the failure watch, a Ctrl-C) still run: the monitor preempts a
// goroutine that has held its slot for 10 ms, which interrupts the wait (EINTR), and the loop
// yields at its next function call. A longer wait (a low rate, the last answers) goes through
// Syscall6, and gives the slot up while it lasts.
func (l *eventLoop) waitOn(ep int, timeout time.Duration) int {
	var ts *syscall.Timespec
	if timeout != noDeadline {
		t := syscall.NsecToTimespec(int64(max(0, timeout)))
		ts = &t
	}
	call := syscall.RawSyscall6
	if timeout > quietHorizon {
		call = syscall.Syscall6
	}
	n, _, errno := call(sysEpollPwait2, uintptr(ep), uintptr(unsafe.Pointer(&l.events[0])),
		uintptr(len(l.events)), uintptr(unsafe.Pointer(ts)), 0, 0)
	switch errno {
	case 0:
		return int(n)
	case syscall.EINTR:
		return 0
	}
	// Not expected of a valid epoll instance; the run cannot go on without its waits.
	l.stopped = true
	return 0
}

// sendDue hands each of the loop's due sends to a free connection, until the next is not due
// yet or no connection is free. A send that came due while every connection was busy waited,
// and the wait is the server's doing.
func (l *eventLoop) sendDue(now time.Duration) {
	for !l.sendingOver {
		if l.next >= l.pastLast {
			l.endSending()
			return
		}
		intended := l.pl.due(l.next)
		if intended > now {
			return
		}
		if now >= l.giveUp {
			// Connections that never block would otherwise keep a fast schedule going long
			// past its window; and a send still waiting for one now is given up on.
			l.endSending()
			return
		}
		if len(l.free) == 0 {
			l.blocked = true
			return
		}
		c := l.free[len(l.free)-1]
		l.free = l.free[:len(l.free)-1]
		d := dueSend{send: l.pl.send(l.next), intended: intended, measured: l.next >= l.firstMeasured,
			ready: max(intended, l.unblocked), waited: l.blocked}
		if l.blocked {
			l.unblocked, l.blocked = now, false
		}
		switch {
		case now != l.sentAt:
			l.sentAt, l.wakeFirstDue = now, intended
		case d.measured && intended-l.wakeFirstDue <= l.coalesce:
			l.together++
		}
		l.next += l.stride
		l.begin(c, d, now)
	}
}

// begin starts a send on c: dial if its socket is closed, then write.
func (l *eventLoop) begin(c *loopConn, d dueSend, now time.Duration) {
	c.due, c.input = d, pick(l.draws, d.send, len(l.expects))
	c.req, c.written = c.x.Request(c.input), 0
	c.sent, c.resent, c.connectNS = now, false, 0
	c.reconnect, c.closedIdle = c.closedIdle, false
	if c.answers.Pending() > 0 {
		// Bytes nobody asked for since the last answer (a 408 before a close): the connection
		// is not in a state to carry a request, as Conn's look before a send finds.
		c.close(l)
		c.reconnect = true
	}
	c.deadline = 0
	if l.timeout > 0 {
		c.deadline = now + l.timeout
		l.nextCheck = min(l.nextCheck, c.deadline)
	}
	l.inFlight++
	l.dialOrWrite(c, now)
}

func (l *eventLoop) dialOrWrite(c *loopConn, now time.Duration) {
	c.reused = c.sock.Fd() >= 0
	if c.reused {
		l.write(c, now)
		return
	}
	c.dialedAt = now
	connected, err := c.sock.Dial(c.addr)
	if err != nil {
		l.connectFailed(c, err, now)
		return
	}
	c.answers.Reset()
	c.gen++
	c.events = syscall.EPOLLIN | syscall.EPOLLRDHUP
	if !connected {
		c.events |= syscall.EPOLLOUT
	}
	if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, c.sock.Fd(), c.epollEvent()); err != nil {
		c.sock.Close()
		l.connectFailed(c, os.NewSyscallError("epoll_ctl", err), now)
		return
	}
	if !connected {
		c.state = connConnecting
		return
	}
	l.connected(c, l.now())
}

// connected finishes a connect and writes the send's request.
func (l *eventLoop) connected(c *loopConn, now time.Duration) {
	c.connectNS = int64(now - c.dialedAt)
	c.failures = 0
	l.write(c, now)
}

// write writes what is left of c's request; the rest waits for the socket to take it.
func (l *eventLoop) write(c *loopConn, now time.Duration) {
	for c.written < len(c.req) {
		n, errno := c.sock.Write(c.req[c.written:])
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			l.want(c, syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLOUT)
			c.state = connSending
			return
		case errno != 0:
			err := os.NewSyscallError("write", errno)
			if c.reused && c.written == 0 {
				l.dropped(c, err, now)
				return
			}
			l.failed(c, err, now)
			return
		}
		c.written += n
	}
	l.want(c, syscall.EPOLLIN|syscall.EPOLLRDHUP)
	c.state = connAwaiting
	if c.answers.Pending() > 0 {
		// The answer began before the last of the request went out (a server that answers
		// early): what was read meanwhile may be all of it, with nothing more to wake for.
		l.answer(c, now)
	}
}

// want sets what the loop's epoll waits for on c's socket, if that changed.
func (l *eventLoop) want(c *loopConn, events uint32) {
	if c.events == events {
		return
	}
	c.events = events
	syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_MOD, c.sock.Fd(), c.epollEvent())
}

// epollEvent is what c's socket is registered with: its events, and its index and socket
// number as the event's data (which syscall.EpollEvent splits into Fd and Pad).
func (c *loopConn) epollEvent() *syscall.EpollEvent {
	return &syscall.EpollEvent{Events: c.events, Fd: int32(c.index), Pad: int32(c.gen)}
}

// ready handles what epoll found on c's socket.
func (l *eventLoop) ready(c *loopConn, events uint32, now time.Duration) {
	if c.sock.Fd() < 0 {
		return // closed since the wait found it
	}
	switch c.state {
	case connConnecting:
		if events&(syscall.EPOLLOUT|syscall.EPOLLERR|syscall.EPOLLHUP) == 0 {
			return
		}
		if err := c.sock.Connected(); err != nil {
			c.sock.Close()
			l.connectFailed(c, err, now)
			return
		}
		l.connected(c, now)
		return
	case connSending:
		if events&syscall.EPOLLOUT != 0 {
			l.write(c, now)
		}
	}
	if c.sock.Fd() < 0 {
		return // the write failed, and the connection was closed
	}
	if events&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
		l.read(c, now)
	}
}

// read takes what c's socket holds and finishes the send whose answer is complete.
func (l *eventLoop) read(c *loopConn, now time.Duration) {
	n, stamp, errno := c.sock.ReadStamped(c.answers.Spare(4096))
	ended := false
	switch {
	case errno == syscall.EAGAIN:
		return
	case errno == 0 && n > 0:
		c.answers.Grow(n)
		c.arrived = l.arrival(stamp, c.sent)
	default:
		// The end of the stream, or a reset.
		ended = true
		c.answers.End()
		if c.state != connAwaiting && c.state != connSending {
			// Closed while idle (an idle timeout): the next send goes out on a new connection,
			// and counts as a reconnect.
			c.close(l)
			c.closedIdle = true
			return
		}
		if c.answers.Pending() == 0 {
			var err error = io.ErrUnexpectedEOF
			if errno != 0 {
				err = os.NewSyscallError("read", errno)
			}
			if c.reused {
				l.dropped(c, err, now)
			} else {
				l.failed(c, err, now)
			}
			return
		}
	}
	switch {
	case c.state == connAwaiting:
		l.answer(c, now)
	case ended:
		// The server ended the stream while the request was still going out: wait only for
		// the write to finish or fail, not for a readable end that would wake every wait.
		l.want(c, syscall.EPOLLOUT)
	}
}

// answer finishes c's send if its answer has come whole.
func (l *eventLoop) answer(c *loopConn, now time.Duration) {
	ended := c.answers.Ended()
	status, body, keep, complete, err := c.answers.Next()
	if !complete {
		if ended {
			l.failed(c, io.ErrUnexpectedEOF, now)
		}
		return
	}
	if err != nil {
		l.failed(c, err, now)
		return
	}
	out := c.x.Judge(status, body)
	out.ConnectNS = c.connectNS
	if !keep || ended {
		c.close(l)
	}
	l.finish(c, out, c.arrived)
}

// dropped is a request that found its kept-alive connection closed by the server before any
// byte of an answer: it goes out once more on a new connection, as Conn.Do does.
func (l *eventLoop) dropped(c *loopConn, err error, now time.Duration) {
	c.close(l)
	if c.resent {
		l.failed(c, err, now)
		return
	}
	c.resent, c.reconnect, c.written = true, true, 0
	l.dialOrWrite(c, now)
}

// connectFailed is a connect that failed: the send fails, and the connection backs off before
// the next, as Conn's does, so a dead server is not flooded with connects.
func (l *eventLoop) connectFailed(c *loopConn, err error, now time.Duration) {
	l.connectFailedWith(c, verify.Outcome{Kind: verify.TransportFailure, Err: err}, now)
}

// Backoff bounds between connects after a failed one, as httpload.Conn's.
const (
	firstBackoff = 10 * time.Millisecond
	maxBackoff   = time.Second
)

// failed is a send that got no answer: its connection is closed, and the next send redials.
func (l *eventLoop) failed(c *loopConn, err error, now time.Duration) {
	c.close(l)
	l.finish(c, verify.Outcome{Kind: verify.TransportFailure, ConnectNS: c.connectNS, Err: err}, now)
}

// checkDeadlines ends the sends whose timeout passed and the backoffs that are over, and finds
// the next time one will.
func (l *eventLoop) checkDeadlines(now time.Duration) {
	l.nextCheck = noDeadline
	for _, c := range l.conns {
		switch c.state {
		case connBackingOff:
			if now >= c.backoffUntil {
				c.state = connIdle
				l.free = append(l.free, c)
				continue
			}
			l.nextCheck = min(l.nextCheck, c.backoffUntil)
		case connConnecting, connSending, connAwaiting:
			if c.deadline == 0 {
				continue
			}
			if now < c.deadline {
				l.nextCheck = min(l.nextCheck, c.deadline)
				continue
			}
			l.timedOut(c, now)
		}
	}
}

// timedOut ends a send its timeout passed on: a connection stuck on it is closed, and the next
// send redials. One whose request never left (no byte written) was never sent.
func (l *eventLoop) timedOut(c *loopConn, now time.Duration) {
	connecting := c.state == connConnecting
	c.close(l)
	out := verify.Outcome{Kind: verify.TimedOut, ConnectNS: c.connectNS,
		Err: fmt.Errorf("%w after %s", httpload.ErrTimeout, l.timeout)}
	switch {
	case connecting:
		out.Err = fmt.Errorf("%w after %s: connect", httpload.ErrTimeout, l.timeout)
		l.connectFailedWith(c, out, now)
		return
	case c.written == 0:
		out.NotSent = true
		out.Err = fmt.Errorf("%w: the %s timeout passed before the request could be written", httpload.ErrNotSent, l.timeout)
	}
	l.finish(c, out, now)
}

// connectFailedWith records out for c's send, whose connect failed, and backs c off: 10 ms
// after the first failure, doubling to 1 s, until a connect succeeds.
func (l *eventLoop) connectFailedWith(c *loopConn, out verify.Outcome, now time.Duration) {
	c.failures++
	wait := maxBackoff
	if c.failures <= 7 {
		wait = min(maxBackoff, firstBackoff<<(c.failures-1))
	}
	l.finishing(c, out, now)
	c.state, c.backoffUntil = connBackingOff, now+wait
	l.nextCheck = min(l.nextCheck, c.backoffUntil)
}

// finish records c's send and frees c for the next.
func (l *eventLoop) finish(c *loopConn, out verify.Outcome, now time.Duration) {
	l.finishing(c, out, now)
	c.state = connIdle
	l.free = append(l.free, c)
}

// finishing records c's send as the goroutines' openWorker does: latency from the intended
// time, the send's lateness, and whether the generator or the server made it late.
func (l *eventLoop) finishing(c *loopConn, out verify.Outcome, done time.Duration) {
	l.inFlight--
	d := c.due
	c.req = nil
	out = EnforceTimeout(out, done-c.sent, l.timeout)
	sentOnTheWire := c.attempts.Note(out)
	if !d.measured {
		return // due in the warm-up, whenever it was sent
	}
	s := l.shard
	if c.reconnect {
		s.rec.Reconnects++
	}
	if !sentOnTheWire {
		s.rec.RecordUnsent(done - d.intended)
		s.intervals.unsent(d.intended, done-d.intended)
		return
	}
	var generatorLateness time.Duration
	if !d.waited {
		generatorLateness = c.sent - d.ready
	}
	expect := l.expects[c.input]
	if s.judging != nil {
		expect = s.judging.expect(c.input, expect, out, c.sent, done, done-d.intended)
	}
	class := recordResponse(s.rec, c.input, expect, out, done-d.intended, c.sent-d.intended)
	s.rec.RecordSend(class == verify.OK, c.sent-d.intended, generatorLateness, done-c.sent, LateAfter)
	s.intervals.sent(d.intended, class == verify.OK, done-d.intended, c.sent-d.intended, generatorLateness)
}

// close closes c's socket (which takes it out of the loop's epoll).
func (c *loopConn) close(l *eventLoop) {
	c.sock.Close()
	c.events = 0
	c.answers.Reset()
}

// startLoops starts one event loop per shard, each with its share of the exchanges'
// connections and of the plan; done is closed when all have returned, and ends then says
// where each one's sending stopped.
func (c Spec) startLoops(ctx context.Context, xs []kinds.HTTPExchange, attempts []*Attempts, shards []*shard, expects []workload.Expect,
	w openWindow) (done <-chan struct{}, ends func() []sendingEnd, err error) {
	loops, err := newEventLoops(xs, attempts, shards)
	if err != nil {
		return nil, nil, err
	}
	results := make([]sendingEnd, len(loops))
	finished := make(chan struct{})
	var running sync.WaitGroup
	for i, l := range loops {
		l.start, l.pl, l.giveUp, l.timeout, l.coalesce, l.expects = w.start, w.pl, w.giveUp.Sub(w.start), c.Timeout, c.Coalesce, expects
		l.draws = w.draws
		l.next, l.stride, l.firstMeasured, l.pastLast = int64(i), int64(len(loops)), w.firstMeasured, w.pastLast
		running.Add(1)
		go func() {
			defer running.Done()
			results[i] = sendingEnd{l.run(), l.stride, l.together}
		}()
	}
	// The loops' descriptors are closed once no stop can write to them: a write to a closed
	// descriptor could land on one opened since.
	var mu sync.Mutex
	closed := false
	stopAll := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range loops {
			if !closed {
				l.stop()
			}
		}
	})
	go func() {
		running.Wait()
		stopAll()
		mu.Lock()
		closed = true
		for _, l := range loops {
			l.close()
		}
		mu.Unlock()
		close(finished)
	}()
	return finished, func() []sendingEnd { return results }, nil
}
