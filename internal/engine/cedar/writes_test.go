package cedar

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/change/changetest"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/engine/cedar/cedarserver"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// rbac's own stream in Cedar's form: each change, once acknowledged, is seen by the next
// decision of every input it sets, in process (the engine swapped in) and served (the update
// endpoint swaps it before it answers); a worker made before the first write sees them too.
func TestWritesSeenOnceAcknowledged(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	made, err := workload.BuiltinChanges(w, 12)
	if err != nil {
		t.Fatal(err)
	}
	tg := &inproc{}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	local, err := tg.Writer()
	if err != nil {
		t.Fatal(err)
	}
	d := tg.Worker()
	loaded, err := Load(context.Background(), nil, w)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(cedarserver.Handler(loaded.Engine))
	defer srv.Close()
	served := &updatePoster{client: srv.Client(), url: srv.URL + cedarserver.UpdatePath}
	ask := func(i int) bool {
		resp, err := srv.Client().Post(srv.URL+cedarserver.Path, "application/json", bytes.NewReader(Engine.Request(w.Inputs[i])))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var a struct{ Decision string }
		if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || resp.StatusCode != 200 {
			t.Fatalf("input %d: %s %v", i+1, resp.Status, err)
		}
		return a.Decision == "allow"
	}
	decide := func(i int) bool {
		out := d.Decide(context.Background(), i)
		if out.Kind != verify.Decided {
			t.Fatalf("input %d: %v %v", i+1, out.Kind, out.Err)
		}
		return out.Allow
	}
	flipped := 0
	for k, c := range made {
		form, err := engine.WriteFor(Name, w, c)
		if err != nil {
			t.Fatal(err)
		}
		before := map[int]bool{}
		for i := range c.Sets {
			before[i] = decide(i)
			if ask(i) != before[i] {
				t.Fatalf("change %d: input %d decided apart in process and served before it", k+1, i+1)
			}
		}
		for name, a := range map[string]change.Applier{"in process": local, "served": served} {
			if ack := a.Apply(context.Background(), k+1, change.Change{Sets: c.Sets, Form: form}); ack.Class != "" || ack.Err != nil {
				t.Fatalf("%s: change %d (%s): %s %v", name, k+1, c.What, ack.Class, ack.Err)
			}
		}
		for i, want := range c.Sets {
			if got := decide(i); got != want {
				t.Errorf("in process: change %d (%s): input %d decided %v right after the acknowledgement, want %v", k+1, c.What, i+1, got, want)
			}
			if got := ask(i); got != want {
				t.Errorf("served: change %d (%s): input %d decided %v right after the acknowledgement, want %v", k+1, c.What, i+1, got, want)
			}
			if before[i] != want {
				flipped++
			}
		}
	}
	if flipped == 0 {
		t.Fatal("no change flipped a decision: the test shows nothing")
	}
	// An update the schema does not take is refused, naming what is wrong.
	for name, a := range map[string]change.Applier{"in process": local, "served": served} {
		bad := []byte(`{"entities": [{"uid": {"type": "User", "id": "u"}, "attrs": {"suspended": "no"}, "parents": []}]}`)
		if ack := a.Apply(context.Background(), 13, change.Change{Form: bad}); ack.Class == "" || ack.Err == nil || !strings.Contains(ack.Err.Error(), "suspended: expected Bool") {
			t.Errorf("%s: an entity against the schema: %+v, want refused naming the attribute", name, ack)
		}
	}
	if _, err := Engine.(engine.Writer).Write(w, workload.Change{Patch: []byte(`[{"op": "replace", "path": "/rbac/roles/admin", "value": {}}]`), What: "x"}); err == nil ||
		!strings.Contains(err.Error(), "/rbac/users/NAME/roles") {
		t.Errorf("a change of the roles table: %v, want refused naming what Cedar's writes read", err)
	}
}

// A cedar/server of several replicas takes no writes: each holds its own entities.
func TestServerReplicasRefuseWrites(t *testing.T) {
	if _, err := kinds.WriterOf(&server{replicas: 2}); err == nil || !strings.Contains(err.Error(), "2 replicas") {
		t.Errorf("err %v, want replicas refused", err)
	}
}

// rbac's built-in policy stream in Cedar's form (engine.PolicyWriter), in process: each change
// is an update replacing the policy set, and once it is swapped in every input is decided as the
// stream expects at that version, on a worker made before the first write. A workload that is
// not rbac's is refused before any load.
func TestBuiltinPolicyStreamSeenOnceAcknowledged(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	made, err := workload.BuiltinPolicyChanges(w, 6)
	if err != nil {
		t.Fatal(err)
	}
	stream := changetest.Stream(t, w, made, func(c workload.Change) (json.RawMessage, error) {
		form, err := engine.WriteFor(Name, w, c)
		if err == nil {
			err = (cedar{}).CheckWrite(form)
		}
		return form, err
	})
	tg := &inproc{}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	applier, err := tg.Writer()
	if err != nil {
		t.Fatal(err)
	}
	changetest.DecidesByEachVersion(t, applier, tg.Worker(), stream)
	api, err := workload.Builtin("api")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (cedar{}).WritePolicy(api, workload.Change{Policy: &workload.RBACPolicy{}}); err == nil {
		t.Error("a policy change of a workload that is not rbac's was written")
	}
}
