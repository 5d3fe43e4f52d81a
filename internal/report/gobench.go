package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/authzbench/authzbench/internal/result"
)

func init() {
	Register(Format{Name: "gobench", Render: GoBench, Heading: func(name string) string { return "file: " + name + "\n" }})
}

// GoBench writes the runs as Go benchmark lines, the format benchstat reads
// (golang.org/x/perf/benchfmt): the environment as "key: value" configuration lines, then one
// line per repetition, so that benchstat sees the spread of the repetitions as it sees that of
// `go test -count`. A line reads
//
//	BenchmarkAuthz/workload=rbac/target=opa:server/load=workers8-2  8123  51234 ns/op  13.2 req/s ...
//
// The target's "/" becomes ":" (a "/" separates benchmark name parts) and the "-2" is the
// GOMAXPROCS the generator ran with. The iterations are the repetition's ok responses; ns/op is
// a second divided by its throughput (time per decision across all workers, as RunParallel
// reports it); the percentiles are the repetition's own, over ok responses, in nanoseconds. A
// repetition that served nothing has no line: benchstat would read its zeros as figures.
func GoBench(w io.Writer, doc *result.Document) error {
	var b strings.Builder
	e := doc.Env
	config := [][2]string{
		{"goos", e.OS}, {"goarch", e.Arch}, {"cpu", e.CPUModel}, {"cores", fmt.Sprint(e.Cores)},
		{"go", e.Go}, {"authzbench", e.Authzbench}, {"commit", e.Commit},
	}
	for _, v := range e.EngineVersions() {
		config = append(config, [2]string{v.Name, v.Version})
	}
	config = append(config, [2]string{"pinning", e.Pinning})
	for _, c := range config {
		if v := oneLine(c[1]); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", c[0], v)
		}
	}
	// benchstat assumes lower is better for a unit it does not know; throughput is not.
	b.WriteString("Unit req/s Better=higher\n")
	if line := NoRuns(doc); line != "" {
		b.WriteString(strings.ToUpper(line[:1]) + line[1:] + "\n") // neither a key: value nor a Benchmark line
	}
	for i := range doc.Runs {
		r := &doc.Runs[i]
		name := benchName(r, doc.Env.GOMAXPROCS)
		for _, rep := range r.Repetitions {
			if rep.OK == 0 || rep.ThroughputRPS <= 0 {
				continue
			}
			l := rep.LatencyUS
			fmt.Fprintf(&b, "%s\t%d\t%s ns/op\t%s req/s\t%s p50-ns\t%s p90-ns\t%s p99-ns\t%s p99.9-ns\t%d errors\n",
				name, rep.OK, benchNum(1e9/rep.ThroughputRPS), benchNum(rep.ThroughputRPS),
				benchNum(l.P50*1e3), benchNum(l.P90*1e3), benchNum(l.P99*1e3), benchNum(l.P999*1e3), rep.Errors)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// benchName is a run's benchmark name: its workload, target and load as key=value parts, then
// the generator's GOMAXPROCS.
func benchName(r *result.Run, gomaxprocs int) string {
	name := "BenchmarkAuthz/workload=" + namePart(r.Workload) + "/target=" + namePart(r.Label()) + "/load=" + benchLoad(r.Load)
	if s := r.Scale; s != nil {
		name += "/" + namePart(s.Param) + "=" + fmt.Sprint(s.N)
	}
	if r.Load.GeneratorProcs > 0 {
		gomaxprocs = r.Load.GeneratorProcs
	}
	if gomaxprocs > 0 {
		name += fmt.Sprintf("-%d", gomaxprocs)
	}
	return name
}

// benchLoad is a load as a benchmark name's part: its schedule's kind and value, and in open loop
// the connections: "workers8", "rate2000x64", "stages30s:0-2000,1m0s:2000x64",
// "replay200events:1.5s:speed2x64".
func benchLoad(l result.Load) string {
	s := l.Schedule()
	load := s.Kind() + namePart(s.Value(benchNum))
	if l.Open() {
		load += "x" + strconv.Itoa(l.Connections)
	}
	return load
}

// namePart keeps a value inside one part of a benchmark name: no "/" (a new part), no space (the
// end of the name).
func namePart(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '/':
			return ':'
		case ' ', '\t', '\n', '\r':
			return '_'
		}
		return r
	}, s)
}

// oneLine keeps a configuration value on its line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// benchNum writes a figure as Go's testing package does: no exponent, a few decimals for small
// values.
func benchNum(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3f", v)
}
