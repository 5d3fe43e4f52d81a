// Package verify classifies each response against the decision its input expects.
//
// It is the one place that decides what counts as a served decision: a 4xx, an undefined
// result, a non-boolean result or a wrong allow/deny is an error, never a success. It does no
// I/O and keeps no state, so it is safe on the measured path.
package verify

import (
	"strconv"

	"github.com/authzbench/authzbench/internal/workload"
)

// Kind is what a target observed for one request, before it is compared with the expectation.
type Kind uint8

const (
	// Decided: the engine returned a boolean decision (Outcome.Allow).
	Decided Kind = iota
	// NoResult: the engine answered but the decision was undefined (OPA's {} for a path with
	// no rule, or a rule whose conditions were all false and no default).
	NoResult
	// NotBoolean: the engine answered with something that is neither a boolean nor an object
	// with a boolean "allow".
	NotBoolean
	// HTTPStatus: the server answered with a non-2xx status (Outcome.Status).
	HTTPStatus
	// ExitStatus: a per-decision process exited non-zero (Outcome.Status).
	ExitStatus
	// TransportFailure: the request did not complete (refused, reset, closed mid-response).
	TransportFailure
	// TimedOut: no answer within the request timeout.
	TimedOut
	// Malformed: the server answered 2xx, but the body is not a decision document at all (not
	// JSON, or JSON without the field the engine's API puts the decision in).
	Malformed
	// EvalFailed: an engine inside authzbench returned an evaluation error instead of a
	// decision (a built-in that failed, a conflict between rules).
	EvalFailed
	// TLSRefused: the TLS handshake failed: the server's certificate was not trusted, or the
	// server refused the client's (none given, or one it does not trust).
	TLSRefused
	// GRPCStatus: a gRPC authorization service (Envoy's ext_authz) answered with a status that
	// is neither OK (allow) nor PERMISSION_DENIED (deny): a failed call, or a CheckResponse
	// carrying another code. Outcome.Status is the code.
	GRPCStatus
	// NotHTTP2: HTTP/2 was asked for (--http2) and the server answered in HTTP/1.x, or
	// refused the HTTP/2 connection preface in HTTP/1.x: whatever the answer said, the
	// protocol measured was not the one asked for.
	NotHTTP2
	// Listed, WrongSet and Cut are a list query's answers, judged whole against the expected
	// set (sets.go): the same set, another set, or a set the engine cut short itself.
	Listed
	WrongSet
	Cut
)

// Outcome is what a target reports for one request.
type Outcome struct {
	Kind  Kind
	Allow bool
	// Versioned: the answer named the version of the world it was decided at (Version), in a
	// run whose world changes; judged by that version exactly.
	Versioned bool
	Status    int
	Version   int64
	// The server's own timers, when it reported them (OPA's ?metrics=true): the policy
	// evaluation and the whole request handler, in nanoseconds; 0 when not reported.
	ServerEvalNS, ServerHandlerNS int64
	// ConnectNS and TLSNS are the parts of the request spent opening a connection, the TCP
	// connect and the TLS handshake, when this request opened one; 0 when it reused one (and
	// TLSNS 0 in clear).
	ConnectNS, TLSNS int64
	// Err says what went wrong when the outcome is not a decision (the OS's words for a
	// refused connection, the engine's evaluation error), so the result can show one sample
	// message per class. Nil for decisions; never read on the measured path of a success.
	Err error
	// NotSent: the request never left authzbench (the timeout passed before the connect or the
	// write could start). It measured nothing of the server, so the drivers do not count it as
	// a request; they stop a run where almost every attempt ends so.
	NotSent bool
}

// Class is the verdict on one response. Only OK responses are served decisions.
type Class uint8

const (
	OK Class = iota
	WrongDecision
	Undefined
	NonBoolean
	HTTPError
	RateLimited // HTTP 429: the server refused to decide; never a success
	ExitError
	Transport
	Timeout
	// MalformedResponse: a 2xx whose body is not a decision document.
	MalformedResponse
	// EvalError: an in-process engine's evaluation error.
	EvalError
	// Unsent: an open-loop send that came due in the measured window but was never sent
	// (every connection was busy until the run gave up on it). Recorded by the driver, never
	// by a target; charged at its lower bound, from its intended time to when the run gave up.
	Unsent
	// TLSHandshake: the TLS handshake failed (an untrusted server, a refused client
	// certificate). Not a transport failure: the server answered, and said no.
	TLSHandshake
	// GRPCError: a gRPC status other than OK or PERMISSION_DENIED; split by code, as Envoy
	// sees each as a failure of the authorization service, never as a decision.
	GRPCError
	// WrongProtocol: the answer did not come over HTTP/2 when HTTP/2 was asked for; never a
	// success, even when it carried the expected decision.
	WrongProtocol
	// Truncated: a list answer the engine cut short (a deadline, a cap on its results, a stream
	// that ended early): an outcome of its own, never a success, and no wrong answer either.
	Truncated
	NumClasses
)

// Classify compares what the target observed with what the input expects.
func Classify(expect workload.Expect, o Outcome) Class {
	switch o.Kind {
	case Decided:
		if expect == workload.Unverified || o.Allow == (expect == workload.ExpectAllow) {
			return OK
		}
		return WrongDecision
	case NoResult:
		return Undefined
	case NotBoolean:
		return NonBoolean
	case HTTPStatus:
		if o.Status == 429 {
			return RateLimited
		}
		return HTTPError
	case ExitStatus:
		return ExitError
	case TimedOut:
		return Timeout
	case Malformed:
		return MalformedResponse
	case EvalFailed:
		return EvalError
	case TLSRefused:
		return TLSHandshake
	case GRPCStatus:
		return GRPCError
	case NotHTTP2:
		return WrongProtocol
	case Listed:
		return OK
	case WrongSet:
		return WrongDecision
	case Cut:
		return Truncated
	}
	return Transport
}

// Name is the class name used in results and reports: ok, wrong_decision, undefined,
// non_boolean, http_<code>, rate_limited, exit_<code>, transport, timeout, malformed_response,
// eval_error, unsent, tls_handshake, grpc_<code> (grpc_unavailable, grpc_deadline_exceeded),
// not_http2, truncated.
func Name(c Class, status int) string {
	switch c {
	case OK:
		return "ok"
	case WrongDecision:
		return "wrong_decision"
	case Undefined:
		return "undefined"
	case NonBoolean:
		return "non_boolean"
	case HTTPError:
		return "http_" + strconv.Itoa(status)
	case RateLimited:
		return "rate_limited"
	case ExitError:
		return "exit_" + strconv.Itoa(status)
	case Timeout:
		return "timeout"
	case MalformedResponse:
		return "malformed_response"
	case EvalError:
		return "eval_error"
	case Unsent:
		return "unsent"
	case TLSHandshake:
		return "tls_handshake"
	case WrongProtocol:
		return "not_http2"
	case Truncated:
		return "truncated"
	case GRPCError:
		if status >= 0 && status < len(grpcCodes) {
			return "grpc_" + grpcCodes[status]
		}
		return "grpc_" + strconv.Itoa(status)
	}
	return "transport"
}

// grpcCodes are gRPC's status code names (google.rpc.Code), lower-cased, by code; kept here so
// that classifying needs no gRPC.
var grpcCodes = [...]string{"ok", "cancelled", "unknown", "invalid_argument", "deadline_exceeded", "not_found",
	"already_exists", "permission_denied", "resource_exhausted", "failed_precondition", "aborted", "out_of_range",
	"unimplemented", "internal", "unavailable", "data_loss", "unauthenticated"}

// HasStatus reports whether the class is split by status code.
func HasStatus(c Class) bool { return c == HTTPError || c == ExitError || c == GRPCError }
