package workload

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

func TestAPIMatchesReferenceModel(t *testing.T) {
	w, err := buildAPI(DefaultSeed, 500)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "api" || w.Query != "data.authzbench.api.allow" || w.Description == "" {
		t.Errorf("workload identity: name %q, query %q, description %q", w.Name, w.Query, w.Description)
	}
	reasons := checkAgainstOPA(t, w)
	if len(reasons) < 5 {
		t.Errorf("denies come from %d reasons %v; want at least 5", len(reasons), reasons)
	}
}

// TestAPITamperedTokenIsDenied takes allowed inputs, raises the token's privileges in its
// payload while keeping the signature, and checks that both the model and OPA then deny.
func TestAPITamperedTokenIsDenied(t *testing.T) {
	w, err := buildAPI(DefaultSeed, 200)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		API apiData `json:"api"`
	}
	if err := json.Unmarshal(w.Data, &d); err != nil {
		t.Fatal(err)
	}
	pq := prepareOPA(t, w)
	tampered := 0
	for i, in := range w.Inputs {
		if in.Expect != ExpectAllow {
			continue
		}
		var req apiInput
		if err := json.Unmarshal(in.JSON, &req); err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(req.Token, ".")
		payload, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			t.Fatal(err)
		}
		var claims map[string]any
		if err := json.Unmarshal(payload, &claims); err != nil {
			t.Fatal(err)
		}
		claims["tier"] = "enterprise"
		claims["scope"] = claims["scope"].(string) + " admin accounts:any"
		parts[1] = base64.RawURLEncoding.EncodeToString(mustJSON(claims))
		req.Token = strings.Join(parts, ".")

		allow, reason := apiDecide(&d.API, req)
		if allow || reason != "deny: bad signature" {
			t.Errorf("input %d with a tampered payload: model says %v, %q; want deny: bad signature", i, allow, reason)
		}
		opaAllow, defined, err := opaDecide(pq, mustJSON(req))
		if err != nil || !defined || opaAllow {
			t.Errorf("input %d with a tampered payload: OPA allow %v, defined %v, error %v; want a deny", i, opaAllow, defined, err)
		}
		tampered++
	}
	if tampered < 20 {
		t.Errorf("only %d allowed inputs to tamper with", tampered)
	}
}
