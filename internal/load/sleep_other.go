//go:build !linux

package load

import (
	"sync"
	"time"
)

// pacerClock waits until each send of a generator's plan is due: send j at start + due(j).
// Here it sleeps on the runtime's timers, which park the goroutine (the connections keep reading
// replies) but may wake up to a millisecond late.
type pacerClock struct {
	start   time.Time
	stopped chan struct{}
	once    sync.Once
}

func newPacerClock(start time.Time, _ plan) (*pacerClock, error) {
	return &pacerClock{start: start, stopped: make(chan struct{})}, nil
}

// waitFor returns once the plan's send j, due at the offset due, is due, or false if the clock
// was stopped first.
func (c *pacerClock) waitFor(_ int64, due time.Duration) bool {
	d := time.Until(c.start.Add(due))
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
