package result

import (
	"fmt"
	"strconv"
)

// The closed loop: Workers workers, each sending its next request when its last is answered.
func init() {
	RegisterSchedule(ScheduleKind{Name: "workers", Of: func(l Load) (Schedule, bool) {
		return workersSchedule(l.Workers), !l.Open()
	}})
}

type workersSchedule int

func (workersSchedule) Kind() string { return "workers" }

// Label is "8 workers", "1 worker".
func (w workersSchedule) Label(func(float64) string) string {
	if w == 1 {
		return "1 worker"
	}
	return fmt.Sprintf("%d workers", int(w))
}

func (w workersSchedule) Value(func(float64) string) string { return strconv.Itoa(int(w)) }

// Key is "closed 8": the spelling series of closed-loop runs were first stored under.
func (w workersSchedule) Key() string { return "closed " + strconv.Itoa(int(w)) }

func (workersSchedule) Rate() (float64, bool) { return 0, false }
