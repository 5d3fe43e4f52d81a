package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/result"
)

// committedResults are result files committed under docs/results, rendered by the renderer
// as it was before reports were built from typed rows (testdata/committed holds that output):
// the report of a kept file must not change under it.
var committedResults = []struct {
	file string
	// must are cells and notes a reader finds in the table, whatever the layout.
	must []string
}{
	{"quickstart-2026-11-23.json", []string{
		"Workload  Target        Load       req/s ± sd          P50     P50 over nop       P95     P99      P99.9    errors  SUT CPU, RSS       × vs first       × vs opa\n",
		"nop       opa/server    4 workers  5,443 ± 73.4        583µs   -                  1.50ms  2.56ms   11.8ms   0       0.98 cores, 45 MB  78.8× †          1.00×\n",
		"rbac      opa/cli       2 workers  59.7 ± 3.0          33.4ms  +5.11ms ±6.08ms ~  42.4ms  ≥48.6ms  ≥54.0ms  0       -                  1.00× (opa/cli)  1.00×\n",
		"api ‡     cedar/inproc  2 workers  205,613 ± 2,970     8.23µs  +7.05µs ±471ns     13.5µs  28.8µs   108µs    0       -                  3,360× †         32.0× †\n",
		"risk on opa/server: ≥ marks a percentile with fewer than 10 of the 6923 ok responses beyond it (P99.9: 7)",
		"‡ risk in Cedar, not the same work as in OPA: Cedar is handed the applicant's total monthly debt",
		"× vs opa: opa's P50 divided by this row's, same workload, deployment mode and load; above 1 is faster than opa;",
		"(the repetitions took turns, so the interval is a t interval on the logs of the per-turn ratios)",
		"AMD EPYC, 2 cores, GOMAXPROCS 2, linux 6.18.44-fc-v782, go1.26.8, OPA 1.22.2, cedar-go v1.9.0, authzbench devel (f3cbc02224b6, checkout at run time)",
	}},
	{"cli-vs-server-2026-11-23.json", []string{
		"nop       opa/server  1 worker  4,377 ± 106  190µs   -                  456µs   873µs    2.02ms   0       0.90 cores, 43 MB  96.9× †\n",
		"api       opa/cli     1 worker  34.2 ± 3.4   28.2ms  +7.08ms ±7.33ms ~  38.5ms  50.6ms   ≥86.3ms  0       -                  1.00× (opa/cli)\n",
		"nop on opa/cli: ≥ marks a percentile with fewer than 10 of the 1357 ok responses beyond it (P99.9: 1)",
	}},
	{"soak-opa-server-5000rps-2026-11-23.json", []string{
		"rbac      opa/server RATE MISSED  5,000/s x64  3,404       107s  -             184s  192s  193s   940233 !  1.00 cores, 54 MB  1.00× (opa/server)\n",
		"rbac on opa/server RATE MISSED: the rate was not delivered: 940233 of the 3000000 due sends never went out, every one of the 64 connections busy",
		"rbac on opa/server RATE MISSED: 2059657 sends waited more than 1.00ms because all 64 connections were busy: the server fell behind",
		"from the actual send it would read p50 17.0ms, p99 39.5ms; the ok responses alone read p50 111s, p99 192s",
		"rbac on opa/server RATE MISSED: 940233 of 3000000 responses were not served decisions: unsent: 940233",
	}},
	// docs/attribution.md quotes its layers and bands.
	{"attribution-rbac-2026-11-23.json", []string{
		"rbac      opa/server  1,000/s x64  client   10,000     294µs   352µs  415µs  509µs  952µs  1.77ms  2.85ms  328µs  0.29 cores, 55 MB\n",
		"                                   > p99    952µs–2.94ms    100        83 %     21 %          5 %      12 %  1.30ms       223µs         160µs\n",
		"rbac on opa/server, at 1,000 req/s: requests slower than p99 spent 83 % waiting (21 % queued before the send, 62 % in transport and the server's queues), 5 % in the handler outside evaluation, 12 % evaluating (100 sampled)",
	}},
	{"ab-f3cbc02-round1-2026-11-23.json", []string{
		"nop       opa/server    2 workers  6,400       255µs   -             623µs   1.21ms  2.71ms  0       0.99 cores, 45 MB  0.00463×              -\n",
		"rbac      opa/inproc    2 workers  26,669      56.4µs  +47.0µs       148µs   290µs   1.97ms  0       -                  0.223×                0.223×\n",
		"rows with fewer than 2 complete repetitions have no interval: --repeat 5 to compare",
	}},
}

func TestCommittedResultsRenderAsBefore(t *testing.T) {
	for _, c := range committedResults {
		doc, err := result.Read(filepath.Join("..", "..", "docs", "results", c.file))
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(c.file, ".json")
		for _, format := range []string{"table", "markdown"} {
			t.Run(name+"/"+format, func(t *testing.T) {
				f, err := Lookup(format)
				if err != nil {
					t.Fatal(err)
				}
				f = f.Widened() // every column, as before the default view kept a few
				var b bytes.Buffer
				if err := f.Render(&b, doc); err != nil {
					t.Fatal(err)
				}
				compareGolden(t, filepath.Join("committed", name+"."+format), b.Bytes())
				if format != "table" {
					return
				}
				for _, m := range c.must {
					if !strings.Contains(unwrapNotes(b.String()), m) {
						t.Errorf("table lacks %q", m)
					}
				}
			})
		}
		// JSON is the document itself: every field it was read with, the comparisons afresh.
		t.Run(name+"/json", func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "results", c.file))
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := JSON(&b, doc); err != nil {
				t.Fatal(err)
			}
			var want, got map[string]any
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			delete(want, "comparisons")
			// The one rename reading makes: an old run's cedar_differences is Cedar's handed note.
			for _, r := range want["runs"].([]any) {
				info, _ := r.(map[string]any)["workload_info"].(map[string]any)
				if d, ok := info["cedar_differences"]; ok {
					delete(info, "cedar_differences")
					info["handed"] = map[string]any{"engine": "cedar", "language": "Cedar", "what": d}
				}
			}
			gotComparisons := got["comparisons"]
			delete(got, "comparisons")
			if !reflect.DeepEqual(got, want) {
				t.Error("the JSON rendering lost or changed a field of the file")
			}
			fresh, _ := json.Marshal(result.Compare(doc))
			var wantComparisons any
			json.Unmarshal(fresh, &wantComparisons) //nolint:errcheck // just marshalled
			if !reflect.DeepEqual(gotComparisons, wantComparisons) {
				t.Error("the JSON rendering's comparisons are not the document's computed afresh")
			}
		})
	}
}
