// Package opalog reads OPA's decision logs into workloads, for replay: each logged event's
// input asked again of the user's policy, its logged result the expected decision. It
// registers the reader with the workload package (workload.RegisterDecisionLogs), through which
// a run, a scenario and serve's pacing judge reach it without knowing OPA.
package opalog

import (
	"time"

	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	workload.RegisterDecisionLogs(workload.DecisionLogs{Engine: "opa", Signs: signs, Read: workloads, Paced: paced})
}

// paced reads the log for a replay at its recorded pace: its decision paths, and the recorded
// offsets of a path's events (DecisionLog.PacedOffsets).
func paced(log string) ([]string, func(path string) ([]time.Duration, error), error) {
	l, err := ReadDecisionLog(log, "")
	if err != nil {
		return nil, nil, err
	}
	return l.Paths(), l.PacedOffsets, nil
}
