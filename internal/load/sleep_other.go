//go:build !linux

package load

import "time"

func preciseSleep(d time.Duration) { time.Sleep(d) }
