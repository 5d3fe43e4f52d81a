package casbin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// userWorkload reads the user's files of testdata through the workload package, as the command
// line's --policy, --data and --inputs give them.
func userWorkload(t testing.TB, policies []string, data []string, inputs string) *workload.Workload {
	t.Helper()
	w, err := workload.FromFiles(workload.UserSpec{Policies: policies, Data: data, Inputs: inputs})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func rbacFilesWorkload(t testing.TB) *workload.Workload {
	return userWorkload(t, []string{"testdata/rbac_model.conf"}, []string{"testdata/rbac_policy.csv"}, "testdata/rbac_requests.csv")
}

func abacFilesWorkload(t testing.TB) *workload.Workload {
	return userWorkload(t, []string{"testdata/abac_model.conf", "testdata/abac_policy.csv"}, nil, "testdata/abac_requests.jsonl")
}

// A user's Casbin files, as Casbin's users keep them, are read into a workload whose inputs name
// their lines and carry their expected decisions, and Casbin gives every one of them: an RBAC
// model with role groups and keyMatch2 paths and CSV requests (the policy given as data), an
// ABAC model with eval, a deny rule and JSONL requests whose subjects are objects (the policy
// given as a second policy file), one of them without an expected decision.
func TestUserFilesDecide(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		w                       *workload.Workload
		allow, deny, unverified int
		firstSource             string
	}{
		{"rbac csv", rbacFilesWorkload(t), 3, 3, 0, "testdata/rbac_requests.csv:2"},
		{"abac jsonl", abacFilesWorkload(t), 2, 3, 1, "testdata/abac_requests.jsonl:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.w
			if !Registered.Written(w) || !engine.RequestsFor(Name, w) {
				t.Fatal("no Casbin version, or an input without its request")
			}
			for _, e := range engine.All() {
				if e.Name() != Name && e.Written(w) {
					t.Errorf("engine %s takes the Casbin files as its own", e.Name())
				}
			}
			if allow, deny, unverified := w.Counts(); allow != tc.allow || deny != tc.deny || unverified != tc.unverified {
				t.Errorf("%d allow, %d deny, %d unverified; want %d, %d, %d", allow, deny, unverified, tc.allow, tc.deny, tc.unverified)
			}
			if got := Registered.Source(w.Inputs[0]); got != tc.firstSource {
				t.Errorf("first input from %q, want %q", got, tc.firstSource)
			}
			l, err := Load(context.Background(), nil, w)
			if err != nil {
				t.Fatal(err)
			}
			for i, in := range w.Inputs {
				out := l.Decide(i)
				if out.Kind != verify.Decided {
					t.Fatalf("%s: %v", in.Source, out.Err)
				}
				if c := verify.Classify(in.Expect, out); c != verify.OK {
					t.Errorf("%s: %s", in.Source, verify.Name(c, 0))
				}
			}
		})
	}
}

// What Casbin refuses in a user's files, and the settings its files cannot be given with, are
// refused before anything runs (when the files are read, or when the run prepares them), each
// naming its file and line, or its setting.
func TestUserFilesRefused(t *testing.T) {
	const model = "[request_definition]\nr = sub, obj, act\n\n[policy_definition]\np = sub, obj, act\n\n[role_definition]\ng = _, _\n\n" +
		"[policy_effect]\ne = some(where (p.eft == allow))\n\n[matchers]\nm = g(r.sub, p.sub) && r.obj == p.obj && r.act == p.act\n"
	const policy = "p, admin, data1, read\ng, alice, admin\n"
	const requests = "alice, data1, read, true\n"
	for _, tc := range []struct {
		name                    string
		model, policy, requests string
		requestsName            string
		want                    []string
	}{
		{name: "an option without a value", model: strings.Replace(model, "r = sub", "r sub", 1),
			want: []string{"model.conf:2: casbin refuses the model", "line 2"}},
		{name: "a section missing", model: strings.Replace(model, "[policy_effect]\ne = some(where (p.eft == allow))\n", "", 1),
			want: []string{"model.conf: casbin refuses the model: missing required sections: policy_effect"}},
		{name: "a matcher that does not parse", model: strings.Replace(model, "&& r.act == p.act", "&& r.act === p.act", 1),
			want: []string{"model.conf:14: casbin refuses the matcher m"}},
		{name: "a matcher calling no function", model: strings.Replace(model, "r.obj == p.obj", "keyMatch9(r.obj, p.obj)", 1),
			want: []string{"model.conf:14: casbin refuses the matcher m", "keyMatch9"}},
		{name: "an effect casbin does not know", model: strings.Replace(model, "p.eft == allow", "p.eft == permit", 1),
			want: []string{"model.conf:11: casbin refuses the effect e", "unsupported effect"}},
		{name: "a rule of the wrong size", policy: policy + "p, bob, data2\n",
			want: []string{"policy.csv:3: casbin refuses the policy line", "invalid policy rule size: expected 3, got 2"}},
		{name: "a policy type the model lacks", policy: "p2, admin, data1, read\n",
			want: []string{"policy.csv:1: casbin refuses the policy line", "missing required definition p2"}},
		{name: "a line with no policy type", policy: policy + ", admin, data1\n",
			want: []string{"policy.csv:3: casbin refuses the policy line", "want a policy type"}},
		{name: "a line that is no CSV", policy: policy + "p, \"admin, data1, read\n",
			want: []string{"policy.csv:3: casbin refuses the policy line"}},
		{name: "a request of the wrong size", requests: requests + "\nbob, data1, true\n",
			want: []string{"requests.csv:3: casbin refuses the request: 2 request values, and the model's request definition has 3 (r = sub, obj, act)", "then its expected decision"}},
		{name: "an expectation that is no decision", requests: "bob, data1, read, maybe\n",
			want: []string{"requests.csv:1", `the expected decision "maybe": want true or false`}},
		{name: "a JSON request of the wrong size", requestsName: "requests.jsonl", requests: `{"request": ["bob", "data1"], "expect": true}` + "\n",
			want: []string{"requests.jsonl:1: casbin refuses the request: 2 request values"}},
		{name: "a JSON line with another key", requestsName: "requests.jsonl", requests: `{"request": ["bob", "data1", "read"], "expected": true}` + "\n",
			want: []string{"requests.jsonl:1", `unknown field "expected"`}},
		{name: "a JSON line with no request", requestsName: "requests.jsonl", requests: `{"expect": true}` + "\n",
			want: []string{"requests.jsonl:1", `no "request"`}},
		{name: "no requests", requests: "# none yet\n",
			want: []string{"requests.csv: no requests"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name, text, fallback string) string {
				if text == "" {
					text = fallback
				}
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			}
			reqName := tc.requestsName
			if reqName == "" {
				reqName = "requests.csv"
			}
			spec := workload.UserSpec{Policies: []string{write("model.conf", tc.model, model)},
				Data: []string{write("policy.csv", tc.policy, policy)}, Inputs: write(reqName, tc.requests, requests)}
			w, err := workload.FromFiles(spec)
			if err == nil {
				_, err = engine.Prepare(context.Background(), nil, Registered, w)
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if !strings.HasPrefix(err.Error(), dir) {
				t.Errorf("error %q does not start with the file at fault", err)
			}
		})
	}
}

// Settings Casbin's files are not given with are refused before any file is read, each naming
// the setting.
func TestUserFilesSettings(t *testing.T) {
	base := workload.UserSpec{Policies: []string{"testdata/rbac_model.conf"}, Data: []string{"testdata/rbac_policy.csv"}, Inputs: "testdata/rbac_requests.csv"}
	for _, tc := range []struct {
		name    string
		change  func(s *workload.UserSpec)
		setting string
		want    string
	}{
		{"two models", func(s *workload.UserSpec) { s.Policies = append(s.Policies, "other.conf") }, "policy", "one model"},
		{"two policies", func(s *workload.UserSpec) { s.Policies = append(s.Policies, "more.csv") }, "data", "loads one policy file"},
		{"a policy that is no CSV", func(s *workload.UserSpec) { s.Data = []string{"policy.json"} }, "data", "a Casbin policy is a .csv file"},
		{"no requests", func(s *workload.UserSpec) { s.Inputs = "" }, "inputs", "requests.csv, a request a line"},
		{"a query", func(s *workload.UserSpec) { s.Query = "data.authz.allow" }, "query", "Rego decision"},
		{"v0", func(s *workload.UserSpec) { s.V0Compatible = true }, "v0_compatible", "reads Rego"},
		{"undefined as", func(s *workload.UserSpec) { s.UndefinedAs = "deny" }, "undefined_as", "always decides"},
		{"cedar files", func(s *workload.UserSpec) { s.CedarPolicies = []string{"p.cedar"} }, "cedar_policies", "no Cedar files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			s.Policies = append([]string{}, base.Policies...)
			tc.change(&s)
			err := s.Check()
			se, ok := err.(*workload.SettingError)
			if !ok || se.Setting != tc.setting || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one about %s saying %q", err, tc.setting, tc.want)
			}
		})
	}
	if err := base.Check(); err != nil {
		t.Errorf("the files themselves: %v", err)
	}
}
