//go:build !linux

package load

import (
	"sync"
	"time"
)

// pacerClock says when each send of the schedule is due: send k at start + k*interval. Here
// it sleeps on the runtime's timers, which park the goroutine (the connections keep reading
// replies) but may wake up to a millisecond late.
type pacerClock struct {
	start    time.Time
	interval time.Duration
	stopped  chan struct{}
	once     sync.Once
}

func newPacerClock(start time.Time, interval time.Duration) (*pacerClock, error) {
	return &pacerClock{start: start, interval: interval, stopped: make(chan struct{})}, nil
}

// waitFor returns once send k is due, or false if the clock was stopped first.
func (c *pacerClock) waitFor(k int64) bool {
	d := time.Until(c.start.Add(time.Duration(k) * c.interval))
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-c.stopped:
		return false
	}
}

// stop wakes a waitFor at once, and every later one: the run is over.
func (c *pacerClock) stop() { c.once.Do(func() { close(c.stopped) }) }

func (c *pacerClock) close() {}
