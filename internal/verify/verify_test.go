package verify

import (
	"fmt"
	"testing"

	"github.com/authzbench/authzbench/internal/workload"
)

// TestClassify walks every observed Kind against every expectation. Only a boolean decision can
// be OK, and only when it matches the expectation or there is none to match (an input without
// "expect" accepts either boolean); every other kind is an error whatever the input expected.
func TestClassify(t *testing.T) {
	expects := []workload.Expect{workload.Unverified, workload.ExpectAllow, workload.ExpectDeny}
	for _, tc := range []struct {
		name string
		got  Outcome
		// want is indexed like expects: Unverified, ExpectAllow, ExpectDeny.
		want [3]Class
	}{
		{"decided allow", Outcome{Kind: Decided, Allow: true}, [3]Class{OK, OK, WrongDecision}},
		{"decided deny", Outcome{Kind: Decided, Allow: false}, [3]Class{OK, WrongDecision, OK}},
		{"no result", Outcome{Kind: NoResult}, [3]Class{Undefined, Undefined, Undefined}},
		// Allow must not leak through a kind that is not a decision.
		{"no result with allow set", Outcome{Kind: NoResult, Allow: true}, [3]Class{Undefined, Undefined, Undefined}},
		{"not boolean", Outcome{Kind: NotBoolean}, [3]Class{NonBoolean, NonBoolean, NonBoolean}},
		{"http 400", Outcome{Kind: HTTPStatus, Status: 400}, [3]Class{HTTPError, HTTPError, HTTPError}},
		{"http 503", Outcome{Kind: HTTPStatus, Status: 503}, [3]Class{HTTPError, HTTPError, HTTPError}},
		{"http 429", Outcome{Kind: HTTPStatus, Status: 429}, [3]Class{RateLimited, RateLimited, RateLimited}},
		{"http 429 with allow set", Outcome{Kind: HTTPStatus, Status: 429, Allow: true}, [3]Class{RateLimited, RateLimited, RateLimited}},
		// 429 is only a rate limit from an HTTP server; a process exiting 429 is an exit error.
		{"exit 429", Outcome{Kind: ExitStatus, Status: 429}, [3]Class{ExitError, ExitError, ExitError}},
		{"exit 1", Outcome{Kind: ExitStatus, Status: 1}, [3]Class{ExitError, ExitError, ExitError}},
		{"exit 2 with allow set", Outcome{Kind: ExitStatus, Status: 2, Allow: true}, [3]Class{ExitError, ExitError, ExitError}},
		{"transport failure", Outcome{Kind: TransportFailure}, [3]Class{Transport, Transport, Transport}},
		{"timed out", Outcome{Kind: TimedOut}, [3]Class{Timeout, Timeout, Timeout}},
		// A 2xx that is no decision document, or an engine's evaluation error, is never a
		// decision, even with Allow set.
		{"malformed body", Outcome{Kind: Malformed, Allow: true}, [3]Class{MalformedResponse, MalformedResponse, MalformedResponse}},
		{"evaluation error", Outcome{Kind: EvalFailed, Allow: true}, [3]Class{EvalError, EvalError, EvalError}},
		// A refused TLS handshake is its own class, not a transport failure, and never a decision.
		{"tls refused", Outcome{Kind: TLSRefused, Allow: true}, [3]Class{TLSHandshake, TLSHandshake, TLSHandshake}},
		// A gRPC status other than OK or PERMISSION_DENIED is no decision, whatever Allow says.
		{"grpc unavailable", Outcome{Kind: GRPCStatus, Status: 14, Allow: true}, [3]Class{GRPCError, GRPCError, GRPCError}},
		// An answer in HTTP/1.x when HTTP/2 was asked for is no decision, even a right one.
		{"not http2", Outcome{Kind: NotHTTP2, Allow: true}, [3]Class{WrongProtocol, WrongProtocol, WrongProtocol}},
		// A kind this package does not define is never a served decision.
		{"undefined kind", Outcome{Kind: Kind(200), Allow: true}, [3]Class{Transport, Transport, Transport}},
	} {
		for i, expect := range expects {
			t.Run(fmt.Sprintf("%s/expect %s", tc.name, expect), func(t *testing.T) {
				got := Classify(expect, tc.got)
				if got != tc.want[i] {
					t.Errorf("Classify(%s, %+v) = %s (%d), want %s (%d)", expect, tc.got,
						Name(got, tc.got.Status), got, Name(tc.want[i], tc.got.Status), tc.want[i])
				}
			})
		}
	}
}

func TestName(t *testing.T) {
	for _, tc := range []struct {
		class  Class
		status int
		want   string
	}{
		{OK, 0, "ok"},
		{OK, 503, "ok"}, // a status is only part of the name for the classes split by it
		{WrongDecision, 0, "wrong_decision"},
		{Undefined, 0, "undefined"},
		{NonBoolean, 0, "non_boolean"},
		{HTTPError, 400, "http_400"},
		{HTTPError, 404, "http_404"},
		{HTTPError, 500, "http_500"},
		{HTTPError, 503, "http_503"},
		{RateLimited, 429, "rate_limited"},
		{RateLimited, 0, "rate_limited"},
		{ExitError, 1, "exit_1"},
		{ExitError, 2, "exit_2"},
		{ExitError, 137, "exit_137"},
		{ExitError, -1, "exit_-1"}, // exec reports -1 for a process killed by a signal
		{Transport, 0, "transport"},
		{Transport, 502, "transport"},
		{Timeout, 0, "timeout"},
		{MalformedResponse, 200, "malformed_response"},
		{EvalError, 0, "eval_error"},
		{Unsent, 0, "unsent"},
		{TLSHandshake, 0, "tls_handshake"},
		{GRPCError, 14, "grpc_unavailable"},
		{GRPCError, 4, "grpc_deadline_exceeded"},
		{GRPCError, 16, "grpc_unauthenticated"},
		{GRPCError, 13, "grpc_internal"},
		{GRPCError, 99, "grpc_99"}, // a code gRPC does not define keeps its number
		{WrongProtocol, 0, "not_http2"},
		{WrongProtocol, 505, "not_http2"},
	} {
		t.Run(fmt.Sprintf("%s from status %d", tc.want, tc.status), func(t *testing.T) {
			if got := Name(tc.class, tc.status); got != tc.want {
				t.Errorf("Name(%d, %d) = %q, want %q", tc.class, tc.status, got, tc.want)
			}
		})
	}
}

// TestNamesAreDistinct: two classes must never share a report name, or their counts would be
// added together in ErrorClasses.
func TestNamesAreDistinct(t *testing.T) {
	seen := map[string]Class{}
	for c := Class(0); c < NumClasses; c++ {
		name := Name(c, 418)
		if prev, dup := seen[name]; dup {
			t.Errorf("classes %d and %d are both named %q", prev, c, name)
		}
		seen[name] = c
	}
	if len(seen) != int(NumClasses) {
		t.Errorf("%d names for %d classes", len(seen), NumClasses)
	}
}

func TestHasStatus(t *testing.T) {
	for c := Class(0); c < NumClasses; c++ {
		want := c == HTTPError || c == ExitError || c == GRPCError
		t.Run(Name(c, 0), func(t *testing.T) {
			if got := HasStatus(c); got != want {
				t.Errorf("HasStatus(%s) = %t, want %t", Name(c, 0), got, want)
			}
		})
	}
}
