package casbin

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// rbac's own stream in Casbin's form, applied to casbin/inproc's own enforcer and to the Casbin
// server's roles endpoint: each change, once acknowledged, is seen by the next decision of every
// input it sets, and the run's shared enforcer, which other targets of the run decide with, is
// left as loaded. A change the server cannot read is refused, 400.
func TestWritesSeenOnceAcknowledged(t *testing.T) {
	w, err := workload.Builtin("rbac")
	if err != nil {
		t.Fatal(err)
	}
	// Odd: the last change revokes, so the world written differs from the one loaded.
	made, err := workload.BuiltinChanges(w, 11)
	if err != nil {
		t.Fatal(err)
	}
	common := kinds.Common{TempDir: t.TempDir(), Prepared: engine.NewPrepared()}
	tg, err := kinds.New("casbin/inproc", common, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	applier, err := kinds.WriterOf(tg)
	if err != nil {
		t.Fatal(err)
	}
	d := tg.Worker()
	enf, err := NewEnforcer(tg.(*casbinInproc).loaded.Files)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(enf))
	defer srv.Close()
	served := &rolesPoster{client: srv.Client(), url: srv.URL + RolesPath}
	ask := func(i int) bool { return askServed(t, srv, w, i) }
	decide := func(d kinds.Decider, i int) bool {
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
			before[i] = decide(d, i)
		}
		for name, a := range map[string]change.Applier{"in process": applier, "served": served} {
			if ack := a.Apply(context.Background(), k+1, change.Change{Sets: c.Sets, Form: form}); ack.Class != "" || ack.Err != nil {
				t.Fatalf("%s: change %d (%s): %s %v", name, k+1, c.What, ack.Class, ack.Err)
			}
		}
		for i, want := range c.Sets {
			if got := decide(d, i); got != want {
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
	if ack := served.Apply(context.Background(), 12, change.Change{Form: []byte(`{"roles": {"u": ["active"]}}`)}); ack.Class != "http_400" {
		t.Errorf("the reserved link: %+v, want http_400", ack)
	}
	if flipped == 0 {
		t.Fatal("no change flipped a decision: the test shows nothing")
	}
	// The shared enforcer, which the run's other targets decide with, decides as loaded.
	differs := false
	for i, want := range made[len(made)-1].Sets {
		differs = differs || want != (w.Inputs[i].Expect == workload.ExpectAllow)
	}
	if !differs {
		t.Fatal("the last change leaves every input it sets as loaded: the check below shows nothing")
	}
	shared, err := Load(context.Background(), common.Prepared, w)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range w.Inputs {
		if c := verify.Classify(in.Expect, shared.Decide(i)); c != verify.OK {
			t.Fatalf("the shared enforcer: input %d %s after the writes", i+1, verify.Name(c, 0))
		}
	}
}

// askServed asks casbin/server's decision endpoint at srv for w's input i and returns its answer.
func askServed(t *testing.T, srv *httptest.Server, w *workload.Workload, i int) bool {
	t.Helper()
	resp, err := srv.Client().Post(srv.URL+ServerPath, "application/json", bytes.NewReader(Registered.Request(w.Inputs[i])))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a struct{ Allow bool }
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || resp.StatusCode != 200 {
		t.Fatalf("input %d: %s %v", i+1, resp.Status, err)
	}
	return a.Allow
}
