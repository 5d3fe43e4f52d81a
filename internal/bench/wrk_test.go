package bench

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

func TestWrkThreads(t *testing.T) {
	for _, c := range []struct {
		name                              string
		procs, allowed, connections, want int
	}{
		{"a thread per generator CPU", 2, 2, 8, 2},
		{"16 cores", 16, 16, 64, 16},
		{"no more than the connections", 16, 16, 8, 8},
		{"no more than the CPUs this process may use", 8, 2, 64, 2},
		{"affinity unknown", 4, 0, 64, 4},
		{"at least one", 0, 0, 8, 1},
		{"one connection", 4, 4, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := wrkThreads(c.procs, c.allowed, c.connections); got != c.want {
				t.Errorf("wrkThreads(%d procs, %d CPUs allowed, %d connections) = %d, want %d", c.procs, c.allowed, c.connections, got, c.want)
			}
		})
	}
}

// wrk 4.1.0's reports, captured on this machine (2026-11-23): the trivial server driven as
// calibrate drives it (-t2 -c8 -d2s --latency, the POST script), a server answering 404
// (python3 -m http.server, -t1 -c2 -d1s --latency), and one that closes every connection it
// accepts (read errors, no responses).
func TestParseWrk(t *testing.T) {
	for _, c := range []struct {
		file string
		want result.Wrk
	}{
		{"wrk-trivial.txt", result.Wrk{Threads: 2, Connections: 8, DurationS: 2.11, Requests: 115377, ThroughputRPS: 54763.45,
			LatencyUS: &result.WrkLatency{P50: 109, P75: 236, P90: 1430, P99: 7840, Max: 22410, Mean: 563.05}}},
		{"wrk-404.txt", result.Wrk{Threads: 1, Connections: 2, DurationS: 1, Requests: 741, ThroughputRPS: 739.55, NonSuccess: 741,
			LatencyUS: &result.WrkLatency{P50: 2120, P75: 3520, P90: 5380, P99: 16370, Max: 25850, Mean: 2990}}},
		{"wrk-reset.txt", result.Wrk{Threads: 1, Connections: 2, DurationS: 1.02, SocketErrors: 7382,
			LatencyUS: &result.WrkLatency{}}},
	} {
		t.Run(c.file, func(t *testing.T) {
			out, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseWrk(out)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, c.want) {
				t.Errorf("read\n%+v (latency %+v), want\n%+v (latency %+v)", *got, got.LatencyUS, c.want, c.want.LatencyUS)
			}
		})
	}

	// Without --latency there is no distribution; without a count or a rate, no figures at all.
	out, err := os.ReadFile(filepath.Join("testdata", "wrk-trivial.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var noDistribution []string
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.Contains(line, "%  ") && !strings.Contains(line, "Distribution") {
			noDistribution = append(noDistribution, line)
		}
	}
	if got, err := parseWrk([]byte(strings.Join(noDistribution, "\n"))); err != nil || got.LatencyUS != nil || got.Requests != 115377 {
		t.Errorf("without --latency: %+v, %v; want the counts and no latency", got, err)
	}
	for _, bad := range []string{
		"unable to connect to 127.0.0.1:18433 Connection refused\n",
		strings.Replace(string(out), "Requests/sec:", "Requests:", 1),
		strings.Replace(string(out), "115377 requests in", "many requests in", 1),
		strings.Replace(string(out), "in 2.11s,", "in 2.11y,", 1),
	} {
		if got, err := parseWrk([]byte(bad)); err == nil {
			t.Errorf("read %+v from\n%s", got, bad)
		}
	}
}

func TestParseWrkTime(t *testing.T) {
	for in, want := range map[string]float64{"109.00us": 109, "1.43ms": 1430, "22.41ms": 22410, "563.05us": 563.05,
		"2.11s": 2.11e6, "1.50m": 90e6, "1.00h": 3600e6, "0.00us": 0} {
		if got, err := parseWrkTime(in); err != nil || got != want {
			t.Errorf("parseWrkTime(%q) = %g µs, %v; want %g", in, got, err, want)
		}
	}
	for _, in := range []string{"", "ms", "12", "1.2.3ms", "12xs", "-1ms"} {
		if got, err := parseWrkTime(in); err == nil {
			t.Errorf("parseWrkTime(%q) = %g, want an error", in, got)
		}
	}
}
