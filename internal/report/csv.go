package report

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/authzbench/authzbench/internal/result"
)

func init() {
	Register(Format{Name: "csv", Render: CSV, Several: csvSeveral, Data: true})
}

// csvHeader names the columns of the CSV format: one row per run, plain numbers in fixed units
// (microseconds, requests per second, cores, MB) so a spreadsheet or pandas reads them as they
// are; an empty cell is a figure the run does not have. model, workers, rate and connections are
// the load's fields as the document records them (rate 0 where the schedule holds no one rate);
// schedule, last, names the schedule as OpenMetrics' load label does: "workers=8", "rate=2000",
// "stages=30s:0-2000,1m0s:2000", "replay=200events:1.5s:speed2".
var csvHeader = []string{
	"workload", "target", "model", "workers", "rate", "connections", "repetitions",
	"requests", "ok", "errors", "wrong_decision",
	"rps_mean", "rps_sd", "rps_ci95_low", "rps_ci95_high",
	"p50_us", "p75_us", "p90_us", "p95_us", "p99_us", "p999_us", "p9999_us", "max_us", "mean_us",
	"p50_over_nop_us", "p50_over_nop_ci95_half_us",
	"vs_first", "vs_first_different", "vs_engine", "vs_engine_different",
	"rate_missed", "partial", "sut_cpu_cores_mean", "sut_rss_max_mb",
	"scale_series", "scale_param", "scale_n", "schedule",
}

// CSV writes one row per run under a header row (RFC 4180).
func CSV(w io.Writer, doc *result.Document) error {
	return writeCSV(w, nil, []*result.Document{doc})
}

// csvSeveral writes the runs of several documents as one table, its first column naming the
// file each row came from: the rows stay apart by file, as under the other formats' headings.
func csvSeveral(w io.Writer, names []string, docs []*result.Document) error {
	return writeCSV(w, names, docs)
}

func writeCSV(w io.Writer, names []string, docs []*result.Document) error {
	cw := csv.NewWriter(w)
	head := csvHeader
	if names != nil {
		head = append([]string{"file"}, csvHeader...)
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for i, doc := range docs {
		v := Build(doc)
		for j, r := range v.Rows {
			rec := csvRecord(r, &doc.Runs[j])
			if names != nil {
				rec = append([]string{names[i]}, rec...)
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvRecord(r Row, run *result.Run) []string {
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	whole := func(v uint64) string { return strconv.FormatUint(v, 10) }
	s := run.Summary
	rec := []string{
		r.Workload, r.Target, string(r.Load.Model), strconv.Itoa(r.Load.Workers), num(r.Load.Rate), strconv.Itoa(r.Load.Connections),
		strconv.Itoa(len(run.Repetitions)),
		whole(s.Requests), whole(s.OK), whole(s.Errors), whole(s.WrongDecision),
		num(r.Throughput.Mean), num(r.Throughput.SD), num(r.Throughput.CI95[0]), num(r.Throughput.CI95[1]),
	}
	if r.Served {
		l := r.Latency
		for _, p := range []float64{l.P50, l.P75, l.P90, l.P95, l.P99, l.P999, l.P9999, l.Max, l.Mean} {
			rec = append(rec, num(p))
		}
	} else {
		rec = append(rec, make([]string, 9)...)
	}
	over, half := "", ""
	if d := r.OverFloor; d != nil {
		over = num(d.US)
		if d.HasInterval {
			half = num(d.HalfUS)
		}
	}
	rec = append(rec, over, half)
	rec = append(rec, ratioCells(r.VsFirst)...)
	rec = append(rec, ratioCells(r.VsEngine)...)
	rec = append(rec, strconv.FormatBool(r.RateMissed), strconv.FormatBool(r.Partial))
	if res := r.SUT; res != nil {
		rec = append(rec, num(res.CPUCoresMean), num(res.RSSMaxMB))
	} else {
		rec = append(rec, "", "")
	}
	if sc := run.Scale; sc != nil {
		rec = append(rec, sc.Series, sc.Param, strconv.Itoa(sc.N))
	} else {
		rec = append(rec, "", "", "")
	}
	sched := run.Load.Schedule()
	return append(rec, sched.Kind()+"="+sched.Value(num))
}

// ratioCells are a ratio and whether its interval calls a difference; both empty without one.
func ratioCells(r Ratio) []string {
	if r.Value == 0 {
		return []string{"", ""}
	}
	return []string{strings.TrimRight(strings.TrimRight(strconv.FormatFloat(r.Value, 'f', 4, 64), "0"), "."), strconv.FormatBool(r.Different)}
}
