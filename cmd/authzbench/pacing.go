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
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/outputs"
	"github.com/authzbench/authzbench/internal/pacing"
	"github.com/authzbench/authzbench/internal/sut"
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
reported; 1 when nothing arrived to judge or the report could not be written; 2 bad flags,
nothing served.`

func (f *serveFlags) register(fl *pflag.FlagSet, force *bool) {
	f.force = force
	fl.StringVar(&f.addr, "serve", "", "serve the trivial server on this address (127.0.0.1:PORT) until stopped, to drive it with any tool")
	fl.DurationVar(&f.serveFor, "serve-for", 0, "with --serve: stop after this long (default: at Ctrl-C or SIGTERM)")
	fl.Float64Var(&f.rate, "pacing-rate", 0, "with --serve: record each arrival and judge it against this rate, requests per second")
	fl.StringVar(&f.out, "pacing-out", "", "with --pacing-rate: write the pacing report here as JSON (a new file)")
	fl.DurationVar(&f.skip, "pacing-skip", 0, "with --pacing-rate: leave out what arrives within this long of the first request (a warm-up, a probe)")
	fl.DurationVar(&f.window, "pacing-window", 0, "with --pacing-rate: judge only this long after the skip, and expect rate × this many requests (default: up to the last arrival)")
	fl.IntVar(&f.cap, "pacing-cap", pacing.DefaultCap, "with --pacing-rate: most arrivals stored (8 bytes each); later ones are counted, not judged")
}

// check refuses, before anything is served, flags that cannot work together or a report that
// would replace a file.
func (f *serveFlags) check(fl *pflag.FlagSet) error {
	var errs []error
	if f.addr == "" {
		for _, name := range []string{"serve-for", "pacing-rate", "pacing-out", "pacing-skip", "pacing-window", "pacing-cap"} {
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
	if !fl.Changed("pacing-rate") {
		for _, name := range []string{"pacing-out", "pacing-skip", "pacing-window", "pacing-cap"} {
			if fl.Changed(name) {
				errs = append(errs, fmt.Errorf("--%s needs --pacing-rate: the rate the arrivals are judged against", name))
			}
		}
	}
	if f.skip < 0 || f.window < 0 {
		errs = append(errs, fmt.Errorf("--pacing-skip %s, --pacing-window %s: want durations of 0 or more", f.skip, f.window))
	}
	if f.cap < 1 {
		errs = append(errs, fmt.Errorf("--pacing-cap %d: want at least 1", f.cap))
	}
	plan := outputs.Plan{Force: *f.force}
	plan.Output("--pacing-out", f.out)
	if err := plan.Check(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// recording says whether any of the new flags asks for more than the plain trivial server.
func (f *serveFlags) recording() bool { return f.rate > 0 }

// serve runs the trivial server until it is stopped, and judges the arrivals when asked to.
func (f *serveFlags) serve(stdout, stderr io.Writer) error {
	l, err := net.Listen("tcp", f.addr)
	if err != nil {
		return &exitError{exitFailed, err}
	}
	if !f.recording() && f.serveFor == 0 {
		return sut.ServeTrivial(l) // as it always was: until the process is killed
	}
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
		fmt.Fprintf(stderr, "authzbench: trivial server on %s, recording arrivals (up to %d) to judge against %g req/s; it stops at %s\n",
			l.Addr(), f.cap, f.rate, until)
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
	report := pacing.Report{
		Created: time.Now().UTC(), Listen: l.Addr().String(), Seen: rec.Seen(), Cap: rec.Cap(), CapReached: rec.CapReached(),
		Alignment: pacing.Alignment,
		Analysis:  pacing.Analyze(rec.Arrivals(), pacing.Options{Rate: f.rate, Skip: f.skip, Window: f.window}),
	}
	pacing.Summary(stdout, report)
	var werr error
	if f.out != "" {
		werr = writePacing(f.out, report, *f.force, stderr)
	}
	switch {
	case report.Arrivals == 0:
		return &exitError{exitFailed, fmt.Errorf("no arrivals to judge: %d requests arrived, %d of them within --pacing-skip %s", report.Seen, report.Skipped, f.skip)}
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
