package cedarserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine/cedar/cedarengine"
)

const policies = `@id("owner-views")
permit (principal, action == Action::"view", resource)
when { resource.owner == principal };

@id("no-suspended")
forbid (principal, action, resource)
when { principal.suspended };
`

const schema = `entity User = { suspended: Bool };
entity Photo = { owner: User };
action view appliesTo { principal: User, resource: Photo, context: {} };
`

const entities = `[
 {"uid": {"type": "User", "id": "alice"}, "attrs": {"suspended": false}, "parents": []},
 {"uid": {"type": "User", "id": "mallory"}, "attrs": {"suspended": true}, "parents": []},
 {"uid": {"type": "Photo", "id": "p1"}, "attrs": {"owner": {"__entity": {"type": "User", "id": "alice"}}}, "parents": []},
 {"uid": {"type": "Photo", "id": "p2"}, "attrs": {"owner": {"__entity": {"type": "User", "id": "mallory"}}}, "parents": []}
]`

func newServer(t *testing.T, withSchema bool) *httptest.Server {
	t.Helper()
	var sch *cedarengine.Source
	if withSchema {
		sch = &cedarengine.Source{Name: "photos.cedarschema", Text: []byte(schema)}
	}
	e, err := cedarengine.New([]cedarengine.Source{{Name: "photos.cedar", Text: []byte(policies)}},
		&cedarengine.Source{Name: "entities.json", Text: []byte(entities)}, sch)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(Handler(e))
	t.Cleanup(s.Close)
	return s
}

type answer struct {
	Decision string           `json:"decision"`
	Reasons  []string         `json:"reasons"`
	Errors   []string         `json:"errors"`
	Metrics  map[string]int64 `json:"metrics"`
	Error    string           `json:"error"`
}

func post(t *testing.T, url, body string) (int, answer) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a answer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatalf("%s: response is not JSON: %v", url, err)
	}
	return resp.StatusCode, a
}

func request(principal, resource string) string {
	return `{"principal": {"type": "User", "id": "` + principal + `"}, "action": {"type": "Action", "id": "view"},
	         "resource": {"type": "Photo", "id": "` + resource + `"}, "context": {}}`
}

func TestDecisionsNameTheDeterminingPolicies(t *testing.T) {
	s := newServer(t, true)
	for _, tc := range []struct {
		principal, resource, decision string
		reasons                       []string
	}{
		{"alice", "p1", "allow", []string{"owner-views"}},
		{"alice", "p2", "deny", nil},
		{"mallory", "p2", "deny", []string{"no-suspended"}}, // the forbid wins over the owner's permit
	} {
		code, a := post(t, s.URL+Path, request(tc.principal, tc.resource))
		if code != http.StatusOK || a.Decision != tc.decision || strings.Join(a.Reasons, ",") != strings.Join(tc.reasons, ",") {
			t.Errorf("%s on %s: status %d, %+v; want %s because of %v", tc.principal, tc.resource, code, a, tc.decision, tc.reasons)
		}
		if a.Metrics != nil {
			t.Errorf("metrics sent without ?metrics=true: %v", a.Metrics)
		}
	}
}

func TestMetricsOnRequest(t *testing.T) {
	s := newServer(t, true)
	code, a := post(t, s.URL+Path+"?metrics=true", request("alice", "p1"))
	if code != http.StatusOK || a.Decision != "allow" {
		t.Fatalf("status %d, %+v", code, a)
	}
	eval, handler := a.Metrics["timer_eval_ns"], a.Metrics["timer_server_handler_ns"]
	if eval <= 0 || handler < eval {
		t.Errorf("timers: eval %d ns, handler %d ns; want 0 < eval <= handler", eval, handler)
	}
}

// An evaluation error is reported, and the policy that failed is skipped, as Cedar specifies.
func TestEvaluationErrorsAreReported(t *testing.T) {
	s := newServer(t, false) // without a schema a request may name an entity the store lacks
	code, a := post(t, s.URL+Path, request("nobody", "p1"))
	if code != http.StatusOK || a.Decision != "deny" || len(a.Errors) == 0 || !strings.Contains(a.Errors[0], "no-suspended") {
		t.Errorf("status %d, %+v; want deny with an error from no-suspended", code, a)
	}
}

func TestBadRequestsAreRefusedWithAReason(t *testing.T) {
	s := newServer(t, true)
	for _, tc := range []struct{ name, body, want string }{
		{"not JSON", `{"principal": `, "not a Cedar request document"},
		{"no action", `{"principal": {"type": "User", "id": "alice"}, "resource": {"type": "Photo", "id": "p1"}}`, `missing "action"`},
		{"against the schema", `{"principal": {"type": "Photo", "id": "p1"}, "action": {"type": "Action", "id": "view"}, "resource": {"type": "Photo", "id": "p1"}}`, "schema"},
	} {
		code, a := post(t, s.URL+Path, tc.body)
		if code != http.StatusBadRequest || !strings.Contains(a.Error, tc.want) {
			t.Errorf("%s: status %d, error %q; want 400 mentioning %q", tc.name, code, a.Error, tc.want)
		}
	}
	resp, err := http.Get(s.URL + Path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != http.MethodPost {
		t.Errorf("GET %s: status %d, Allow %q", Path, resp.StatusCode, resp.Header.Get("Allow"))
	}
	resp, err = http.Get(s.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/health: status %d", resp.StatusCode)
	}
}

func TestMainRefusesABadPolicyNamingItsFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "broken.cedar")
	os.WriteFile(bad, []byte("permit (principal, action, resource)\nwhen { principal.x == };\n"), 0o644)
	var stderr bytes.Buffer
	if code := Main([]string{"--policies", bad, "--addr", "127.0.0.1:0"}, &stderr); code != 2 || !strings.Contains(stderr.String(), "broken.cedar:2") {
		t.Errorf("exit %d, stderr %q; want 2 naming broken.cedar:2", code, stderr.String())
	}
	stderr.Reset()
	if code := Main([]string{"--addr", "127.0.0.1:0"}, &stderr); code != 2 || !strings.Contains(stderr.String(), "no Cedar policies") {
		t.Errorf("no policies: exit %d, stderr %q", code, stderr.String())
	}
}

// --template-links is read by the server as by the in-process engine: a link to a template the
// policies lack is refused before listening, naming the links file and the templates there are.
func TestMainReadsTemplateLinks(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "t.cedar")
	links := filepath.Join(dir, "links.json")
	os.WriteFile(pol, []byte(`@id("viewers") permit (principal in ?principal, action, resource);`), 0o644)
	os.WriteFile(links, []byte(`[{"template_id": "editors", "link_id": "l", "args": {"?principal": "Team::\"a\""}}]`), 0o644)
	var stderr bytes.Buffer
	code := Main([]string{"--policies", pol, "--template-links", links, "--addr", "127.0.0.1:0"}, &stderr)
	if want := `links.json:1:2: template link 1: no template "editors"; the templates are "viewers"`; code != 2 || !strings.Contains(stderr.String(), want) {
		t.Errorf("exit %d, stderr %q; want 2 saying %q", code, stderr.String(), want)
	}
}
