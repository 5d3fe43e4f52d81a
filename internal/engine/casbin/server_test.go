package casbin

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/valyala/fastjson"

	"github.com/authzbench/authzbench/internal/verify"
)

// The server answers each request with Casbin's decision in the one form the answer reader
// takes without parsing, an Enforce that fails with its error (an evaluation error, never a
// deny), and a request it cannot ask with a 4xx naming why; the answers read as the engine says.
func TestServerAnswers(t *testing.T) {
	files, err := ReadFiles("testdata/abac_model.conf", "testdata/abac_policy.csv")
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEnforcer(files)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(e))
	defer srv.Close()
	var p fastjson.Parser
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		want                     string // the body, or what it must say
		outcome                  verify.Kind
		allow                    bool
	}{
		{"allow", "POST", ServerPath, `[{"Age": 30, "Staff": false, "Banned": false}, "/data1", "read"]`, 200, allowBody + "\n", verify.Decided, true},
		{"deny", "POST", ServerPath, `[{"Age": 3, "Staff": false, "Banned": false}, "/data1", "read"]`, 200, denyBody + "\n", verify.Decided, false},
		{"an enforce that fails", "POST", ServerPath, `["a subject with no age", "/data1", "read"]`, 200, `{"error":`, verify.EvalFailed, false},
		{"with its timers", "POST", ServerPath + "?metrics=true", `[{"Age": 30, "Staff": false, "Banned": false}, "/data1", "read"]`, 200, `{"allow":true,"metrics":{"timer_eval_ns":`, verify.Decided, true},
		{"a request of the wrong size", "POST", ServerPath, `["alice", "/data1"]`, 400, "2 request values, and the model's request definition has 3", 0, false},
		{"a body that is no array", "POST", ServerPath, `{"sub": "alice"}`, 400, "a JSON array of the request's values", 0, false},
		{"two arrays", "POST", ServerPath, `["a", "b", "c"] ["d"]`, 400, "nothing after it", 0, false},
		{"GET", "GET", ServerPath, "", 405, "use POST", 0, false},
		{"elsewhere", "POST", "/v1/data", "[]", 404, "decisions are at POST " + ServerPath, 0, false},
		{"health", "GET", "/health", "", 200, "{}\n", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
				t.Fatalf("%d %s, want %d with %q", resp.StatusCode, body, tc.status, tc.want)
			}
			if tc.path == "/health" || tc.status != 200 {
				return
			}
			doc, err := p.ParseBytes(body)
			if err != nil {
				t.Fatal(err)
			}
			if out := readAnswer(doc); out.Kind != tc.outcome || out.Allow != tc.allow {
				t.Errorf("read as %+v, want kind %d allow %t", out, tc.outcome, tc.allow)
			}
		})
	}
}

// The server refuses to start on files Casbin refuses, exit status 2, its first line on stderr
// naming the file and line; and on flags it does not take.
func TestServerRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	badPolicy := filepath.Join(dir, "policy.csv")
	if err := os.WriteFile(badPolicy, []byte("p, admin, /data/*, read\np, alice, /data/1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a policy line of the wrong size", []string{"--model", "testdata/rbac_model.conf", "--policy", badPolicy}, badPolicy + ":2: casbin refuses the policy line"},
		{"no model", []string{"--policy", badPolicy}, "give the model with --model FILE"},
		{"a model that is not there", []string{"--model", filepath.Join(dir, "none.conf")}, "none.conf: no such file"},
		{"an argument", []string{"--model", "testdata/rbac_model.conf", "extra"}, "unexpected arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := ServerMain(tc.args, &stderr); code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			first, _, _ := strings.Cut(stderr.String(), "\n")
			if !strings.HasPrefix(first, ServerArg+": ") || !strings.Contains(first, tc.want) {
				t.Errorf("first line %q, want it to say %q", first, tc.want)
			}
		})
	}
}
