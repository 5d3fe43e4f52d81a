package scenario

import (
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/workload"
)

// replayWorkloads are the workloads of a decision log, one per decision path (each its own
// row of the report), each with the spec that builds it again. The flags and a scenario file's
// workload entry both come here, so a replay reads the same from either.
func replayWorkloads(u workload.UserSpec) ([]WorkloadRef, error) {
	if u.Speed != 0 { // max_gap alone is the spec's own mistake (UserSpec.Check)
		// The pace's bounds are the load's (a paced replay is its schedule); said in the
		// settings' own words, which the flags and the file both rename.
		if err := (load.ReplaySettings{Speed: u.Speed, MaxGap: u.MaxGap}).Check(); err != nil {
			return nil, workload.NewSettingError("speed", func(n func(string) string) string {
				return n("speed") + "/" + n("max_gap") + ": " + err.Error()
			})
		}
	}
	ws, err := workload.FromDecisionLog(u)
	if err != nil {
		return nil, err
	}
	refs := make([]WorkloadRef, len(ws))
	for i, w := range ws {
		if u.Speed != 0 {
			// The schedule is built here, before any load, so one that cannot run (past what
			// can be scheduled) is refused rather than found wrong at its turn.
			if _, err := Paced(load.Spec{}, w).ReplayOf(w.Inputs); err != nil {
				return nil, workload.NewSettingError("speed", func(n func(string) string) string {
					return n("speed") + ": " + w.Name + ": " + err.Error()
				})
			}
		}
		spec := u
		spec.DecisionPath = w.Replay.Path
		spec.Name = w.Name
		refs[i] = WorkloadRef{Name: w.Name, User: &spec, Built: w}
	}
	return refs, nil
}

// Paced is the load a target runs a workload under: the target's own, or, for a decision log
// replayed at its recorded pace, that replay in place of any other schedule (the target's
// connections and timeout kept).
func Paced(l load.Spec, w *workload.Workload) load.Spec {
	if w.Replay == nil || w.Replay.Speed == 0 {
		return l
	}
	l.Replay = &load.ReplaySettings{Speed: w.Replay.Speed, MaxGap: w.Replay.MaxGap}
	l.Workers, l.Rate, l.Stages, l.Requests, l.Warmup = 0, 0, nil, 0, 0
	if l.Connections < 1 {
		l.Connections = DefaultConnections
	}
	return l
}
