package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/authzbench/authzbench/internal/result"
)

// latencyBucketsS are the upper bounds of the latency histogram's buckets, in seconds: 1, 2.5
// and 5 of each decade from 1 µs to 500 s, which covers an in-process decision, a
// process-per-decision CLI and an overloaded open-loop run's queue alike.
var latencyBucketsS = func() []float64 {
	var b []float64
	for exp := -6; exp <= 2; exp++ {
		for _, m := range []string{"1", "2.5", "5"} {
			// Parsed from text, so that 2.5e-6 reads 2.5e-06 in the le label, not 2.4999999999999998e-06.
			v, _ := strconv.ParseFloat(fmt.Sprintf("%se%d", m, exp), 64)
			b = append(b, v)
		}
	}
	return b
}()

// summaryQuantiles are the merged percentiles written as a summary, by quantile.
var summaryQuantiles = []struct {
	q   float64
	get func(result.Percentiles) float64
}{
	{0.5, func(p result.Percentiles) float64 { return p.P50 }},
	{0.9, func(p result.Percentiles) float64 { return p.P90 }},
	{0.95, func(p result.Percentiles) float64 { return p.P95 }},
	{0.99, func(p result.Percentiles) float64 { return p.P99 }},
	{0.999, func(p result.Percentiles) float64 { return p.P999 }},
	{0.9999, func(p result.Percentiles) float64 { return p.P9999 }},
}

// Prometheus writes the summary of a document's runs as OpenMetrics text, ending "# EOF", for
// a Pushgateway or a file a scraper reads. Every series carries the labels target, workload,
// load and repetition: "1", "2", … for one repetition's figures (its throughput, its responses
// by class, its latency histogram rebuilt from the repetition's HDR histogram), "all" for the
// figures of the merged repetitions (the percentiles as a summary, the server's CPU and
// memory). Values are gauges, not counters: a result is a finished measurement, and a second
// push replaces it rather than adding to it. Latency is in seconds, over ok responses only.
//
// The text is written here rather than by Prometheus's client library, so that report stays a
// reader of result documents that links nothing else; its test parses it with Prometheus's own
// parser.
func Prometheus(w io.Writer, doc *result.Document) error {
	fams, err := prometheusFamilies(doc)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	for _, f := range fams.list {
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s %s\n", f.name, escapeHelp(f.help), f.name, f.typ)
		for _, s := range f.samples {
			fmt.Fprintf(bw, "%s%s %s\n", s.name, s.labels, promFloat(s.value))
		}
	}
	bw.WriteString("# EOF\n")
	return bw.Flush()
}

// family is one metric family: its samples in the order written.
type family struct {
	name, help, typ string
	samples         []sample
}

type sample struct {
	name   string
	labels string // {a="x",b="y"}
	value  float64
}

type families struct {
	list  []*family
	byKey map[string]*family
}

func (fs *families) family(name, help, typ string) *family {
	f, ok := fs.byKey[name]
	if !ok {
		f = &family{name: name, help: help, typ: typ}
		fs.byKey[name] = f
		fs.list = append(fs.list, f)
	}
	return f
}

func (fs *families) gauge(name, help string, labels []string, v float64) {
	f := fs.family(name, help, "gauge")
	f.samples = append(f.samples, sample{name, promLabels(labels), v})
}

// promLabelName is an engine's name as a label name: what OpenMetrics does not allow in one
// ("-", "/") becomes "_".
func promLabelName(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, name)
}

// promLabels writes label pairs (name, value, name, value …) as OpenMetrics does, the values
// escaped.
func promLabels(kv []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(kv[i+1]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`).Replace(s)
}

// promFloat writes a value as OpenMetrics reads it: shortest form, whole numbers without an
// exponent, +Inf spelled out.
func promFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', -1, 64) // counts as integers, as OpenMetrics wants them
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// promLoad is a run's load as a label value, its schedule's kind and value and in open loop the
// connections: "workers=8", "rate=2000,connections=64",
// "replay=200events:1.5s:speed2,connections=64".
func promLoad(l result.Load) string {
	s := l.Schedule()
	load := s.Kind() + "=" + s.Value(func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) })
	if l.Open() {
		load += ",connections=" + strconv.Itoa(l.Connections)
	}
	return load
}

func prometheusFamilies(doc *result.Document) (*families, error) {
	fs := &families{byKey: map[string]*family{}}
	e := doc.Env
	var engines []string
	for _, v := range e.EngineVersions() {
		engines = append(engines, promLabelName(v.Name), v.Version)
	}
	fs.gauge("authzbench_build_info", "What measured: authzbench's version and commit, the engines linked in, the machine.",
		slices.Concat([]string{"authzbench", e.Authzbench, "commit", e.Commit}, engines, []string{"go", e.Go,
			"cpu", e.CPUModel, "cores", strconv.Itoa(e.Cores), "pinning", e.Pinning}), 1)
	// The families in the order a reader meets them, whatever runs have.
	fs.family("authzbench_throughput_rps", "Ok responses per second.", "gauge")
	fs.family("authzbench_responses", "Responses by class: ok, or the class of error (wrong_decision, http_503, timeout, ...).", "gauge")
	fs.family("authzbench_latency_seconds", "Latency of ok responses, from the repetition's HDR histogram (open loop: from the intended send time).", "histogram")
	fs.family("authzbench_latency_merged_seconds", "Latency percentiles over all repetitions merged, as the result's summary.latency_us (ok responses; open loop with unsent sends: those too, at their lower bound).", "summary")
	// A scenario may run the same target, workload and load twice (a capacity search that
	// comes back to a rate): the later ones get "#2", "#3" in their load label, so no two
	// series share their labels.
	seen := map[[3]string]int{}
	for i := range doc.Runs {
		r := &doc.Runs[i]
		load := promLoad(r.Load)
		key := [3]string{r.Label(), r.Workload, load}
		seen[key]++
		if n := seen[key]; n > 1 {
			load += " #" + strconv.Itoa(n)
		}
		base := func(rep string, more ...string) []string {
			return append([]string{"target", r.Label(), "workload", r.Workload, "load", load, "repetition", rep}, more...)
		}
		for j, rep := range r.Repetitions {
			name := strconv.Itoa(j + 1)
			fs.gauge("authzbench_throughput_rps", "", base(name), rep.ThroughputRPS)
			fs.gauge("authzbench_responses", "", base(name, "class", "ok"), float64(rep.OK))
			classes := make([]string, 0, len(rep.ErrorClasses))
			for c := range rep.ErrorClasses {
				classes = append(classes, c)
			}
			sort.Strings(classes)
			for _, c := range classes {
				fs.gauge("authzbench_responses", "", base(name, "class", c), float64(rep.ErrorClasses[c]))
			}
			if rep.HDR == "" {
				continue
			}
			if err := latencyHistogram(fs.family("authzbench_latency_seconds", "", "histogram"), base(name), rep); err != nil {
				return nil, fmt.Errorf("%s on %s, repetition %d: %w", r.Workload, r.Label(), j+1, err)
			}
		}
		s := r.Summary
		fs.gauge("authzbench_throughput_rps", "", base("all"), s.ThroughputRPS.Mean)
		if s.OK > 0 {
			f := fs.family("authzbench_latency_merged_seconds", "", "summary")
			for _, q := range summaryQuantiles {
				f.samples = append(f.samples, sample{f.name, promLabels(base("all", "quantile", promFloat(q.q))), q.get(s.LatencyUS) / 1e6})
			}
			// In open loop the summary's latency charges the sends a stall kept back: they are
			// counted with the ok responses, as its quantiles and mean hold them.
			n := float64(s.OK)
			if o := s.Open; o != nil && o.LatencyIncludesUnsent {
				n += float64(o.Unsent)
			}
			f.samples = append(f.samples,
				sample{f.name + "_sum", promLabels(base("all")), s.LatencyUS.Mean * n / 1e6},
				sample{f.name + "_count", promLabels(base("all")), n})
		}
		if o := s.Open; o != nil {
			missed := 0.0
			if o.RateMissed {
				missed = 1
			}
			fs.gauge("authzbench_rate_missed", "Open loop: 1 when the rate asked for was not delivered.", base("all"), missed)
		}
		if res := r.SUTResources; res != nil {
			fs.gauge("authzbench_sut_cpu_cores", "CPU cores the server authzbench started used, mean over the measured phases.", base("all"), res.CPUCoresMean)
			fs.gauge("authzbench_sut_rss_bytes", "Largest resident memory of the server authzbench started.", base("all"), res.RSSMaxMB*1024*1024)
		}
	}
	// A family no run had (no open loop: no summary, say) is left out.
	kept := fs.list[:0]
	for _, f := range fs.list {
		if len(f.samples) > 0 {
			kept = append(kept, f)
		}
	}
	fs.list = kept
	return fs, nil
}

// latencyHistogram adds a repetition's ok latencies to f as a Prometheus histogram: each bucket
// counts the recorded values at or below its bound (an HDR bucket counts toward a bound when
// its highest equivalent value is within it).
func latencyHistogram(f *family, labels []string, rep result.Repetition) error {
	h, err := result.DecodeHistogram(rep.HDR)
	if err != nil {
		return err
	}
	bars := h.Distribution()
	var total int64
	k := 0
	for _, le := range latencyBucketsS {
		bound := int64(math.Round(le * 1e9))
		for ; k < len(bars) && bars[k].To <= bound; k++ {
			total += bars[k].Count
		}
		f.samples = append(f.samples, sample{f.name + "_bucket", promLabels(append(labels, "le", promFloat(le))), float64(total)})
	}
	count := h.TotalCount()
	f.samples = append(f.samples, sample{f.name + "_bucket", promLabels(append(labels, "le", "+Inf")), float64(count)})
	// The repetition's own mean is exact where the histogram's is rounded to its buckets, but
	// it charges unsent sends the buckets do not hold.
	meanS := rep.LatencyUS.Mean / 1e6
	if meanS == 0 || rep.Unsent > 0 {
		meanS = h.Mean() / 1e9
	}
	f.samples = append(f.samples,
		sample{f.name + "_count", promLabels(labels), float64(count)},
		sample{f.name + "_sum", promLabels(labels), meanS * float64(count)})
	return nil
}
