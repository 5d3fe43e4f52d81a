package change

import (
	"strings"
	"testing"
)

func TestReadChanges(t *testing.T) {
	data := `{"request": {"method": "PATCH", "path": "/grants", "body": {"user": "alice"}, "header": {"X-Tenant": "a"}}, "expect": {"2": "allow", "1": false}}

{"request": {"path": "http://127.0.0.1:1/x"}, "expect": {}}
`
	cs, err := Read("c.jsonl", []byte(data), 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Source != "c.jsonl:1" || cs[1].Source != "c.jsonl:3" {
		t.Fatalf("changes %+v", cs)
	}
	if r := cs[0].Request; r.Method != "PATCH" || r.Path != "/grants" || string(r.Body) != `{"user": "alice"}` || r.Header["X-Tenant"] != "a" {
		t.Errorf("request %+v", r)
	}
	if s := cs[0].Sets; len(s) != 2 || !s[1] || s[0] {
		t.Errorf("sets %v, want input 2 allowed and input 1 denied (0-based 1 and 0)", s)
	}
	w, err := Read("w.jsonl", []byte(`{"write": [{"op": "remove", "path": "/a"}], "expect": {"1": "deny"}}`), 3)
	if err != nil || len(w) != 1 || w[0].Request != nil || string(w[0].Form) != `[{"op":"remove","path":"/a"}]` || w[0].Sets[0] {
		t.Errorf("a write in an engine's form: %+v, %v", w, err)
	}
	if cs[1].Request.Method != "POST" {
		t.Errorf("default method %q, want POST", cs[1].Request.Method)
	}
}

func TestReadChangesRejects(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`not json`, "c.jsonl:2: not a JSON object"},
		{`{"request": {"path": "/a"}}`, `c.jsonl:2: no "expect"`},
		{`{"expect": {}}`, `c.jsonl:2: no "request"`},
		{`{"request": {"path": "/a"}, "expect": {"4": "deny"}}`, `"4": want an input number from 1 to 3`},
		{`{"request": {"path": "/a"}, "expect": {"x": "deny"}}`, `"x": want an input number`},
		{`{"request": {"path": "/a"}, "expect": {"1": "maybe"}}`, `input 1: "maybe": want "allow" or "deny"`},
		{`{"request": {"path": "/a"}, "expect": {"1": 1}}`, `input 1: 1: want "allow" or "deny"`},
		{`{"request": {"path": "a"}, "expect": {}}`, `path "a": want a path from /`},
		{`{"request": {"path": "/a", "verb": "GET"}, "expect": {}}`, `unknown field "verb"`},
		{`{"request": {"path": "/a", "method": "get"}, "expect": {}}`, `method "get"`},
		{`{"request": {"path": "/a"}, "expect": {}, "tuple": {}}`, `unknown key "tuple"`},
		{`{"request": {"path": "/a"}, "write": [], "expect": {}}`, `both "request" and "write"`},
		{`{"write": null, "expect": {}}`, `"write" is empty`},
		{`{"request": {"path": "/a"}, "write": {}, "expect": {}}`, `both "request" and "write"`},
	} {
		data := `{"request": {"path": "/ok"}, "expect": {}}` + "\n" + c.line + "\n"
		_, err := Read("c.jsonl", []byte(data), 3)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "c.jsonl:2:") {
			t.Errorf("%s: error %v, want one naming c.jsonl:2 and %q", c.line, err, c.want)
		}
	}
	// Every bad line at once.
	_, err := Read("c.jsonl", []byte("x\ny\n"), 3)
	if err == nil || !strings.Contains(err.Error(), "c.jsonl:1:") || !strings.Contains(err.Error(), "c.jsonl:2:") {
		t.Errorf("error %v, want both lines named", err)
	}
	if _, err := Read("c.jsonl", []byte("\n\n"), 3); err == nil || !strings.Contains(err.Error(), "no changes") {
		t.Errorf("empty file: %v", err)
	}
}

func FuzzReadChanges(f *testing.F) {
	f.Add([]byte(`{"request": {"path": "/a", "body": {"u": 1}}, "expect": {"1": "deny"}}`))
	f.Add([]byte(`{"expect": {"2": true}, "request": {"method": "PUT", "path": "/b"}}`))
	f.Add([]byte(`{"write": [{"op": "remove", "path": "/a"}], "expect": {"3": "allow"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := Read("f", data, 3)
		if err != nil {
			return
		}
		for _, c := range cs {
			if (c.Request == nil || c.Request.Method == "") == (len(c.Form) == 0) {
				t.Fatalf("change without a request or a write, or with both: %+v", c)
			}
			for i := range c.Sets {
				if i < 0 || i >= 3 {
					t.Fatalf("input %d out of range", i)
				}
			}
		}
	})
}
