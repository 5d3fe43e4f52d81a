package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/sut"
)

// wrkThreads is how many threads wrk gets: as many as the generator had CPUs (the GOMAXPROCS it
// drove the closed loop with, and no more than the CPUs this process may run on, which wrk
// inherits), so that the two spend the same CPUs; at least one, and no more than its
// connections, since wrk refuses more threads than connections. allowedCPUs 0: not known.
func wrkThreads(generatorProcs, allowedCPUs, connections int) int {
	n := generatorProcs
	if allowedCPUs > 0 && allowedCPUs < n {
		n = allowedCPUs
	}
	return max(1, min(n, connections))
}

// driveWithWrk drives the server at url with wrk, over the given connections, after the
// closed-loop run in doc: with as many threads as the generator had CPUs (wrkThreads), so that
// the two spend the same CPUs. wrk's figures go into doc.Wrk.
func driveWithWrk(ctx context.Context, doc *result.Document, wrk, url string, connections int, d time.Duration) error {
	// The GOMAXPROCS the closed loop ran with, and the CPUs this process (and so wrk) may use.
	procs := runtime.GOMAXPROCS(0)
	for _, r := range doc.Runs {
		if r.Load.Model == "closed" && r.Load.GeneratorProcs > 0 {
			procs = r.Load.GeneratorProcs
		}
	}
	allowed, _ := sut.Affinity(0) // none: not known here, and GOMAXPROCS alone decides
	w, err := runWrk(ctx, wrk, url, wrkThreads(procs, len(allowed), connections), connections, d)
	if err != nil {
		return err
	}
	doc.Wrk = w
	return nil
}

// runWrk drives the server at url with wrk, the given threads and connections, posting the same
// kind of body as authzbench, and reads its figures; wrk's CPU is the kernel's account of it.
func runWrk(ctx context.Context, wrk, url string, threads, connections int, d time.Duration) (*result.Wrk, error) {
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
	// wrk takes whole seconds.
	secs := max(1, int(d.Round(time.Second).Seconds()))
	args := []string{"-t" + strconv.Itoa(threads), "-c" + strconv.Itoa(connections), "-d" + strconv.Itoa(secs) + "s", "--latency", "-s", script, url}
	cmd := exec.CommandContext(ctx, wrk, args...)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		return nil, fmt.Errorf("wrk %s: %w\n%s%s", strings.Join(args, " "), err, out, stderr)
	}
	f, err := parseWrk(out)
	if err != nil {
		return nil, err
	}
	f.Command = append([]string{"wrk"}, args...)
	f.Command[len(f.Command)-2] = "post.lua" // a temporary file, gone after the run
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		f.CPUSeconds = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		if f.Requests > 0 {
			f.CPUPerRequestUS = f.CPUSeconds * 1e6 / float64(f.Requests)
		}
	}
	return f, nil
}

var (
	wrkThreadsLine = regexp.MustCompile(`(?m)^\s*(\d+) threads and (\d+) connections`)
	wrkStats       = regexp.MustCompile(`(?m)^\s*Latency\s+(\S+)\s+\S+\s+(\S+)\s+\S+\s*$`)
	wrkPercentile  = regexp.MustCompile(`(?m)^\s*(50|75|90|99)(?:\.0+)?%\s+(\S+)\s*$`)
	wrkCount       = regexp.MustCompile(`(?m)^\s*(\d+) requests in (\S+?),`)
	wrkRate        = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)`)
	wrkSocket      = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
	wrkNonSuccess  = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
)

// parseWrk reads wrk's report: the request count, the time and the rate are required; the
// latency distribution (printed with --latency) and the error lines are read when present.
func parseWrk(out []byte) (*result.Wrk, error) {
	text := string(out)
	count, rate := wrkCount.FindStringSubmatch(text), wrkRate.FindStringSubmatch(text)
	if count == nil || rate == nil {
		return nil, fmt.Errorf("wrk: no request count or Requests/sec in its output:\n%s", out)
	}
	f := &result.Wrk{}
	var err error
	if f.Requests, err = strconv.ParseInt(count[1], 10, 64); err != nil {
		return nil, fmt.Errorf("wrk: request count %q: %w", count[1], err)
	}
	runUS, err := parseWrkTime(count[2])
	if err != nil {
		return nil, fmt.Errorf("wrk: run time: %w", err)
	}
	f.DurationS = runUS / 1e6
	if f.ThroughputRPS, err = strconv.ParseFloat(rate[1], 64); err != nil {
		return nil, fmt.Errorf("wrk: Requests/sec %q: %w", rate[1], err)
	}
	if m := wrkThreadsLine.FindStringSubmatch(text); m != nil {
		f.Threads, _ = strconv.Atoi(m[1])
		f.Connections, _ = strconv.Atoi(m[2])
	}
	us := parseWrkTime
	if ps := wrkPercentile.FindAllStringSubmatch(text, -1); len(ps) > 0 {
		l := &result.WrkLatency{}
		for _, p := range ps {
			v, err := us(p[2])
			if err != nil {
				return nil, fmt.Errorf("wrk: latency %s%%: %w", p[1], err)
			}
			switch p[1] {
			case "50":
				l.P50 = v
			case "75":
				l.P75 = v
			case "90":
				l.P90 = v
			case "99":
				l.P99 = v
			}
		}
		if m := wrkStats.FindStringSubmatch(text); m != nil {
			if l.Mean, err = us(m[1]); err != nil {
				return nil, fmt.Errorf("wrk: mean latency: %w", err)
			}
			if l.Max, err = us(m[2]); err != nil {
				return nil, fmt.Errorf("wrk: max latency: %w", err)
			}
		}
		f.LatencyUS = l
	}
	if m := wrkSocket.FindStringSubmatch(text); m != nil {
		for _, n := range m[1:] {
			v, _ := strconv.ParseInt(n, 10, 64)
			f.SocketErrors += v
		}
	}
	if m := wrkNonSuccess.FindStringSubmatch(text); m != nil {
		f.NonSuccess, _ = strconv.ParseInt(m[1], 10, 64)
	}
	return f, nil
}

// parseWrkTime reads a time as wrk prints it (a number and one of us, ms, s, m, h), in
// microseconds to the nanosecond.
func parseWrkTime(s string) (float64, error) {
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return 0, fmt.Errorf("%q is not a time as wrk prints it", s)
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a time as wrk prints it", s)
	}
	unit := map[string]float64{"us": 1, "ms": 1e3, "s": 1e6, "m": 60e6, "h": 3600e6}[s[i:]]
	if unit == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q", s, s[i:])
	}
	return math.Round(v*unit*1e3) / 1e3, nil
}
