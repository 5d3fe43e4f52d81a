package cedar

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine/cedar/cedarengine"
	"github.com/authzbench/authzbench/internal/engine/cedar/cedarserver"
	"github.com/authzbench/authzbench/internal/workload"
)

// cedarAppSpec names the files of an app under testdata/cedar-apps, each optional but the
// policies and requests.
func cedarAppSpec(t *testing.T, dir string) workload.UserSpec {
	t.Helper()
	opt := func(name string) string {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			return ""
		}
		return p
	}
	return workload.UserSpec{
		Name:          filepath.Base(dir),
		CedarPolicies: []string{filepath.Join(dir, "policies.cedar")},
		Entities:      opt("entities.json"),
		Schema:        opt("app.cedarschema"),
		Requests:      filepath.Join(dir, "requests.jsonl"),
		TemplateLinks: opt("links.json"),
	}
}

// Each small app exercises one way users write Cedar that cedar-go alone reads otherwise than
// the Cedar CLI; every request's decision was worked out by hand. The in-process engine and the
// served one must both decide every request as expected, with no policy error.
func TestAppsDecideAsWorkedOut(t *testing.T) {
	dirs, err := filepath.Glob("testdata/cedar-apps/*/requests.jsonl")
	if err != nil || len(dirs) < 4 {
		t.Fatalf("want the 4 apps under testdata/cedar-apps, found %v (%v)", dirs, err)
	}
	// What each app must warn about, and nothing else.
	wantWarnings := map[string][]string{
		"templates": {"template unlinked has no links"},
	}
	for _, dir := range dirs {
		spec := cedarAppSpec(t, filepath.Dir(dir))
		t.Run(spec.Name, func(t *testing.T) {
			w, err := workload.FromFiles(spec)
			if err != nil {
				t.Fatal(err)
			}
			warnings := w.Warnings()
			if len(warnings) != len(wantWarnings[spec.Name]) {
				t.Errorf("warnings %q, want %d like %q", warnings, len(wantWarnings[spec.Name]), wantWarnings[spec.Name])
			}
			for i, want := range wantWarnings[spec.Name] {
				if i < len(warnings) && !strings.Contains(warnings[i], want) {
					t.Errorf("warning %q does not say %q", warnings[i], want)
				}
			}
			engine, err := cedarengine.Load(cedarengine.Paths{Policies: spec.CedarPolicies, Entities: spec.Entities,
				Schema: spec.Schema, TemplateLinks: spec.TemplateLinks})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(cedarserver.Handler(engine))
			defer srv.Close()
			allows := 0
			for _, in := range w.Inputs {
				if in.Expect == workload.Unverified {
					t.Fatalf("%s: no expect", in.Source)
				}
				if in.Expect == workload.ExpectAllow {
					allows++
				}
				allow, errs, err := decide(engine, Engine.Request(in))
				if err != nil || len(errs) > 0 || expectOf(allow) != in.Expect {
					t.Errorf("%s: in-process decided allow=%v (errors %v, %v), expected %s", in.Source, allow, errs, err, in.Expect)
				}
				resp, err := http.Post(srv.URL+cedarserver.Path, "application/json", bytes.NewReader(Engine.Request(in)))
				if err != nil {
					t.Fatal(err)
				}
				var served struct {
					Decision string   `json:"decision"`
					Errors   []string `json:"errors"`
					Error    string   `json:"error"`
				}
				err = json.NewDecoder(resp.Body).Decode(&served)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || len(served.Errors) > 0 ||
					(served.Decision == "allow") != (in.Expect == workload.ExpectAllow) {
					t.Errorf("%s: served %d %+v (%v), expected %s", in.Source, resp.StatusCode, served, err, in.Expect)
				}
			}
			if allows == 0 || allows == len(w.Inputs) {
				t.Errorf("%d of %d requests allowed: an app should both allow and deny", allows, len(w.Inputs))
			}
		})
	}
}

// Without the schema that declares them, the action-groups app's groups do not exist, and the
// Cedar CLI too would deny alice's read: the run is allowed, but each group no request asks for
// is named in a warning, so the silently wrong decisions have a cause on screen.
func TestActionGroupsWithoutSchemaWarn(t *testing.T) {
	spec := cedarAppSpec(t, filepath.Join("testdata", "cedar-apps", "action-groups"))
	spec.Schema = ""
	w, err := workload.FromFiles(spec)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(w.Warnings(), "\n")
	for _, want := range []string{
		`policies.cedar:2:1: policy viewers-read: action in Action::"ReadOnly": no entity Action::"ReadOnly"`,
		`policies.cedar:12:1: policy suspended: action in Action::"Any": no entity Action::"Any"`,
		"declare the group in the schema",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings\n%s\ndo not say %q", got, want)
		}
	}
	if n := len(w.Warnings()); n != 2 {
		t.Errorf("%d warnings, want 2 (one per group)", n)
	}
}

// decide parses and decides one Cedar request. errs lists the policies that failed to evaluate:
// a faithful port guards its attribute reads, so any error is a test failure even when the
// decision happens to be right.
func decide(e *cedarengine.Engine, request []byte) (allow bool, errs []string, err error) {
	req, err := e.ParseRequest(request)
	if err != nil {
		return false, nil, err
	}
	dec, diag := e.Decide(&req)
	for _, de := range diag.Errors {
		errs = append(errs, string(de.PolicyID)+": "+de.Message)
	}
	return bool(dec), errs, nil
}

// A Cedar setting that is missing is reported before any file is read, naming the setting as a
// scenario file does, and in a caller's words (the command line's flags) with Named; alone or
// beside a Rego policy's inputs.
func TestCheckNamesTheSetting(t *testing.T) {
	flag := func(setting string) string { return "--" + strings.ReplaceAll(setting, "_", "-") }
	absent := filepath.Join(t.TempDir(), "absent.jsonl") // never read: Check reads no file
	for _, tc := range []struct {
		name          string
		spec          workload.UserSpec
		setting       string
		want, flagged string
	}{
		{"without policies", workload.UserSpec{Requests: absent}, "cedar_policies",
			"a Cedar workload needs cedar_policies FILE (and requests FILE.jsonl)", "a Cedar workload needs --cedar-policies FILE (and --requests FILE.jsonl)"},
		{"without requests", workload.UserSpec{CedarPolicies: []string{"p.cedar"}}, "requests",
			`a Cedar workload needs requests FILE.jsonl (one {"principal": ..., "action": ..., "resource": ..., "context": {...}, "expect": true|false} per line)`,
			`a Cedar workload needs --requests FILE.jsonl (one {"principal": ..., "action": ..., "resource": ..., "context": {...}, "expect": true|false} per line)`},
		{"beside Rego without requests", workload.UserSpec{Inputs: absent, CedarPolicies: []string{"p.cedar"}}, "requests",
			`a Cedar workload needs requests FILE.jsonl (one {"principal": ..., "action": ..., "resource": ..., "context": {...}, "expect": true|false} per line)`,
			`a Cedar workload needs --requests FILE.jsonl (one {"principal": ..., "action": ..., "resource": ..., "context": {...}, "expect": true|false} per line)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.spec.Check()
			var se *workload.SettingError
			if !errors.As(err, &se) {
				t.Fatalf("Check = %v, want a SettingError", err)
			}
			if se.Setting != tc.setting || err.Error() != tc.want || se.Named(flag) != tc.flagged {
				t.Errorf("setting %q\n %s\n %s\nwant %q\n %s\n %s", se.Setting, err, se.Named(flag), tc.setting, tc.want, tc.flagged)
			}
			// FromFiles reports the same, before it reads a file.
			if _, err := workload.FromFiles(tc.spec); err == nil || err.Error() != tc.want {
				t.Errorf("FromFiles = %v, want %q", err, tc.want)
			}
		})
	}
}
