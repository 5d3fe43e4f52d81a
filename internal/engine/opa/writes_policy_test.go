package opa

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/change/changetest"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// denyAll replaces rbac's module with one that allows nobody: every input rbac allows flips.
const denyAll = "package authzbench.rbac\n\ndefault allow := false\n"

// A policy replacement OPA acknowledged is the policy of the next decision: on OPA's server (a
// policy PUT), in process (the store's policy upserted, the query prepared again) and through
// the SDK (its store's policy upserted, its manager compiling again at the commit), rbac's
// module swapped for one that denies everything denies every input rbac allows, on a worker
// that decided before the write, and the original module put back allows them again.
func TestPolicyReplacementSeenOnceAcknowledged(t *testing.T) {
	for _, kind := range []string{"opa/inproc", "opa/server", "opa/sdk"} {
		t.Run(kind, func(t *testing.T) {
			w := builtin(t, "rbac", 200)
			var cfg kinds.Config
			if kind == "opa/sdk" {
				cfg = &SDKConfig{}
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "deny.rego"), []byte(denyAll), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "rbac-again.rego"), w.Policies[0].Content, 0o644); err != nil {
				t.Fatal(err)
			}
			deny, err := opa{}.ResolveWrite(w, json.RawMessage(`{"policy": "deny.rego"}`), dir)
			if err != nil {
				t.Fatal(err)
			}
			again, err := opa{}.ResolveWrite(w, json.RawMessage(`{"policy": "rbac-again.rego", "replaces": "rbac.rego"}`), dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := (opa{}).CheckWrite(deny); err != nil {
				t.Fatalf("the resolved form is refused: %v", err)
			}
			tg := startTarget(t, kind, kinds.Common{TempDir: t.TempDir()}, cfg, w)
			applier, err := kinds.WriterOf(tg)
			if err != nil {
				t.Fatal(err)
			}
			d := tg.Worker()
			defer kinds.CloseDecider(d)
			var allowed []int
			for i, in := range w.Inputs {
				out := d.Decide(context.Background(), i)
				if out.Kind != verify.Decided {
					t.Fatalf("input %d: %v %v", i+1, out.Kind, out.Err)
				}
				if in.Expect != workload.Unverified && out.Allow != (in.Expect == workload.ExpectAllow) {
					t.Fatalf("before any write, input %d decided against its expectation", i+1)
				}
				if out.Allow {
					allowed = append(allowed, i)
				}
			}
			if len(allowed) == 0 {
				t.Fatal("no input allowed: the swap would flip nothing")
			}
			for k, step := range []struct {
				form json.RawMessage
				want bool
			}{{deny, false}, {again, true}} {
				if ack := applier.Apply(context.Background(), k+1, change.Change{Form: step.form}); ack.Class != "" || ack.Err != nil {
					t.Fatalf("replacement %d: %s %v", k+1, ack.Class, ack.Err)
				}
				for _, i := range allowed {
					if out := d.Decide(context.Background(), i); out.Kind != verify.Decided || out.Allow != step.want {
						t.Fatalf("replacement %d: input %d right after the acknowledgement: %v allow=%v, want allow=%v", k+1, i+1, out.Kind, out.Allow, step.want)
					}
				}
			}
			// A module OPA refuses at the write itself (it was never checked): refused, the
			// policy as it was.
			bad := json.RawMessage(`{"policy": "x.rego", "module": "package authzbench.rbac\n\nallow if no_such_function(1)\n"}`)
			if ack := applier.Apply(context.Background(), 3, change.Change{Form: bad}); ack.Class == "" {
				t.Errorf("a module that does not compile was acknowledged")
			}
			if out := d.Decide(context.Background(), allowed[0]); !out.Allow {
				t.Errorf("after a refused replacement, input %d: %v %v, want the policy as it was", allowed[0]+1, out.Kind, out.Err)
			}
		})
	}
}

// A policy replacement is read before any load: a file that is missing, does not parse, or
// holds a module OPA would refuse beside the workload's others, or a module that names none of
// the workload's, is refused naming the file.
func TestPolicyReplacementRefusedBeforeLoad(t *testing.T) {
	w := builtin(t, "rbac", 10)
	dir := t.TempDir()
	files := map[string]string{
		"syntax.rego":    "package authzbench.rbac\n\nallow if {\n",
		"undefined.rego": "package authzbench.rbac\n\nallow if no_such_function(1)\n",
		"conflict.rego":  "package authzbench.rbac\n\nallow := true\n\nallow contains 1\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ form, want string }{
		{`{"policy": "missing.rego"}`, "missing.rego"},
		{`{"policy": "syntax.rego"}`, "syntax.rego"},
		{`{"policy": "undefined.rego"}`, "undefined.rego"},
		{`{"policy": "conflict.rego"}`, "conflict.rego"},
		{`{"policy": "syntax.rego", "replaces": "other.rego"}`, `"replaces" "other.rego"`},
		{`{"policy": "deny.txt"}`, "want a .rego file"},
		{`{"policy": "syntax.rego", "module": "package a"}`, `leave out "module"`},
		{`{"policy": "syntax.rego", "extra": 1}`, "extra"},
	} {
		if _, err := (opa{}).ResolveWrite(w, json.RawMessage(c.form), dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s", c.form, err, c.want)
		}
	}
	// A JSON Patch names no file and comes back as it is.
	patch := json.RawMessage(`[{"op": "remove", "path": "/rbac/users/u-0001"}]`)
	if got, err := (opa{}).ResolveWrite(w, patch, dir); err != nil || string(got) != string(patch) {
		t.Errorf("a patch: %s %v", got, err)
	}
	// A policy replacement whose file was not read is refused by the check.
	if err := (opa{}).CheckWrite(json.RawMessage(`{"policy": "deny.rego"}`)); err == nil {
		t.Error("an unread policy replacement passed the check")
	}
}

// rbac's built-in policy stream in OPA's form (engine.PolicyWriter), in process and through the
// SDK: each change is a module holding the roles table, and once acknowledged every input is
// decided as the stream expects at that version, on a worker made before the first write. A
// workload that is not rbac's is refused before any load.
func TestBuiltinPolicyStreamSeenOnceAcknowledged(t *testing.T) {
	for _, kind := range []string{"opa/inproc", "opa/sdk"} {
		t.Run(kind, func(t *testing.T) {
			w := builtin(t, "rbac", 300)
			made, err := workload.BuiltinPolicyChanges(w, 6)
			if err != nil {
				t.Fatal(err)
			}
			stream := changetest.Stream(t, w, made, func(c workload.Change) (json.RawMessage, error) {
				form, err := opa{}.WritePolicy(w, c)
				if err == nil {
					err = (opa{}).CheckWrite(form)
				}
				if err == nil && !strings.Contains(string(form), "roles :=") {
					err = fmt.Errorf("the module holds no roles table: %s", form)
				}
				return form, err
			})
			var cfg kinds.Config
			if kind == "opa/sdk" {
				cfg = &SDKConfig{}
			}
			tg := startTarget(t, kind, kinds.Common{TempDir: t.TempDir()}, cfg, w)
			applier, err := kinds.WriterOf(tg)
			if err != nil {
				t.Fatal(err)
			}
			d := tg.Worker()
			defer kinds.CloseDecider(d)
			changetest.DecidesByEachVersion(t, applier, d, stream)
		})
	}
	api := builtin(t, "api", 10)
	if _, err := (opa{}).WritePolicy(api, workload.Change{Policy: &workload.RBACPolicy{}}); err == nil {
		t.Error("a policy change of a workload that is not rbac's was written")
	}
}
