package result

// The constant rate: Rate sends a second, whatever happened to the earlier ones.
func init() {
	RegisterSchedule(ScheduleKind{Name: "rate", Of: func(l Load) (Schedule, bool) {
		// A schedule of its own records rate 0: a constant rate is never 0 (load.CheckRate).
		return rateSchedule(l.Rate), l.Open() && l.Rate != 0
	}})
}

type rateSchedule float64

func (rateSchedule) Kind() string { return "rate" }

// Label is "2,000/s".
func (r rateSchedule) Label(thousands func(float64) string) string {
	return thousands(float64(r)) + "/s"
}

func (r rateSchedule) Value(num func(float64) string) string { return num(float64(r)) }

// Key is "open 2000": the spelling series of open-loop runs were first stored under.
func (r rateSchedule) Key() string { return "open " + exact(float64(r)) }

func (r rateSchedule) Rate() (float64, bool) { return float64(r), true }
