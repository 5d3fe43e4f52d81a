package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
)

// Calibration is what `authzbench calibrate` measures: the generator against a server that
// does nothing, so the figures are the generator's own ceiling.
type Calibration struct {
	Workers     int
	Rate        float64
	Connections int
	Duration    time.Duration
	Wrk         string // path of wrk, to drive the same server in the same run; "" to skip
	// GRPC drives the trivial ext_authz server (Envoy's Check over gRPC, one connection as
	// Envoy keeps) instead of the trivial HTTP one: the ceiling of the ext_authz targets' client.
	GRPC bool
}

// The targets calibrate drives: a trivial server, started by the run in a process of its own,
// as any launched server is.
const (
	trivialKind     = "trivial/server"
	trivialGRPCKind = "trivial/extauthz"
)

// Calibrate drives the trivial server closed loop then open loop (each run on a server of its
// own), and with wrk if asked (doc.Wrk), on one more: wrk gets one connection per closed-loop
// worker and as many threads as the generator had CPUs.
func Calibrate(ctx context.Context, c Calibration, o Options, doc *result.Document) (err error) {
	defer func() { MarkStopped(ctx, doc, err) }() // Ctrl-C during wrk's turn too
	warmup := time.Second
	kind := trivialKind
	if c.GRPC {
		if c.Wrk != "" {
			return errors.New("wrk speaks HTTP/1.1, not gRPC: drive the trivial ext_authz server with ghz instead (experiments/ghz-vs-extauthz.sh)")
		}
		kind = trivialGRPCKind
	}
	s := &scenario.Scenario{Name: "calibrate", Source: "calibrate", Repeat: 1,
		Workloads: []scenario.WorkloadRef{{Name: "nop"}},
		Targets: []scenario.TargetRef{
			{Name: kind, Timeout: scenario.DefaultTimeout, Load: load.Spec{Workers: c.Workers, Duration: c.Duration, Warmup: warmup}},
			{Name: kind, Timeout: scenario.DefaultTimeout, Load: load.Spec{Rate: c.Rate, Connections: c.Connections, Duration: c.Duration, Warmup: warmup}},
		}}
	p, err := NewPlan(ctx, s, o)
	if err != nil {
		return err
	}
	if err := Execute(ctx, p, o, doc); err != nil {
		return err
	}
	if c.Wrk == "" {
		return nil
	}
	common := o.Common
	common.Prepared = p.Prepared
	tg, err := kinds.New(trivialKind, common, nil)
	if err != nil {
		return err
	}
	defer tg.Stop(context.Background())
	if err := tg.Start(ctx, p.Workloads[0]); err != nil { // built by the plan
		return fmt.Errorf("start the trivial server for wrk: %w", err)
	}
	return driveWithWrk(ctx, doc, c.Wrk, tg.Info().URL, c.Workers, c.Duration)
}

// OpenVerdict is calibrate's word on an open-loop step: "held" only under the rule that marks a
// run RATE MISSED (load.Schedule.Missed): every due send went out and the generator itself was
// late for at most 1 % of them. generatorLatePct is that share, in percent.
func OpenVerdict(o *result.OpenSummary) (verdict string, generatorLatePct float64) {
	s := load.Schedule{Intended: o.Intended, Sent: o.Sent, Unsent: o.Unsent, GeneratorLate: o.GeneratorLate}
	if o.Intended > 0 {
		generatorLatePct = 100 * float64(o.GeneratorLate) / float64(o.Intended)
	}
	if o.RateMissed || s.Missed() {
		return "MISSED", generatorLatePct
	}
	return "held", generatorLatePct
}
