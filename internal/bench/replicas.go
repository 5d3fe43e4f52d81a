package bench

import (
	"time"

	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/sut"
)

// replicaSampling samples every replica of a replicated server during a turn, each apart, so
// that the result shows what each used and an imbalance shows.
type replicaSampling struct {
	samplers []*sut.Sampler
}

// startReplicaSampling samples the slot's replicas; nil for a single server (the slot's own
// sampler covers it).
func (sl *slot) startReplicaSampling() *replicaSampling {
	reps := sl.run.SUT.Replicas
	if len(reps) < 2 {
		return nil
	}
	rs := &replicaSampling{}
	for _, r := range reps {
		rs.samplers = append(rs.samplers, sut.StartSampler(r.PID, 250*time.Millisecond))
	}
	return rs
}

// stop ends the turn's sampling and keeps each replica's measured phase, and the replicas'
// sum as the server's.
func (rs *replicaSampling) stop(sl *slot, out load.Outcome) {
	if rs == nil {
		return
	}
	if sl.replicaResources == nil {
		sl.replicaResources = make([][]sut.Resources, len(rs.samplers))
	}
	var sum sut.Resources
	every := true // the server's use is the sum only when every replica's is known
	for i, s := range rs.samplers {
		res, ok := sut.Summarise(s.Stop(), out.MeasuredFrom, out.MeasuredFrom.Add(out.Elapsed))
		if !ok || out.Elapsed <= 0 {
			every = false
			continue
		}
		sl.replicaResources[i] = append(sl.replicaResources[i], res)
		sum.CPUCoresMean += res.CPUCoresMean
		sum.CPUCoresMax += res.CPUCoresMax // an upper bound: the replicas' peaks need not coincide
		sum.RSSMaxMB += res.RSSMaxMB
		sum.Samples += res.Samples
	}
	if every && len(rs.samplers) > 0 {
		sl.resources = append(sl.resources, sum)
	}
}

// recordReplicas reads the requests each replica was sent (the target counts them) and what
// each used over the turns, before the target is stopped.
func (sl *slot) recordReplicas() {
	if len(sl.run.SUT.Replicas) < 2 || sl.tg == nil {
		return
	}
	now := sl.tg.Info().Replicas
	for i := range sl.run.SUT.Replicas {
		r := &sl.run.SUT.Replicas[i]
		if i < len(now) {
			r.Requests, r.Connections = now[i].Requests, now[i].Connections
		}
		if i < len(sl.replicaResources) {
			r.Resources = resourcesOf(sutResources(sl.replicaResources[i]))
		}
	}
}
