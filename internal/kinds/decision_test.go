package kinds

import "testing"

func TestFillBody(t *testing.T) {
	in := []byte(`{"user": {"id": 7, "name": "ann"}, "action": "read", "big": 12345678901234567890}`)
	for _, tc := range []struct{ template, want string }{
		{"", string(in)},
		{`{"s": {{input.user.id}}, "a": {{ input.action }}}`, `{"s": 7, "a": "read"}`},
		{`{"all": {{input}}}`, `{"all": {"action":"read","big":12345678901234567890,"user":{"id":7,"name":"ann"}}}`},
		{`{"n": {{input.big}}}`, `{"n": 12345678901234567890}`},
	} {
		got, err := fillBody(tc.template, in)
		if err != nil || string(got) != tc.want {
			t.Errorf("%q: %s %v, want %s", tc.template, got, err, tc.want)
		}
	}
	if _, err := fillBody(`{{input.user.missing}}`, in); err == nil {
		t.Error("a missing field was filled")
	}
}

func TestDecisionStatus(t *testing.T) {
	m, err := ParseDecisionStatus("200=allow, 403=deny")
	if err != nil || !m[200] || m[403] || len(m) != 2 {
		t.Errorf("%v %v", m, err)
	}
	for _, bad := range []string{"200", "200=yes", "99=allow", "x=deny"} {
		if _, err := ParseDecisionStatus(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
