package casbin

import (
	"context"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// builtins are the built-in workloads with a Casbin version the tests load: every family, at
// sizes that keep the package's tests short.
var builtins = []string{"nop", "rbac", "api", "rbac-data-10", "rbac-data-300",
	"rules-path-1", "rules-path-100", "rules-ip-1", "rules-ip-300", "rules-principal-100", "rules-jwt-claim-100",
	"rules-path-100-indexed", "rules-principal-100-indexed"}

// Every input of every built-in with a Casbin version gets from Casbin, in process, the
// decision the workload's reference model expects; the inputs mix allows and denies, and the
// denies come from more than one of the model's rules where the workload has several.
func TestBuiltinsAgreeWithReferenceModel(t *testing.T) {
	for _, name := range builtins {
		t.Run(name, func(t *testing.T) {
			w, err := workload.Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			if !Registered.Written(w) {
				t.Fatalf("%s has no Casbin version: %s", name, whyNot(w))
			}
			l, err := Load(context.Background(), engine.NewPrepared(), w)
			if err != nil {
				t.Fatal(err)
			}
			allows, denies := 0, map[string]int{}
			for i, in := range w.Inputs {
				out := l.Decide(i)
				if c := verify.Classify(in.Expect, out); c != verify.OK {
					t.Fatalf("input %d (%s, expects %s for %q): %s %v; request %s", i+1, in.JSON, in.Expect, in.Reason, verify.Name(c, 0), out.Err, Registered.Request(in))
				}
				if in.Expect == workload.ExpectAllow {
					allows++
				} else {
					denies[in.Reason]++
				}
			}
			if name != "nop" && (allows == 0 || len(denies) == 0) {
				t.Errorf("%d allows and denies %v: want both", allows, denies)
			}
		})
	}
}

// Each family's version says how it is written, so a scaling run lands in a series of its own;
// api's says what it is handed; the workloads without one say why.
func TestBuiltinVersionsSayWhatTheyAre(t *testing.T) {
	for _, tc := range []struct {
		name, style, handed, whyNot string
	}{
		{name: "rbac-data-10", style: "rbac-data/casbin"},
		{name: "rules-ip-10", style: "rules-ip/casbin-policies"},
		{name: "rules-path-10-indexed", style: "rules-path/casbin-roles"},
		{name: "api", handed: "Casbin is handed the token's verdict"},
		{name: "nop"},
		{name: "rules-ip-10-indexed", whyNot: "cannot cut an address to its network"},
		{name: "rules-jwt-claim-10-indexed", whyNot: "cannot walk a list"},
		{name: "risk", whyNot: "cannot walk a list"},
		{name: "envoy", whyNot: "base64"},
		{name: "docshare-5", whyNot: "carries its own entities"},
		{name: "gdrive-100", whyNot: "role links"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := workload.Builtin(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if tc.whyNot != "" {
				if Registered.Written(w) {
					t.Fatal("has a Casbin version")
				}
				if why := engine.WhyNot(Registered, w); !strings.Contains(why, tc.whyNot) {
					t.Errorf("why not %q, want it to say %q", why, tc.whyNot)
				}
				return
			}
			if !Registered.Written(w) {
				t.Fatal("no Casbin version")
			}
			if got := w.Scale.Series(Name); got != tc.style {
				t.Errorf("series %q, want %q", got, tc.style)
			}
			handed := engine.HandedTo(Name, w)
			if (tc.handed == "") != (handed == "") || !strings.Contains(handed, tc.handed) {
				t.Errorf("handed %q, want %q", handed, tc.handed)
			}
		})
	}
}
