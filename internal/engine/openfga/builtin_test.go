package openfga

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/workload"
)

// docshare's Checks carry their relationships as contextual tuples, never more than OpenFGA's
// 100, every tuple the decision reads among them; a size whose requests carry more stores the
// rest, and says so (‡), while a size that fits stores nothing and does the same work.
func TestDocshareChecksFitOpenFGA(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stores bool
	}{{"docshare-5", false}, {"docshare-20", false}, {"docshare-200", true}} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := workload.Builtin(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			b := builtinOf(w)
			if b == nil || b.modelFile != "docshare.fga" {
				t.Fatalf("no OpenFGA version")
			}
			handed := Registered.(engine.Handed).Handed(w)
			if (len(b.tuples) > 0) != tc.stores || (handed != "") != tc.stores {
				t.Errorf("%d tuples stored, differences %q; want stored and said: %v", len(b.tuples), handed, tc.stores)
			}
			if tc.stores && !strings.Contains(handed, fmt.Sprintf("the %d distinct tuples beyond", len(b.tuples))) {
				t.Errorf("differences %q do not count the %d tuples stored", handed, len(b.tuples))
			}
			for i, in := range w.Inputs {
				var c struct {
					Contextual []checkTuple `json:"contextual_tuples"`
				}
				if err := json.Unmarshal(Registered.Request(in), &c); err != nil {
					t.Fatalf("input %d: %v", i, err)
				}
				if len(c.Contextual) == 0 || len(c.Contextual) > MaxContextualTuples {
					t.Fatalf("input %d: %d contextual tuples", i, len(c.Contextual))
				}
				// Every tuple the decision reads is carried: what a stored one replaces is padding.
				check := w.Relationships.Checks[i]
				for _, r := range check.Carried[:check.Reads] {
					k := tupleKey(r)
					if !slices.Contains(c.Contextual, checkTuple{Object: k.Object, Relation: k.Relation, User: k.User}) {
						t.Fatalf("input %d: %s, which the decision reads, is not among its contextual tuples", i, r)
					}
				}
			}
		})
	}
}
