package result

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A repetition counts once: Distinct finds it twice however it came in twice, by its id, or,
// without one, by its start time and histogram, or, without that either, by its measured time
// and histogram; and lets through repetitions that are other measurements.
func TestDistinctFindsARepetitionHeldTwice(t *testing.T) {
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	measuredAt := start
	measured := func() *Document { // each a measurement of its own, begun a microsecond after the last
		r := syntheticRun(t, 1, uniform(10_000, 20_000, 100), nil, nil, nil)
		r.Repetitions[0].Started = measuredAt
		measuredAt = measuredAt.Add(time.Microsecond)
		return docOf(r)
	}
	legacy := func(started time.Time) *Document {
		d := docOf(syntheticRun(t, 1, uniform(10_000, 20_000, 100), nil, nil, nil))
		d.Runs[0].Repetitions[0].ID = ""
		d.Runs[0].Repetitions[0].Started = started
		return d
	}
	one := measured()
	for _, tc := range []struct {
		name string
		srcs []Source
		want string // "" when distinct
	}{
		{"one document twice", []Source{{"a.json", one}, {"a.json", one}}, "a.json is given twice (documents 1 and 2)"},
		{"a repetition in two documents", []Source{{"a.json", one}, {"m.json", docOf(one.Runs[0], measured().Runs[0])}},
			"a.json and m.json hold the same repetition (id " + one.Runs[0].Repetitions[0].ID + "): repetition 1 of rbac on opa/server, 4 workers in a.json"},
		{"a repetition twice in one document", func() []Source {
			d := measured()
			d.Runs[0].Repetitions = append(d.Runs[0].Repetitions, d.Runs[0].Repetitions[0])
			return []Source{{"x.json", d}}
		}(), "x.json holds one repetition twice"},
		{"a shard part and the repetition merged from it", func() []Source {
			merged := measured()
			merged.Runs[0].Repetitions[0].Parts = []string{one.Runs[0].Repetitions[0].ID, NewRepetitionID()}
			merged.Runs[0].Repetitions[0].ID = NewRepetitionID()
			return []Source{{"merged.json", merged}, {"s1.json", one}}
		}(), "merged.json and s1.json hold the same repetition"},
		{"no ids, the same start and histogram", []Source{{"old.json", legacy(start)}, {"copy.json", legacy(start)}}, "(the same start time and latency histogram)"},
		{"an id dropped by an older merge", []Source{{"new.json", one}, {"old.json", legacy(start)}}, "(the same start time and latency histogram)"},
		{"no ids nor starts, the same measured time and histogram", []Source{{"old.json", legacy(time.Time{})}, {"copy.json", legacy(time.Time{})}},
			"(no start times: the same measured time, to the nanosecond, and latency histogram)"},
		{"other measurements", []Source{{"a.json", measured()}, {"b.json", measured()}}, ""},
		{"no ids, other starts", []Source{{"a.json", legacy(start)}, {"b.json", legacy(start.Add(time.Nanosecond))}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Distinct(tc.srcs...)
			var twice *CountedTwiceError
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("distinct measurements refused: %v", err)
			case tc.want != "" && (!errors.As(err, &twice) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err = %v, want a repetition counted twice, saying %q", err, tc.want)
			}
		})
	}
}

// Every merge keeps each repetition's id, and refuses to hold one twice; a repetition merged
// from shards gets an id of its parts', the same in whatever order the shards come.
func TestMergesKeepIdentities(t *testing.T) {
	measure := func(turn int) *Document {
		return docOf(syntheticRun(t, turn, uniform(1000, 9000, 50), nil, []int64{80e3}, []int64{20e3}))
	}
	a, b := measure(1), measure(2)
	ab, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if got := ab.Runs[0].Repetitions; len(got) != 2 || got[0].ID != a.Runs[0].Repetitions[0].ID || got[1].ID != b.Runs[0].Repetitions[0].ID {
		t.Fatalf("merged repetitions %+v; want a's and b's ids, in order", got)
	}
	var twice *CountedTwiceError
	if _, err := Merge(ab, b); !errors.As(err, &twice) || !strings.Contains(err.Error(), "document 1 and document 2 hold the same repetition") {
		t.Errorf("a merge with one of its inputs: %v", err)
	}

	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	lat := uniform(10_000, 20_000, 100)
	s1, s2 := shardDoc(t, 1, 2, 2, start, lat, nil, []int64{80e3}, []int64{20e3}), shardDoc(t, 2, 2, 2, start, lat, nil, []int64{80e3}, []int64{20e3})
	forward, err := MergeShards(Source{"s1.json", s1}, Source{"s2.json", s2})
	if err != nil {
		t.Fatal(err)
	}
	backward, err := MergeShards(Source{"s2.json", s2}, Source{"s1.json", s1})
	if err != nil {
		t.Fatal(err)
	}
	f, g := forward.Runs[0].Repetitions[0], backward.Runs[0].Repetitions[0]
	if f.ID == "" || f.ID != g.ID || len(f.Parts) != 2 || f.Parts[0] != s1.Runs[0].Repetitions[0].ID || f.Parts[1] != s2.Runs[0].Repetitions[0].ID {
		t.Errorf("merged shards: id %q parts %q, in the other order id %q; want one id made of the shards' %q and %q",
			f.ID, f.Parts, g.ID, s1.Runs[0].Repetitions[0].ID, s2.Runs[0].Repetitions[0].ID)
	}
	if _, err := Merge(forward, backward); !errors.As(err, &twice) {
		t.Errorf("the same shards merged twice, then merged: %v", err)
	}
}
