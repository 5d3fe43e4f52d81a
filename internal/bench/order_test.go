package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/load"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/scenario"
)

// The order of repetitions is checked where it happens: a fake server that answers both
// targets writes down which one sent each request, opa/server ({"input": ...}) as "o" and the
// http target ({"via": "http", ...}) as "h". Each target's start-up probe is one request, then
// every turn is 5 requests of one worker, without warm-up.
func TestRepetitionOrder(t *testing.T) {
	for _, tc := range []struct {
		order scenario.Order
		seen  string // the server's log with runs of one letter squeezed to one
		turns map[string][]int
	}{
		// Both targets are started (one probe each) before any load, then take turns.
		{scenario.Interleaved, "ohohohoh", map[string][]int{"opa/server": {1, 3, 5}, "http": {2, 4, 6}}},
		{scenario.Sequential, "oh", map[string][]int{"opa/server": {1, 2, 3}, "http": {4, 5, 6}}},
	} {
		t.Run(tc.order.String(), func(t *testing.T) {
			var mu sync.Mutex
			var seen []byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var body struct {
					Via   string `json:"via"`
					Input struct{ ID int }
				}
				json.NewDecoder(r.Body).Decode(&body)
				who := byte('o')
				if body.Via == "http" {
					who = 'h'
				}
				mu.Lock()
				seen = append(seen, who)
				mu.Unlock()
				fmt.Fprintf(w, `{"result": %t}`, body.Input.ID%2 == 0)
			}))
			defer srv.Close()
			spec := userWorkload(t, 10)
			each := load.Spec{Workers: 1, Requests: 5, MaxTime: 30 * time.Second}
			s := &scenario.Scenario{Name: "order", Source: "test", Repeat: 3, Order: tc.order,
				Workloads: []scenario.WorkloadRef{{Name: spec.Name, User: spec}},
				Targets: []scenario.TargetRef{{Name: "opa/server", Timeout: 5 * time.Second, Load: each},
					{Name: "http", Timeout: 5 * time.Second, Load: each}}}
			setOptions(t, s, map[string]any{"url": srv.URL, "body": `{"via": "http", "input": {{input}}}`, "decision_path": "/result"})
			o := Options{}
			doc := &result.Document{}
			if err := Run(context.Background(), s, o, doc); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			log := string(seen)
			mu.Unlock()
			if got := squeeze(log); got != tc.seen {
				t.Errorf("server saw %s, squeezed %s; want %s", log, got, tc.seen)
			}
			if len(log) != 2+2*3*5 {
				t.Errorf("server saw %d requests, want 2 probes and 30 measured", len(log))
			}
			if doc.Order != tc.order.String() || len(doc.Runs) != 2 {
				t.Fatalf("order %q, %d runs", doc.Order, len(doc.Runs))
			}
			var starts []time.Time
			for _, r := range doc.Runs {
				var turns []int
				for _, rep := range r.Repetitions {
					turns = append(turns, rep.Turn)
					starts = append(starts, rep.Started)
				}
				if fmt.Sprint(turns) != fmt.Sprint(tc.turns[r.Target]) {
					t.Errorf("%s ran turns %v, want %v", r.Target, turns, tc.turns[r.Target])
				}
				if r.Summary.OK != 15 || r.Partial {
					t.Errorf("%s: ok %d partial %t, want 15 and complete", r.Target, r.Summary.OK, r.Partial)
				}
			}
			// The recorded start times agree with the turns.
			byTurn := map[int]time.Time{}
			for i, r := range doc.Runs {
				for j, rep := range r.Repetitions {
					byTurn[rep.Turn] = starts[i*3+j]
				}
			}
			for turn := 2; turn <= 6; turn++ {
				if !byTurn[turn].After(byTurn[turn-1]) {
					t.Errorf("turn %d started at %s, not after turn %d at %s", turn, byTurn[turn], turn-1, byTurn[turn-1])
				}
			}
		})
	}
}

// squeeze writes each run of one letter once: "oooohh" is "oh".
func squeeze(s string) string {
	var b strings.Builder
	for i := range len(s) {
		if i == 0 || s[i] != s[i-1] {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// A run stopped in the middle of its turns keeps every repetition measured, on every target:
// the one whose turn was cut is partial, and so is the one that had not had all its turns; each
// counts the connections its own repetitions could have opened.
func TestStoppedInterleavedRunKeepsEveryRepetition(t *testing.T) {
	srv := parityServer(t)
	spec := userWorkload(t, 10)
	each := load.Spec{Workers: 2, Duration: time.Second}
	s := &scenario.Scenario{Name: "stop", Source: "test", Repeat: 3, Order: scenario.Interleaved,
		Workloads: []scenario.WorkloadRef{{Name: spec.Name, User: spec}},
		Targets: []scenario.TargetRef{{Name: "opa/server", Timeout: 5 * time.Second, Load: each},
			{Name: "http", Timeout: 5 * time.Second, Load: each}}}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	setOptions(t, s, map[string]any{"url": srv.URL, "decision_path": "/result"})
	o := Options{}
	o.Progress = func(st Status) {
		if st.Target == "http" && st.Repetition == 2 && st.Load.OK > 0 {
			cancel(fmt.Errorf("interrupted by test"))
		}
	}
	doc := &result.Document{}
	err := Run(ctx, s, o, doc)
	var stopped *StoppedError
	if !errors.As(err, &stopped) {
		t.Fatalf("err = %v, want a StoppedError", err)
	}
	want := map[string]struct{ reps, complete int }{"opa/server": {2, 2}, "http": {2, 1}}
	if len(doc.Runs) != 2 {
		t.Fatalf("%d runs, want both targets", len(doc.Runs))
	}
	for _, r := range doc.Runs {
		complete := 0
		for _, rep := range r.Repetitions {
			if !rep.Partial {
				complete++
			}
		}
		w := want[r.Target]
		if len(r.Repetitions) != w.reps || complete != w.complete || !r.Partial || r.Error == "" {
			t.Errorf("%s: %d repetitions, %d complete, partial %t, error %q; want %d, %d, partial with a reason",
				r.Target, len(r.Repetitions), complete, r.Partial, r.Error, w.reps, w.complete)
		}
		if c := r.Summary.Connections; c == nil || c.Expected != int64(2*len(r.Repetitions)) || c.Opened > c.Expected || c.Opened == 0 {
			t.Errorf("%s: connections %+v, want at most 2 per repetition measured, expected %d", r.Target, c, 2*len(r.Repetitions))
		}
	}
}
