package load

import (
	"encoding/binary"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// pacerClock waits until each send of a generator's plan is due: send j at start + due(j).
//
// The last stretch of each wait must be precise: the runtime's own timers can wake up to a
// millisecond late (its network poller waits in whole milliseconds), which at hundreds of
// sends a second would make most sends late. Two precise waits, for two cases:
//
// With more than one scheduler slot (GOMAXPROCS), the pacer's thread nanosleeps the last
// millisecond. The kernel wakes it directly, within tens of microseconds even on a busy
// machine, and the connections read their replies on the other slots meanwhile.
//
// With one slot (GOMAXPROCS 1: --generator-procs 1, taskset to one CPU, a one-CPU container),
// a nanosleep holds the only slot for the whole wait, and replies were read only when every
// connection was busy (p50 = connections/rate). There the pacer reads a periodic timerfd
// through the runtime's network poller instead: its goroutine parks and the slot is free for
// the connections until the kernel fires the timer. At a constant rate whose interval is a
// whole number of nanoseconds the plan's sends are evenly spaced (a segment i/N of it too, N
// intervals apart), and the timer is periodic: the kernel keeps the schedule (no drift from
// re-arming) and counts the periods that went by, so a pacer that fell behind finds every send
// already due in one read. Another schedule (a ramp, or 600/s, whose sends are due 1,666,666 or
// 1,666,667 ns apart to stay exact) re-arms a one-shot timer for each send, at its due time. The timerfd is not used with more
// slots because the poller is read when a slot falls idle: on a busy 2-core machine at
// GOMAXPROCS 2 its late tail was the longer (lateness p99 4 to 16 ms, against 1 to 9 ms for
// nanosleep, at 200 req/s).
type pacerClock struct {
	start   time.Time
	stopped chan struct{}
	once    sync.Once

	f        *os.File // the timerfd, at GOMAXPROCS 1 only
	fd       uintptr  // its descriptor (f.Fd would make it blocking, out of the poller's hands)
	raw      syscall.RawConn
	periodic bool  // the timerfd fires at every send's due time; otherwise it is armed for each
	fired    int64 // periodic: periods the timerfd counted so far: sends 0 to fired-1 are due
	// What firedPast waits for (the timer's firing waitK, due at waitAt) and how its read
	// failed, carried through its callback readFired (c.fire, made once).
	waitK     int64
	waitAt    time.Time
	readErr   error
	readFired func(fd uintptr) bool
}

const (
	clockMonotonic = 1
	timerfdFlags   = syscall.O_NONBLOCK | syscall.O_CLOEXEC
)

type itimerspec struct {
	interval, value syscall.Timespec
}

func newPacerClock(start time.Time, pl plan) (*pacerClock, error) {
	c := &pacerClock{start: start, stopped: make(chan struct{})}
	if runtime.GOMAXPROCS(0) > 1 {
		return c, nil
	}
	var err error
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, timerfdFlags, 0)
	if errno != 0 {
		return nil, os.NewSyscallError("timerfd_create", errno)
	}
	// A non-blocking descriptor given to os.NewFile is registered with the network poller.
	c.f, c.fd = os.NewFile(fd, "pacer timer"), fd
	if c.raw, err = c.f.SyscallConn(); err != nil {
		c.f.Close()
		return nil, err
	}
	c.readFired = c.fire
	first, every, periodic := pl.period()
	if !periodic {
		return c, nil // armed in waitFor, for each send
	}
	c.periodic = true
	// The first period ends when the plan's send 0 is due.
	if err := c.arm(start.Add(first), every); err != nil {
		c.f.Close()
		return nil, err
	}
	return c, nil
}

// arm sets the timerfd to fire at t, then every period (0: once).
func (c *pacerClock) arm(t time.Time, period time.Duration) error {
	spec := itimerspec{interval: syscall.NsecToTimespec(int64(period)),
		value: syscall.NsecToTimespec(max(1, int64(time.Until(t))))}
	if _, _, errno := syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, c.fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0); errno != 0 {
		return os.NewSyscallError("timerfd_settime", errno)
	}
	return nil
}

// waitFor returns once the plan's send j, due at the offset due, is due, or false if the clock
// was stopped first.
func (c *pacerClock) waitFor(j int64, due time.Duration) bool {
	at := c.start.Add(due)
	switch {
	case c.f == nil:
		return c.sleepUntil(at)
	case c.periodic:
		return c.firedPast(j, at)
	case time.Until(at) <= 0:
		return true
	case c.arm(at, 0) != nil:
		return false
	}
	c.fired = 0 // armed anew: its count starts again
	return c.firedPast(0, at)
}

// firedPast reads the timerfd until it has fired more than k times since it was armed; the
// k-th firing is at the time at.
//
// The read goes through the poller's raw read, whose wait is armed before the callback first
// runs: a firing after that wakes the wait. So while the clock says at has not come, the timer
// cannot have fired for it, and the callback asks to wait without a read that would find
// nothing: a system call saved on every send, which the pacer makes thousands of times a second.
func (c *pacerClock) firedPast(k int64, at time.Time) bool {
	if c.fired > k {
		return true
	}
	c.waitK, c.waitAt, c.readErr = k, at, nil
	err := c.raw.Read(c.readFired)
	return err == nil && c.readErr == nil
}

// fire is firedPast's callback (a method value made once, so that waiting allocates
// nothing): true once the timer has fired more than waitK times, false to wait for it.
func (c *pacerClock) fire(fd uintptr) bool {
	if c.fired <= c.waitK && time.Now().Before(c.waitAt) {
		return false
	}
	var expirations [8]byte
	for c.fired <= c.waitK {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&expirations[0])), uintptr(len(expirations)))
		switch {
		case errno == syscall.EINTR:
		case errno == syscall.EAGAIN:
			return false // fired for an earlier send only: wait for the next firing
		case errno != 0:
			c.readErr = os.NewSyscallError("read", errno)
			return true
		case n == uintptr(len(expirations)):
			c.fired += int64(binary.NativeEndian.Uint64(expirations[:]))
		}
	}
	return true
}

// sleepUntil waits on the runtime's timers until a millisecond before t, then nanosleeps.
func (c *pacerClock) sleepUntil(t time.Time) bool {
	if wait := time.Until(t); wait > 2*time.Millisecond {
		timer := time.NewTimer(wait - time.Millisecond)
		select {
		case <-timer.C:
		case <-c.stopped:
			timer.Stop()
			return false
		}
	}
	if wait := time.Until(t); wait > 0 {
		ts := syscall.NsecToTimespec(int64(wait))
		for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
		}
	}
	return true
}

// stop wakes a waitFor at once, and every later one: the run is over.
func (c *pacerClock) stop() {
	c.once.Do(func() {
		close(c.stopped)
		if c.f != nil {
			c.f.SetReadDeadline(time.Unix(1, 0))
		}
	})
}

func (c *pacerClock) close() {
	if c.f != nil {
		c.f.Close()
	}
}
