package verify

import (
	"testing"

	"github.com/authzbench/authzbench/internal/workload"
)

func TestClassify(t *testing.T) {
	allow := Outcome{Kind: Decided, Allow: true}
	deny := Outcome{Kind: Decided, Allow: false}
	for _, tc := range []struct {
		name   string
		expect workload.Expect
		got    Outcome
		want   Class
	}{
		{"allow as expected", workload.ExpectAllow, allow, OK},
		{"deny as expected", workload.ExpectDeny, deny, OK},
		{"allow instead of deny", workload.ExpectDeny, allow, WrongDecision},
		{"deny instead of allow", workload.ExpectAllow, deny, WrongDecision},
		{"unverified allow", workload.Unverified, allow, OK},
		{"unverified deny", workload.Unverified, deny, OK},
		{"undefined is never ok", workload.ExpectDeny, Outcome{Kind: NoResult}, Undefined},
		{"undefined unverified", workload.Unverified, Outcome{Kind: NoResult}, Undefined},
		{"not a boolean", workload.ExpectAllow, Outcome{Kind: NotBoolean}, NonBoolean},
		{"http 400", workload.ExpectAllow, Outcome{Kind: HTTPStatus, Status: 400}, HTTPError},
		{"exit 1", workload.ExpectAllow, Outcome{Kind: ExitStatus, Status: 1}, ExitError},
		{"transport", workload.ExpectAllow, Outcome{Kind: TransportFailure}, Transport},
		{"timeout", workload.Unverified, Outcome{Kind: TimedOut}, Timeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.expect, tc.got); got != tc.want {
				t.Errorf("Classify(%s, %+v) = %s, want %s", tc.expect, tc.got, Name(got, tc.got.Status), Name(tc.want, tc.got.Status))
			}
		})
	}
}

func TestNames(t *testing.T) {
	want := map[Class]string{OK: "ok", WrongDecision: "wrong_decision", Undefined: "undefined",
		NonBoolean: "non_boolean", Transport: "transport", Timeout: "timeout"}
	for c, name := range want {
		if got := Name(c, 0); got != name {
			t.Errorf("Name(%d) = %q, want %q", c, got, name)
		}
	}
	if got := Name(HTTPError, 503); got != "http_503" {
		t.Errorf("Name(HTTPError, 503) = %q", got)
	}
	if got := Name(ExitError, 2); got != "exit_2" {
		t.Errorf("Name(ExitError, 2) = %q", got)
	}
}
