package report_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/compare"
	"github.com/authzbench/authzbench/internal/report"
	"github.com/authzbench/authzbench/internal/result"
)

// sineSchedule is a schedule no renderer, merge or compare knows: a rate swinging around its
// mean. Everything a new schedule's description takes is here, as it would be in its own file
// (internal/result/schedule_sine.go), and the test below finds it in every format.
type sineSchedule struct {
	Mean    float64 `json:"mean"`
	Swing   float64 `json:"swing"`
	PeriodS float64 `json:"period_s"`
}

func init() {
	result.RegisterSchedule(result.ScheduleKind{Name: "sine", Read: func(settings json.RawMessage) (result.Schedule, error) {
		var s sineSchedule
		err := json.Unmarshal(settings, &s)
		return s, err
	}})
}

func (sineSchedule) Kind() string { return "sine" }

func (s sineSchedule) period() string {
	return time.Duration(s.PeriodS * float64(time.Second)).String()
}

func (s sineSchedule) Label(thousands func(float64) string) string {
	return "sine " + thousands(s.Mean) + "±" + thousands(s.Swing) + "/s every " + s.period()
}

func (s sineSchedule) Value(num func(float64) string) string {
	return "mean" + num(s.Mean) + ":swing" + num(s.Swing) + ":period" + s.period()
}

func (s sineSchedule) Key() string {
	return "open sine " + s.Value(func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) })
}

func (sineSchedule) Rate() (float64, bool) { return 0, false }

// sineDoc is a committed open-loop result with its run's schedule replaced by a sine.
func sineDoc(t *testing.T, swing float64) *result.Document {
	t.Helper()
	doc, err := result.Read(filepath.Join("..", "..", "docs", "results", "replay-pacing-2026-11-26", "1-1.result.json"))
	if err != nil {
		t.Fatal(err)
	}
	settings, err := json.Marshal(sineSchedule{Mean: 1000, Swing: swing, PeriodS: 60})
	if err != nil {
		t.Fatal(err)
	}
	l := &doc.Runs[0].Load
	l.Replay, l.Connections = nil, 8
	l.Custom = &result.CustomSchedule{Kind: "sine", Settings: settings}
	return doc
}

// A new schedule needs its own file and nothing else: registered there, it is labelled, named
// and keyed by itself in every format, kept apart by compare and refused by merge when its
// settings differ, and its record survives a write and a read.
func TestANewScheduleIsItsOwnFile(t *testing.T) {
	doc := sineDoc(t, 500)
	const label = "sine 1,000±500/s every 1m0s x8"
	const value = "mean1000:swing500:period1m0s"
	want := map[string]string{
		"table":       label,
		"markdown":    "| decisions | `opa/server` | " + label + " |",
		"html":        "decisions · opa/server · " + label,
		"gobench":     "/load=sine" + value + "x8-1\t",
		"openmetrics": `load="sine=` + value + `,connections=8"`,
		"csv":         "sine=" + value,
		"json":        `"schedule": {`,
	}
	for _, name := range append(report.Names(), "openmetrics") {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if name == "openmetrics" {
				if err := report.Prometheus(&b, doc); err != nil {
					t.Fatal(err)
				}
			} else {
				f, err := report.Lookup(name)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.Render(&b, doc); err != nil {
					t.Fatal(err)
				}
			}
			w, ok := want[name]
			if !ok {
				t.Fatalf("format %s has no case here", name)
			}
			text := b.String()
			if name == "csv" {
				rows, err := csv.NewReader(strings.NewReader(text)).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				text = rows[1][len(rows[1])-1]
			}
			if !strings.Contains(text, w) {
				t.Errorf("does not say %q:\n%s", w, text[:min(len(text), 2000)])
			}
			if strings.Contains(text, "unknown") || strings.Contains(text, "rate=0") || strings.Contains(text, "rate0") {
				t.Error("the schedule reads as unknown or as a rate of 0")
			}
		})
	}

	t.Run("written and read back", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "sine.json")
		if err := result.Write(path, doc); err != nil {
			t.Fatal(err)
		}
		back, err := result.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := report.LoadLabel(back.Runs[0].Load); got != label {
			t.Errorf("read back as %q", got)
		}
		if got := back.Runs[0].Load.Key().String(); got != "open sine "+value+" 8" {
			t.Errorf("key %q", got)
		}
	})

	t.Run("compare", func(t *testing.T) {
		same := compare.Compare("a", doc, "b", sineDoc(t, 500), compare.Options{})
		if len(same.Rows) != 1 || same.Rows[0].Missing != "" || same.Rows[0].Load != label {
			t.Errorf("one sine against the same: %+v", same.Rows)
		}
		other := compare.Compare("a", doc, "b", sineDoc(t, 250), compare.Options{})
		if len(other.Rows) != 2 || other.Rows[0].Missing != "new" || other.Rows[1].Missing != "base" {
			t.Errorf("a sine against another swing is matched: %+v", other.Rows)
		}
	})

	t.Run("merge", func(t *testing.T) {
		other := sineDoc(t, 250)
		// Another measurement, else merge refuses it as the same one twice.
		rep := &other.Runs[0].Repetitions[0]
		rep.ID, rep.Started = "another measurement", rep.Started.Add(time.Hour)
		_, err := result.Merge(doc, other)
		if err == nil || !strings.Contains(err.Error(), "load.sine is mean1000:swing250:period1m0s in document 2, mean1000:swing500:period1m0s in document 1") {
			t.Errorf("merge of two swings: %v", err)
		}
	})
}
