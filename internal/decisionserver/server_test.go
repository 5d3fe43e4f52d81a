package decisionserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// echoDecide allows a body of "yes", denies "no" and cannot read anything else; it takes a
// known time to decide, so the metrics can be checked against it.
func echoDecide(body []byte, answer *bytes.Buffer) (time.Duration, error) {
	switch string(body) {
	case "yes":
		answer.WriteString(`"allow":true`)
	case "no":
		answer.WriteString(`"allow":false`)
	default:
		return 0, errors.New("want yes or no, got " + string(body))
	}
	return 1234 * time.Nanosecond, nil
}

// The handler answers the decision path, the health path and nothing else, each refusal as a
// JSON error with its status, and a body over the bound is refused before any decision.
func TestHandlerAnswersAndRefuses(t *testing.T) {
	srv := httptest.NewServer(Handler("/v1/decide", 8, echoDecide))
	defer srv.Close()
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"allow", http.MethodPost, "/v1/decide", "yes", 200, "{\"allow\":true}\n"},
		{"deny", http.MethodPost, "/v1/decide", "no", 200, "{\"allow\":false}\n"},
		{"unreadable request", http.MethodPost, "/v1/decide", "maybe", 400, "{\"error\":\"want yes or no, got maybe\"}\n"},
		{"body over the bound", http.MethodPost, "/v1/decide", "yes-and-more", 400, `{"error":"read body: http: request body too large"}` + "\n"},
		{"health", http.MethodGet, "/health", "", 200, "{}\n"},
		{"GET a decision", http.MethodGet, "/v1/decide", "", 405, "{\"error\":\"use POST\"}\n"},
		{"no such path", http.MethodPost, "/v1/other", "yes", 404, "{\"error\":\"no such endpoint; decisions are at POST /v1/decide\"}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || string(b) != tc.want {
				t.Errorf("%d %q, want %d %q", resp.StatusCode, b, tc.status, tc.want)
			}
			if resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
			}
			if tc.status == 405 && resp.Header.Get("Allow") != http.MethodPost {
				t.Errorf("Allow %q, want POST", resp.Header.Get("Allow"))
			}
		})
	}
}

// ?metrics=true adds the decision's own time, as Decide measured it, and the handler's, which
// holds it; answers without it carry none.
func TestHandlerMetrics(t *testing.T) {
	srv := httptest.NewServer(Handler("/v1/decide", 8, echoDecide))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/decide?metrics=true", "application/json", strings.NewReader("yes"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Allow   *bool `json:"allow"`
		Metrics struct {
			Eval    int64 `json:"timer_eval_ns"`
			Handler int64 `json:"timer_server_handler_ns"`
		} `json:"metrics"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.Allow == nil || !*doc.Allow || doc.Metrics.Eval != 1234 || doc.Metrics.Handler <= 0 {
		t.Errorf("answer %+v, want allow with timer_eval_ns 1234 and a handler time", doc)
	}
}

// A server's write endpoint: a POST applied answers 204 only once apply returned, one apply
// refuses 400 with its error, another method 405; every other path is the decisions'.
func TestWithWrites(t *testing.T) {
	var applied []string
	decisions := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := WithWrites(decisions, "/v1/update", 1<<10, func(body []byte) error {
		if string(body) == "bad" {
			return errors.New("not an update")
		}
		applied = append(applied, string(body))
		return nil
	})
	for _, c := range []struct {
		method, path, body string
		status             int
		answer             string
	}{
		{"POST", "/v1/update", "x", http.StatusNoContent, ""},
		{"POST", "/v1/update", "bad", http.StatusBadRequest, "not an update"},
		{"GET", "/v1/update", "", http.StatusMethodNotAllowed, "use POST"},
		{"POST", "/v1/decide", "x", http.StatusTeapot, ""},
		{"POST", "/v1/update", strings.Repeat("y", 2<<10), http.StatusBadRequest, "read body"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, strings.NewReader(c.body)))
		if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.answer) {
			t.Errorf("%s %s: %d %q, want %d %q", c.method, c.path, rec.Code, rec.Body.String(), c.status, c.answer)
		}
	}
	if len(applied) != 1 || applied[0] != "x" {
		t.Errorf("applied %q, want the one good update", applied)
	}
}
