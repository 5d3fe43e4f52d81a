package bench

import (
	"context"
	"os/exec"
	"time"

	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
	"github.com/authzbench/authzbench/internal/sut"
)

// Calibration is what `authzbench calibrate` measures: the generator against a server that
// does nothing, so the figures are the generator's own ceiling.
type Calibration struct {
	Workers     int
	Rate        float64
	Connections int
	Duration    time.Duration
	Wrk         string // path of wrk, to drive the same server in the same run; "" to skip
}

// Calibrate starts the trivial server as a process of its own (serve is its command line),
// drives it closed loop then open loop, and with wrk if asked (doc.Wrk): wrk gets one
// connection per closed-loop worker and as many threads as the generator had CPUs.
func Calibrate(ctx context.Context, c Calibration, serve func(addr string) *exec.Cmd, o Options, doc *result.Document) error {
	addr, err := sut.FreeAddr()
	if err != nil {
		return err
	}
	proc, err := sut.Start("trivial server", serve(addr))
	if err != nil {
		return err
	}
	defer proc.Stop(5 * time.Second)
	url := "http://" + addr
	if err := sut.WaitHealthy(ctx, url+"/health", proc, 30*time.Second); err != nil {
		return err
	}
	warmup := time.Second
	s := &scenario.Scenario{Name: "calibrate", Source: "calibrate", Repeat: 1,
		Workloads: []scenario.WorkloadRef{{Name: "nop"}},
		Targets: []scenario.TargetRef{
			{Name: "opa/server", Timeout: scenario.DefaultTimeout, Load: load.Spec{Workers: c.Workers, Duration: c.Duration, Warmup: warmup}},
			{Name: "opa/server", Timeout: scenario.DefaultTimeout, Load: load.Spec{Rate: c.Rate, Connections: c.Connections, Duration: c.Duration, Warmup: warmup}},
		}}
	o.Target.URL = url + "/v1/data/authzbench/nop/allow"
	if err := Run(ctx, s, o, doc); err != nil {
		return err
	}
	if c.Wrk == "" {
		return nil
	}
	return driveWithWrk(ctx, doc, c.Wrk, url+"/v1/data/authzbench/nop/allow", c.Workers, c.Duration)
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
