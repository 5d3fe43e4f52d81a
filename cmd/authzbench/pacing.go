package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/outputs"
	"github.com/authzbench/authzbench/internal/pacing"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/workload"
)

// serveFlags are calibrate --serve's: how long to serve, and whether and how to judge the
// arrivals' pacing.
type serveFlags struct {
	addr     string
	serveFor time.Duration
	rate     float64
	out      string
	skip     time.Duration
	window   time.Duration
	cap      int
	force    *bool // calibrate's --force, shared with its -o
	// skipRequests leaves out the first arrivals whatever their timing (run --url's probe).
	skipRequests int
	// schedule is a decision log whose paced replay the arrivals are judged against, in place
	// of rate, at speed with gaps over maxGap shortened; replay is that schedule, read by check.
	schedule string
	speed    float64
	maxGap   time.Duration
	replay   *replaySchedule
}

// replaySchedule is a decision log's replay schedule as the recording server judges it.
type replaySchedule struct {
	due  []time.Duration
	info pacing.ReplaySchedule
}

const serveHelp = `
With --serve ADDR, calibrate drives nothing: it serves the trivial HTTP server on ADDR (any
path, any method, the answer {"result":true}, so the opa/server target with --url and the nop
workload drives it) until Ctrl-C or SIGTERM, or for --serve-for. With --pacing-rate R it also
records when each request arrives (its first byte, on the monotonic clock) and, when stopped,
judges the arrivals against the ideal schedule k/R: how late each arrival is, the share more
than 1 ms late, the rate achieved and the sends missing. That is any generator's pacing as the
server sees it, ours or another tool's. The k-th arrival is held to the k-th slot, and the
schedule is placed so the earliest arrival relative to its slot is on time: the transport's
constant delay is not counted, a slow start or a stall is. A warm-up or a probe the generator
sends before its schedule would shift the schedule: --pacing-skip leaves out what arrives
within that long of the first request. --pacing-out writes the analysis as JSON (fields in
docs/pacing.md); the summary goes to stdout. Exit status when serving: 0 once stopped and
reported; 1 when nothing arrived to judge or the report could not be written; 2 bad flags or
an address it cannot listen on, nothing served. It says the address it listens on first.

With --pacing-schedule LOG in place of --pacing-rate, the arrivals are judged against the
schedule that authzbench run --decision-log LOG --speed S follows: the k-th arrival against the
k-th event's recorded offset from the first, divided by --pacing-speed S (gaps over
--pacing-max-gap shortened as --max-gap does). Give the replay's own --speed and --max-gap. The
log must hold one decision path (a replay runs each path on a schedule of its own). Run with
--url sends one request before its load, to fail early on an unreachable address: leave it out
with --pacing-skip-requests 1.`

func (f *serveFlags) register(fl *pflag.FlagSet, force *bool) {
	f.force = force
	fl.StringVar(&f.addr, "serve", "", "serve the trivial server on this address (127.0.0.1:PORT) until stopped, to drive it with any tool")
	fl.DurationVar(&f.serveFor, "serve-for", 0, "with --serve: stop after this long (default: at Ctrl-C or SIGTERM)")
	fl.Float64Var(&f.rate, "pacing-rate", 0, "with --serve: record each arrival and judge it against this rate, requests per second")
	fl.StringVar(&f.out, "pacing-out", "", "with --pacing-rate or --pacing-schedule: write the pacing report here as JSON (a new file)")
	fl.DurationVar(&f.skip, "pacing-skip", 0, "with --pacing-rate or --pacing-schedule: leave out what arrives within this long of the first request (a warm-up, a probe)")
	fl.DurationVar(&f.window, "pacing-window", 0, "with --pacing-rate or --pacing-schedule: judge only this long after the skip, and expect the slots due in it (default: up to the last arrival; a replay: every event)")
	fl.IntVar(&f.cap, "pacing-cap", pacing.DefaultCap, "with --pacing-rate or --pacing-schedule: most arrivals stored (8 bytes each); later ones are counted, not judged")
	fl.IntVar(&f.skipRequests, "pacing-skip-requests", 0, "with --pacing-rate or --pacing-schedule: leave out the first N requests, before --pacing-skip (1 for run --url's probe)")
	fl.StringVar(&f.schedule, "pacing-schedule", "", "with --serve: record each arrival and judge it against this decision log's replay schedule, in place of --pacing-rate")
	fl.Float64Var(&f.speed, "pacing-speed", 1, "with --pacing-schedule: the replay's --speed")
	fl.DurationVar(&f.maxGap, "pacing-max-gap", 0, "with --pacing-schedule: the replay's --max-gap")
}

// pacingFlags are the flags that judge arrivals, given beside --pacing-rate or --pacing-schedule.
var pacingFlags = []string{"pacing-out", "pacing-skip", "pacing-window", "pacing-cap", "pacing-skip-requests"}

// check refuses, before anything is served, flags that cannot work together or a report that
// would replace a file.
func (f *serveFlags) check(fl *pflag.FlagSet) error {
	var errs []error
	if f.addr == "" {
		for _, name := range append([]string{"serve-for", "pacing-rate", "pacing-schedule", "pacing-speed", "pacing-max-gap"}, pacingFlags...) {
			if fl.Changed(name) {
				errs = append(errs, fmt.Errorf("--%s applies to --serve ADDR", name))
			}
		}
		return errors.Join(errs...)
	}
	if f.serveFor < 0 {
		errs = append(errs, fmt.Errorf("--serve-for %s: want a positive duration, or none to serve until stopped", f.serveFor))
	}
	if fl.Changed("pacing-rate") && f.rate <= 0 {
		errs = append(errs, fmt.Errorf("--pacing-rate %g: want the rate the generator was asked for, above 0", f.rate))
	}
	if fl.Changed("pacing-rate") && fl.Changed("pacing-schedule") {
		errs = append(errs, errors.New("--pacing-rate and --pacing-schedule: judge against a constant rate or a replay's schedule, not both"))
	}
	if !fl.Changed("pacing-rate") && !fl.Changed("pacing-schedule") {
		for _, name := range pacingFlags {
			if fl.Changed(name) {
				errs = append(errs, fmt.Errorf("--%s needs --pacing-rate or --pacing-schedule: the schedule the arrivals are judged against", name))
			}
		}
	}
	if !fl.Changed("pacing-schedule") {
		for _, name := range []string{"pacing-speed", "pacing-max-gap"} {
			if fl.Changed(name) {
				errs = append(errs, fmt.Errorf("--%s applies to --pacing-schedule LOG: the replay's schedule", name))
			}
		}
	}
	if f.skip < 0 || f.window < 0 {
		errs = append(errs, fmt.Errorf("--pacing-skip %s, --pacing-window %s: want durations of 0 or more", f.skip, f.window))
	}
	if f.skipRequests < 0 {
		errs = append(errs, fmt.Errorf("--pacing-skip-requests %d: want 0 or more", f.skipRequests))
	}
	if fl.Changed("pacing-schedule") {
		r, err := readReplaySchedule(f.schedule, load.ReplaySettings{Speed: f.speed, MaxGap: f.maxGap})
		if err != nil {
			errs = append(errs, fmt.Errorf("--pacing-schedule: %w", err))
		}
		f.replay = r
	}
	if f.cap < 1 {
		errs = append(errs, fmt.Errorf("--pacing-cap %d: want at least 1", f.cap))
	}
	plan := outputs.Plan{Force: *f.force}
	plan.Output("--pacing-out", f.out)
	plan.Input("--pacing-schedule", f.schedule)
	if err := plan.Check(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// readReplaySchedule is the schedule authzbench run --decision-log LOG --speed follows: the
// log read as run reads it, its events' recorded offsets, and the one load.Replay both build.
func readReplaySchedule(logFile string, s load.ReplaySettings) (*replaySchedule, error) {
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("--pacing-speed/--pacing-max-gap: %w", err)
	}
	paths, pacedOffsets, err := workload.PacedLog(logFile)
	if err != nil {
		return nil, err
	}
	if len(paths) > 1 {
		return nil, fmt.Errorf("%s holds decisions of %d paths (%s): a replay runs each path on a schedule of its own; judge a log of one path",
			logFile, len(paths), strings.Join(paths, ", "))
	}
	offsets, err := pacedOffsets(paths[0])
	if err != nil {
		return nil, err
	}
	r, err := load.NewReplay(offsets, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", logFile, err)
	}
	due := make([]time.Duration, r.Events)
	for k := range due {
		due[k] = r.Due(int64(k))
	}
	return &replaySchedule{due: due, info: pacing.ReplaySchedule{Log: logFile, Path: paths[0], Events: r.Events, SpanS: r.Span.Seconds(),
		Speed: s.Speed, MaxGapS: s.MaxGap.Seconds(), GapsShortened: r.GapsShortened, Describe: r.Describe()}}, nil
}

// recording says whether any of the new flags asks for more than the plain trivial server.
func (f *serveFlags) recording() bool { return f.rate > 0 || f.replay != nil }

// serve runs the trivial server until it is stopped, and judges the arrivals when asked to.
func (f *serveFlags) serve(stdout, stderr io.Writer) error {
	// An address that cannot be listened on is bad input, as serve's --port is: nothing served.
	if _, _, err := net.SplitHostPort(f.addr); err != nil {
		return usageError(fmt.Errorf("--serve %q: want HOST:PORT, such as 127.0.0.1:9000 (port 0 for any free one)", f.addr))
	}
	l, err := net.Listen("tcp", f.addr)
	if err != nil {
		return usageError(fmt.Errorf("--serve %s: %w", f.addr, err))
	}
	if host, _, _ := net.SplitHostPort(l.Addr().String()); !net.ParseIP(host).IsLoopback() {
		fmt.Fprintf(stderr, "authzbench: warning: --serve %s listens on %s, which other machines can reach; 127.0.0.1 keeps it to this one\n", f.addr, l.Addr())
	}
	// Served until Ctrl-C or SIGTERM, which end it with 0 as serve's do, its address said first:
	// a bare --serve 127.0.0.1:0 said nothing, so its port could not be known, and died of
	// either signal (130, 143).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	until := "Ctrl-C or SIGTERM"
	if f.serveFor > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.serveFor)
		defer cancel()
		until += fmt.Sprintf(", or after %s", f.serveFor)
	}
	var rec *pacing.Recorder
	served := make(chan error, 1)
	if f.recording() {
		rec = pacing.NewRecorder(f.cap)
		go func() { served <- sut.ServeTrivialRecording(l, rec) }()
		against := fmt.Sprintf("%g req/s", f.rate)
		if f.replay != nil {
			against = fmt.Sprintf("the %s of %s", f.replay.info.Describe, f.schedule)
		}
		fmt.Fprintf(stderr, "authzbench: trivial server on %s, recording arrivals (up to %d) to judge against %s; it stops at %s\n",
			l.Addr(), f.cap, against, until)
	} else {
		go func() { served <- sut.ServeTrivial(l) }()
		fmt.Fprintf(stderr, "authzbench: trivial server on %s; it stops at %s\n", l.Addr(), until)
	}
	select {
	case <-ctx.Done():
		l.Close()
		<-served
	case err := <-served:
		return &exitError{exitFailed, fmt.Errorf("trivial server on %s: %w", l.Addr(), err)}
	}
	if rec == nil {
		return nil
	}
	opts := pacing.Options{Rate: f.rate, Skip: f.skip, SkipRequests: f.skipRequests, Window: f.window}
	report := pacing.Report{
		Created: time.Now().UTC(), Listen: l.Addr().String(), Seen: rec.Seen(), Cap: rec.Cap(), CapReached: rec.CapReached(),
		Alignment: pacing.Alignment, SkippedRequests: f.skipRequests,
	}
	if f.replay != nil {
		opts.Due, report.Alignment, report.Replay = f.replay.due, pacing.ReplayAlignment, &f.replay.info
	}
	report.Analysis = pacing.Analyze(rec.Arrivals(), opts)
	pacing.Summary(stdout, report)
	var werr error
	if f.out != "" {
		werr = writePacing(f.out, report, *f.force, stderr)
	}
	leftOutBy := fmt.Sprintf("within --pacing-skip %s", f.skip)
	if f.skipRequests > 0 {
		leftOutBy = fmt.Sprintf("left out by --pacing-skip-requests %d and --pacing-skip %s", f.skipRequests, f.skip)
	}
	switch {
	case report.Arrivals == 0:
		return &exitError{exitFailed, fmt.Errorf("no arrivals to judge: %d requests arrived, %d of them %s", report.Seen, report.Skipped, leftOutBy)}
	case werr != nil:
		return &exitError{exitFailed, werr}
	}
	return nil
}

// writePacing writes the report where asked, or when that fails, to a new file in the
// temporary directory, so a recording is not lost at the end; the error names it.
func writePacing(path string, r pacing.Report, replace bool, stderr io.Writer) error {
	err := outputs.Write(path, replace, r.WriteJSON)
	if err == nil {
		fmt.Fprintf(stderr, "authzbench: pacing report written to %s\n", path)
		return nil
	}
	fallback := filepath.Join(os.TempDir(), "pacing-"+r.Created.Format("20060102-150405.000000000")+".json")
	if ferr := outputs.Write(fallback, false, r.WriteJSON); ferr != nil {
		return fmt.Errorf("%w; writing it to %s failed too: %v", err, fallback, ferr)
	}
	return fmt.Errorf("%w; the report was written to %s instead", err, fallback)
}
