package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// Every renderer labels a load from its schedule's one description: a constant rate as it always
// has, stages and a replay by their own words, never as a rate of 0.
func TestLoadLabelsFromTheSchedule(t *testing.T) {
	rate := result.Load{Model: result.OpenLoop, Rate: 2000, Connections: 64}
	stages := result.Load{Model: result.OpenLoop, Stages: "30s:0-2000,1m0s:2000,30s:2000-0", Connections: 64}
	replay := result.Load{Model: result.OpenLoop, Connections: 64, Replay: &result.LoadReplay{Events: 200, SpanS: 1.5, Speed: 2, MaxGapS: 0.25, GapsShortened: 3}}
	closed := result.Load{Model: result.ClosedLoop, Workers: 8}
	one := result.Load{Model: result.ClosedLoop, Workers: 1}
	for _, c := range []struct{ got, want string }{
		{LoadLabel(rate), "2,000/s x64"},
		{LoadLabel(stages), "stages 0→2000/30s, 2000/1m0s, 2000→0/30s x64"},
		{LoadLabel(replay), "replay 200 events/1.5s at 2× x64"},
		{LoadLabel(closed), "8 workers"},
		{LoadLabel(one), "1 worker"},
		{atLoad(rate), "at 2,000 req/s"},
		{atLoad(stages), "under stages 0→2000/30s, 2000/1m0s, 2000→0/30s"},
		{atLoad(replay), "under replay 200 events/1.5s at 2×"},
		{atLoad(closed), "with 8 workers"},
		{atLoad(one), "with 1 worker"},
		{promLoad(rate), "rate=2000,connections=64"},
		{promLoad(stages), "stages=30s:0-2000,1m0s:2000,30s:2000-0,connections=64"},
		{promLoad(replay), "replay=200events:1.5s:speed2:maxgap250ms,connections=64"},
		{promLoad(closed), "workers=8"},
		{benchLoad(rate), "rate2000x64"},
		{benchLoad(stages), "stages30s:0-2000,1m0s:2000,30s:2000-0x64"},
		{benchLoad(replay), "replay200events:1.5s:speed2:maxgap250msx64"},
		{benchLoad(closed), "workers8"},
	} {
		if c.got != c.want {
			t.Errorf("label %q, want %q", c.got, c.want)
		}
	}
	keys := map[result.LoadKey]string{}
	for name, l := range map[string]result.Load{"rate": rate, "stages": stages, "replay": replay, "closed": closed} {
		if other, dup := keys[l.Key()]; dup {
			t.Errorf("%s and %s share a key: compare would make them one row", name, other)
		}
		keys[l.Key()] = name
	}
	// A replay at another speed is another load.
	faster := replay
	faster.Replay = &result.LoadReplay{Events: 200, SpanS: 1.5, Speed: 4, MaxGapS: 0.25}
	if faster.Key() == replay.Key() {
		t.Error("replays at 2× and 4× share a key")
	}
	// Only a schedule of one rate stands on the latency-against-rate chart.
	for name, l := range map[string]result.Load{"stages": stages, "replay": replay, "closed": closed} {
		if x, ok := onRateAxis(&result.Run{Load: l}); ok {
			t.Errorf("a run of %s stands at rate %g on the rate chart", name, x)
		}
	}
	if x, ok := onRateAxis(&result.Run{Load: rate}); !ok || x != 2000 {
		t.Errorf("the rate run stands at %g (%v), want 2000", x, ok)
	}
}

// replayFile is a committed replay run: a decision log replayed at its pace over 64 connections.
const replayFile = "replay-pacing-2026-11-26/1-1.result.json"

// renderEvery renders the document in every registered format and as OpenMetrics, by name.
func renderEvery(t *testing.T, doc *result.Document) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range Names() {
		f, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := f.Render(&b, doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = b.String()
	}
	var b bytes.Buffer
	if err := Prometheus(&b, doc); err != nil {
		t.Fatal(err)
	}
	out["openmetrics"] = b.String()
	return out
}

// csvColumn is the named column of the CSV's rows.
func csvColumn(t *testing.T, text, column string) []string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(rows[0], column)
	if i < 0 {
		t.Fatalf("no column %s in %v", column, rows[0])
	}
	var out []string
	for _, r := range rows[1:] {
		out = append(out, r[i])
	}
	return out
}

// A replay run's load reads as the replay in every format: gobench once named it
// "load=rate0.000x64" and OpenMetrics "rate=0,connections=64", while the table was right. A
// format added without a case here fails, so that its replay label is looked at.
func TestReplayLoadLabelInEveryFormat(t *testing.T) {
	doc := committedDoc(t, replayFile)
	const label = "replay 10000 events/9.999s at 1× x64"
	checks := map[string]func(t *testing.T, text string){
		"table":    contains(label),
		"markdown": contains("| decisions | `opa/server` | " + label + " |"),
		"html":     contains("decisions · opa/server · " + label),
		"gobench":  contains("BenchmarkAuthz/workload=decisions/target=opa:server/load=replay10000events:9.999s:speed1x64-1\t"),
		"openmetrics": contains(`authzbench_throughput_rps{target="opa/server",workload="decisions",` +
			`load="replay=10000events:9.999s:speed1,connections=64",repetition="all"}`),
		"csv": func(t *testing.T, text string) {
			if got := csvColumn(t, text, "schedule"); !slices.Equal(got, []string{"replay=10000events:9.999s:speed1"}) {
				t.Errorf("schedule column %q", got)
			}
		},
		"json": func(t *testing.T, text string) {
			var back result.Document
			if err := json.Unmarshal([]byte(text), &back); err != nil {
				t.Fatal(err)
			}
			l := back.Runs[0].Load
			if s := l.Schedule(); s.Kind() != "replay" || LoadLabel(l) != label || l.Replay.Speed != 1 || l.Replay.Events != 10000 {
				t.Errorf("the document reads back as %s, %q, %+v", s.Kind(), LoadLabel(l), l.Replay)
			}
		},
	}
	out := renderEvery(t, doc)
	for name, text := range out {
		t.Run(name, func(t *testing.T) {
			check, ok := checks[name]
			if !ok {
				t.Fatalf("format %s has no check of a replay's load label here", name)
			}
			check(t, text)
			for _, wrong := range []string{"rate0", "rate=0", "0/s x64", "at 0 req/s"} {
				if strings.Contains(text, wrong) {
					t.Errorf("reads the replay as a rate: %q", wrong)
				}
			}
		})
	}
}

func contains(want string) func(t *testing.T, text string) {
	return func(t *testing.T, text string) {
		t.Helper()
		if !strings.Contains(text, want) {
			t.Errorf("does not say %q:\n%s", want, text[:min(len(text), 3000)])
		}
	}
}
