package kinds

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/httpload"
	"github.com/authzbench/authzbench/internal/verify"
)

// A request that got no answer says why in the system's own words, and one that never left is
// marked so, for the served targets alike.
func TestFailedRequestsSayWhy(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	live := l.Addr().String()
	defer l.Close()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()

	for _, tc := range []struct {
		name    string
		addr    string
		timeout time.Duration
		kind    verify.Kind
		notSent bool
		says    string
	}{
		{"refused", deadAddr, time.Second, verify.TransportFailure, false, "connection refused"},
		{"timeout too short to send", live, time.Nanosecond, verify.TimedOut, true, "before the connect"},
		{"no answer in time", live, 50 * time.Millisecond, verify.TimedOut, false, "timeout after 50ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, path, err := httpload.ParseURL("http://" + tc.addr + "/v1/data/x")
			if err != nil {
				t.Fatal(err)
			}
			e.Timeout = tc.timeout
			req := httpload.EncodeRequest(e, "POST", path, nil, []byte(`{"input":{}}`))
			deciders := map[string]Decider{
				"opa/server": &httpWorker{conn: httpload.NewConn(e), requests: [][]byte{req}, decisions: newDecisionReader("result")},
				"http":       &genericWorker{conn: httpload.NewConn(e), requests: [][]byte{req}, pointer: []string{"allow"}},
			}
			for name, d := range deciders {
				out := d.Decide(context.Background(), 0)
				if out.Kind != tc.kind || out.NotSent != tc.notSent || out.Err == nil || !strings.Contains(out.Err.Error(), tc.says) {
					t.Errorf("%s: kind %d, not sent %t, err %v; want kind %d, not sent %t, an error saying %q",
						name, out.Kind, out.NotSent, out.Err, tc.kind, tc.notSent, tc.says)
				}
			}
		})
	}
}
