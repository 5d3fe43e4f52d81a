package workload

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// Replay is what a workload made from a decision log carries besides its inputs: where they
// came from, what was left out and what the user expects to change.
type Replay struct {
	Log   string // the decision log file
	Path  string // the decision path of this workload's events
	Field string // the member of object results compared; empty for boolean results
	// Skipped and SkippedFirst are the log's events left out, by why (for the whole log: they
	// may have no path), with the first of each kind by file:line; OutOfOrder how many events
	// the replay sorted into timestamp order.
	Skipped      map[string]int
	SkippedFirst map[string]string
	OutOfOrder   int
	// Repeated and RepeatedFirst are the log's events whose decision id an earlier one had,
	// replayed all the same (DecisionLog.Repeated).
	Repeated      int
	RepeatedFirst string
	// Intended are the decision ids of --expect-changes: their inputs expect the opposite of
	// the logged decision.
	Intended map[string]bool
	// Speed, when positive, is the pace the events are sent at (their recorded offsets divided
	// by it), whatever load the targets were given; MaxGap shortens the pauses longer than it.
	// The load package turns them into the schedule (load.ReplaySettings).
	Speed  float64
	MaxGap time.Duration
	// FromInputs says why the file given as inputs was read as this decision log; empty when
	// it was named as one.
	FromInputs string
}

// Logged is the decision in is logged with, before any intended change.
func (r *Replay) Logged(in Input) Expect {
	if r.Intended[in.DecisionID] {
		return in.Expect.Opposite()
	}
	return in.Expect
}

// Opposite is the other decision: deny for allow, allow for deny; Unverified stays.
func (e Expect) Opposite() Expect {
	switch e {
	case ExpectAllow:
		return ExpectDeny
	case ExpectDeny:
		return ExpectAllow
	}
	return e
}

// DecisionLogs reads an engine's decision logs (OPA's) into workloads to replay: each logged
// event's input asked again, its logged decision the expected one. The engine's package
// registers it (RegisterDecisionLogs), as reading a log takes the engine's own form of it; this
// package asks it whether a file given as inputs is such a log, and to read one.
type DecisionLogs struct {
	Engine string // the engine's name, as it registers it
	// Signs says why the file at path, given as inputs, is one of the engine's decision logs
	// (the reason a run then says); "" when it reads as inputs, or cannot be read (its reader
	// names it). A file that reads as both is refused, a *SettingError on inputs naming a line
	// of each.
	Signs func(path string) (string, error)
	// Read builds the workloads of s.DecisionLog, one per decision path, each with its Replay;
	// s is checked (Check, CheckFilesExist) before it is called.
	Read func(s UserSpec) ([]*Workload, error)
	// Paced reads the log at path for a replay at its recorded pace: its decision paths, sorted,
	// and the recorded offsets of one path's events, refused when an event has no time.
	Paced func(path string) (paths []string, offsets func(path string) ([]time.Duration, error), err error)
}

var decisionLogs []DecisionLogs

// RegisterDecisionLogs adds an engine's reader of decision logs; called from the init function
// of the engine's package. One without Signs, Read or Paced, or a second for the same engine,
// is a programming error: it panics.
func RegisterDecisionLogs(d DecisionLogs) {
	if d.Engine == "" || d.Signs == nil || d.Read == nil || d.Paced == nil {
		panic("workload: RegisterDecisionLogs without an engine, Signs, Read or Paced")
	}
	for _, o := range decisionLogs {
		if o.Engine == d.Engine {
			panic("workload: decision logs of " + d.Engine + " registered twice")
		}
	}
	decisionLogs = append(decisionLogs, d)
}

// errNoLogReader is the error of a replay in an authzbench with no engine that reads logs.
var errNoLogReader = errors.New("a decision log to replay, and this authzbench has no engine linked in that reads one")

// logReader is the reader of the log at path: the engine whose Signs claim it, else the first
// registered (whose reader then names what is wrong with it); nil when none is registered.
func logReader(path string) *DecisionLogs {
	for i := range decisionLogs {
		if why, err := decisionLogs[i].Signs(path); err == nil && why != "" {
			return &decisionLogs[i]
		}
	}
	if len(decisionLogs) > 0 {
		return &decisionLogs[0]
	}
	return nil
}

// FromDecisionLog builds the workloads of a user's decision log: one per decision path, named
// after the log (and the path, when there are several), each asking its path's query of the
// user's policy. The events of the intended changes (s.ExpectChanges) expect the opposite of
// their logged decision. The log is s.DecisionLog, or s.Inputs when that file is one
// (DetectDecisionLog).
func FromDecisionLog(s UserSpec) ([]*Workload, error) {
	s, err := s.DetectDecisionLog()
	if err != nil {
		return nil, err
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	if err := s.CheckFilesExist(); err != nil {
		return nil, err
	}
	r := logReader(s.DecisionLog)
	if r == nil {
		return nil, fmt.Errorf("%s: %w", s.DecisionLog, errNoLogReader)
	}
	ws, err := r.Read(s)
	if err != nil {
		return nil, err
	}
	if policyFiles != nil { // the policy each log's events are asked of again
		for _, w := range ws {
			if err := policyFiles.Add(s, w); err != nil {
				return nil, err
			}
		}
	}
	return ws, nil
}

// PacedLog reads the decision log at path for a replay at its recorded pace: its decision
// paths, and the recorded offsets of one path's events (see DecisionLogs.Paced).
func PacedLog(path string) (paths []string, offsets func(path string) ([]time.Duration, error), err error) {
	r := logReader(path)
	if r == nil {
		return nil, nil, fmt.Errorf("%s: %w", path, errNoLogReader)
	}
	return r.Paced(path)
}

// DetectDecisionLog reads the file given as inputs (s.Inputs) and, when it is in fact a
// decision log (DecisionLogs.Signs), returns the spec that replays it as one: DecisionLog set,
// Inputs cleared, LogFromInputs saying why. A file that holds both inputs lines and
// decision-log events is refused, naming a line of each; a file that cannot be read is left for
// the usual checks to name.
func (s UserSpec) DetectDecisionLog() (UserSpec, error) {
	if s.Inputs == "" || s.DecisionLog != "" || s.inputsAreInputs {
		return s, nil
	}
	f, err := os.Open(s.Inputs)
	if err != nil {
		return s, nil // CheckFilesExist names it, in the words of the setting that gave it
	}
	f.Close()
	for _, d := range decisionLogs {
		why, err := d.Signs(s.Inputs)
		if err != nil {
			return s, err
		}
		if why != "" {
			s.DecisionLog, s.Inputs, s.LogFromInputs = s.Inputs, "", why
			return s, nil
		}
	}
	s.inputsAreInputs = true
	return s, s.replaySettingWithoutLog(s.Inputs)
}
