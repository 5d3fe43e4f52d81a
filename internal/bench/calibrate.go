package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
	"github.com/authzbench/authzbench/internal/target"
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

// WrkFigures is what wrk reached against the same trivial server.
type WrkFigures struct {
	RequestsPerSecond float64
	CPUPerRequestUS   float64
}

// trivialKind is the target calibrate drives: the trivial server, started by the run in a
// process of its own, as any launched server is.
const trivialKind = "trivial/server"

// Calibrate drives the trivial server closed loop then open loop (each run on a server of its
// own), and with wrk if asked, on one more.
func Calibrate(ctx context.Context, c Calibration, o Options, doc *result.Document) (*WrkFigures, error) {
	warmup := time.Second
	s := &scenario.Scenario{Name: "calibrate", Source: "calibrate", Repeat: 1,
		Workloads: []scenario.WorkloadRef{{Name: "nop"}},
		Targets: []scenario.TargetRef{
			{Name: trivialKind, Timeout: scenario.DefaultTimeout, Load: load.Spec{Workers: c.Workers, Duration: c.Duration, Warmup: warmup}},
			{Name: trivialKind, Timeout: scenario.DefaultTimeout, Load: load.Spec{Rate: c.Rate, Connections: c.Connections, Duration: c.Duration, Warmup: warmup}},
		}}
	if err := Run(ctx, s, o, doc); err != nil {
		return nil, err
	}
	if c.Wrk == "" {
		return nil, nil
	}
	tg, err := target.New(trivialKind, o.Common, nil)
	if err != nil {
		return nil, err
	}
	defer tg.Stop(context.Background())
	if err := tg.Start(ctx, s.Workloads[0].Built); err != nil { // built by the run
		return nil, fmt.Errorf("start the trivial server for wrk: %w", err)
	}
	return runWrk(ctx, c.Wrk, tg.Info().URL, c.Workers, c.Duration)
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

var wrkRate = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
var wrkCount = regexp.MustCompile(`(\d+) requests in`)

// runWrk drives the same server with wrk, two threads and one connection per worker, posting
// the same kind of body, and measures wrk's own CPU.
func runWrk(ctx context.Context, wrk, url string, connections int, d time.Duration) (*WrkFigures, error) {
	dir, err := os.MkdirTemp("", "authzbench-wrk-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "post.lua")
	lua := "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.body = '{\"input\":{\"user\":\"user-001\"}}'\n"
	if err := os.WriteFile(script, []byte(lua), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, wrk, "-t2", "-c"+strconv.Itoa(connections), "-d"+strconv.Itoa(int(d.Seconds()))+"s", "-s", script, url)
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("wrk: %w", err)
	}
	rate, count := wrkRate.FindSubmatch(out), wrkCount.FindSubmatch(out)
	if rate == nil || count == nil {
		return nil, fmt.Errorf("wrk: no Requests/sec in its output:\n%s", out)
	}
	f := &WrkFigures{}
	f.RequestsPerSecond, _ = strconv.ParseFloat(string(rate[1]), 64)
	n, _ := strconv.ParseFloat(string(count[1]), 64)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && n > 0 {
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		f.CPUPerRequestUS = float64(cpu.Microseconds()) / n
	}
	return f, nil
}
