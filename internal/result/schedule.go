package result

import (
	"encoding/json"
	"sort"
	"strconv"
)

// Schedule is how a run's sends were timed, as its document records it: the closed loop's
// workers, a constant rate, stages, a decision log's replay. Every report, merge, compare and
// store of results asks the run's schedule (Load.Schedule) to describe itself, and none tells
// the schedules apart by their fields, so a new schedule is one file here (schedule_*.go, which
// registers its kind) and no renderer changes.
type Schedule interface {
	// Kind names the schedule in one word, as a setting name, a label name and the start of a
	// benchmark name's load part spell it: "workers", "rate", "stages", "replay".
	Kind() string
	// Label is the schedule for people, in a table's Load column and in sentences: "8 workers",
	// "2,000/s", "stages 0→2000/30s, 2000/1m0s", "replay 200 events/1.5s at 2×". thousands
	// writes a figure with thousands separators.
	Label(thousands func(float64) string) string
	// Value is the schedule's settings as one word of no spaces, for a label value or a
	// benchmark name after its kind: "8", "2000", "30s:0-2000,1m0s:2000",
	// "200events:1.5s:speed2". num writes a figure the way the format writes figures (a rate's).
	Value(num func(float64) string) string
	// Key is the schedule's identity in one line: two runs ran the same schedule when their keys
	// are equal. It starts with the loop ("closed" or "open") and is unique among the kinds;
	// stores of results key series by it (with the connections of an open loop, LoadKey.String),
	// so a kind's key never changes spelling once written.
	Key() string
	// Rate is the one arrival rate the schedule holds from start to end, where it has one: a
	// point on an axis of rates, a step of a rate sweep.
	Rate() (float64, bool)
}

// ScheduleKind reads its schedule back from a recorded load. The first kinds have fields of
// their own in Load (the closed loop's workers, a rate, stages, a replay), which no other kind
// reads, so exactly one of them recognises a load (Of); a kind added since records itself in
// Load.Custom under its name, and reads its own settings there (Read).
type ScheduleKind struct {
	Name string
	// Of is the load's schedule when the load is one of this kind's, recognised by its fields.
	Of func(l Load) (Schedule, bool)
	// Read is the schedule a load recorded in its Custom settings under this kind's name.
	Read func(settings json.RawMessage) (Schedule, error)
}

var scheduleKinds = map[string]ScheduleKind{}

// RegisterSchedule adds a schedule kind, from its own file's init; a kind registered twice is a
// programming error.
func RegisterSchedule(k ScheduleKind) {
	if _, dup := scheduleKinds[k.Name]; dup {
		panic("result: schedule " + k.Name + " registered twice")
	}
	if (k.Of == nil) == (k.Read == nil) {
		panic("result: schedule " + k.Name + " must read its loads one way: by fields of its own (Of) or from Load.Custom (Read)")
	}
	scheduleKinds[k.Name] = k
}

// ScheduleKinds lists the registered kinds' names, sorted.
func ScheduleKinds() []string {
	names := make([]string, 0, len(scheduleKinds))
	for n := range scheduleKinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Schedule is the schedule the run followed, as its kind describes it. A load no kind
// recognises (an open loop of no recorded schedule, written by a later authzbench) or more than
// one does is an unknown schedule: it says so in every report rather than read as another.
func (l Load) Schedule() Schedule {
	if c := l.Custom; c != nil {
		if k, ok := scheduleKinds[c.Kind]; ok && k.Read != nil {
			if s, err := k.Read(c.Settings); err == nil {
				return s
			}
		}
		return unknownSchedule{open: l.Open()}
	}
	var found []Schedule
	for _, name := range ScheduleKinds() {
		if k := scheduleKinds[name]; k.Of != nil {
			if s, ok := k.Of(l); ok {
				found = append(found, s)
			}
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return unknownSchedule{open: l.Open()}
}

// CustomSchedule is a schedule kind's record of itself, for a kind with no field of its own in
// Load: its name, and its settings in the form it reads back.
type CustomSchedule struct {
	Kind     string          `json:"kind"`
	Settings json.RawMessage `json:"settings,omitempty"`
}

// unknownSchedule is the schedule of a load that no registered kind, or more than one,
// recognises.
type unknownSchedule struct{ open bool }

func (unknownSchedule) Kind() string                      { return "unknown" }
func (unknownSchedule) Label(func(float64) string) string { return "an unknown schedule" }
func (unknownSchedule) Value(func(float64) string) string { return "unknown" }
func (unknownSchedule) Rate() (float64, bool)             { return 0, false }
func (u unknownSchedule) Key() string                     { return loopWord(u.open) + " unknown" }
func loopWord(open bool) string {
	if open {
		return string(OpenLoop)
	}
	return string(ClosedLoop)
}

// LoadKey is what two runs' loads must share to be the same load: one row of compare, one
// floor of a report, one comparison of engines, one series of a store of results. It is the
// load's one identity, its schedule's key and, in open loop, the connections that bound the
// requests in flight.
type LoadKey struct {
	Schedule    string // Schedule.Key
	Connections int    // open loop
}

// String is the key in one line: "closed 8", "open 2000 64", "open stages 30s:0-2000 64".
func (k LoadKey) String() string {
	if k.Connections == 0 {
		return k.Schedule
	}
	return k.Schedule + " " + strconv.Itoa(k.Connections)
}

// Key is the load's identity: its schedule, and the connections of an open loop.
func (l Load) Key() LoadKey {
	k := LoadKey{Schedule: l.Schedule().Key()}
	if l.Open() {
		k.Connections = l.Connections
	}
	return k
}

// exact writes a figure so that it reads back as the same float64: what a key and a merge's
// setting compare.
func exact(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
