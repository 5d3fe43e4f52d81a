package load

import (
	"syscall"
	"time"
)

// preciseSleep blocks the calling thread in nanosleep, which the kernel wakes within tens of
// microseconds.
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
