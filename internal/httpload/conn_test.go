package httpload

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// rawServer answers every request on a connection with the next canned response.
func rawServer(t *testing.T, responses ...string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for _, resp := range responses {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					io.WriteString(c, resp)
				}
			}()
		}
	}()
	return "http://" + l.Addr().String() + "/v1/data/x"
}

func do(t *testing.T, url string, n int) (statuses []int, bodies []string, errs []error, dials int64) {
	t.Helper()
	e, path, err := ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	e.Timeout = 2 * time.Second
	c := NewConn(e)
	defer c.Close()
	req := EncodeRequest(e, "POST", path, []Header{{"Content-Type", "application/json"}}, []byte(`{"input":{}}`))
	for range n {
		status, body, err := c.Do(context.Background(), req)
		statuses = append(statuses, status)
		bodies = append(bodies, string(body))
		errs = append(errs, err)
	}
	return statuses, bodies, errs, c.Dials
}

func TestResponses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		response string
		status   int
		body     string
	}{
		{"content length", "HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n{\"result\":true}", 200, `{"result":true}`},
		{"lower-case header", "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}", 200, `{}`},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"res\r\na;ext=1\r\nult\":true}\r\n0\r\nTrailer: x\r\n\r\n", 200, `{"result":true}`},
		{"interim 100", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 400 Bad Request\r\nContent-Length: 3\r\n\r\nbad", 400, "bad"},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n", 204, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			statuses, bodies, errs, dials := do(t, rawServer(t, tc.response, tc.response), 2)
			for i := range 2 {
				if errs[i] != nil || statuses[i] != tc.status || bodies[i] != tc.body {
					t.Errorf("request %d: %d %q %v; want %d %q", i, statuses[i], bodies[i], errs[i], tc.status, tc.body)
				}
			}
			if dials != 1 {
				t.Errorf("dials %d, want 1: the connection is kept alive", dials)
			}
		})
	}
}

func TestConnectionCloseRedials(t *testing.T) {
	closeResp := "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"
	statuses, _, errs, dials := do(t, rawServer(t, closeResp), 3)
	for i := range 3 {
		if errs[i] != nil || statuses[i] != 200 {
			t.Errorf("request %d: %d %v", i, statuses[i], errs[i])
		}
	}
	if dials != 3 {
		t.Errorf("dials %d, want 3 (the server closes after each response)", dials)
	}
}

func TestBodyToEndOfConnection(t *testing.T) {
	statuses, bodies, errs, _ := do(t, rawServer(t, "HTTP/1.0 200 OK\r\n\r\n{\"result\":false}"), 1)
	if errs[0] != nil || statuses[0] != 200 || bodies[0] != `{"result":false}` {
		t.Errorf("%d %q %v", statuses[0], bodies[0], errs[0])
	}
}

func TestMalformed(t *testing.T) {
	for _, resp := range []string{
		"SMTP ready\r\n",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
	} {
		t.Run(strings.Fields(resp)[0], func(t *testing.T) {
			_, _, errs, _ := do(t, rawServer(t, resp), 1)
			if errs[0] == nil || errors.Is(errs[0], ErrTimeout) {
				t.Errorf("response %q: err %v, want a transport error", resp, errs[0])
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	e, path, _ := ParseURL(srv.URL + "/x")
	e.Timeout = 100 * time.Millisecond
	c := NewConn(e)
	start := time.Now()
	_, _, err := c.Do(context.Background(), EncodeRequest(e, "GET", path, nil, nil))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err %v, want ErrTimeout", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %s to time out after 100ms", took)
	}
}

func TestAgainstNetHTTPServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Header.Get("Content-Type") != "application/json" || r.Host == "" {
			http.Error(w, "headers", 400)
			return
		}
		fmt.Fprintf(w, "%s|%s", r.Method, b)
		if r.URL.Query().Get("big") != "" {
			w.Write([]byte(strings.Repeat("x", 100_000))) // forces chunked encoding
		}
	}))
	defer srv.Close()
	statuses, bodies, errs, dials := do(t, srv.URL+"/v1/data/x", 3)
	for i := range 3 {
		if errs[i] != nil || statuses[i] != 200 || bodies[i] != `POST|{"input":{}}` {
			t.Errorf("request %d: %d %q %v", i, statuses[i], bodies[i], errs[i])
		}
	}
	if dials != 1 {
		t.Errorf("dials %d, want 1", dials)
	}
	_, bodies, errs, _ = do(t, srv.URL+"/v1/data/x?big=1", 2)
	if errs[1] != nil || len(bodies[1]) != len(`POST|{"input":{}}`)+100_000 {
		t.Errorf("big body: %d bytes, %v", len(bodies[1]), errs[1])
	}
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct{ url, addr, path string }{
		{"http://127.0.0.1:8181/v1/data/a/b", "127.0.0.1:8181", "/v1/data/a/b"},
		{"http://localhost/x?y=1", "localhost:80", "/x?y=1"},
		{"https://[::1]/", "[::1]:443", "/"},
	} {
		e, path, err := ParseURL(tc.url)
		if err != nil || e.Addr != tc.addr || path != tc.path {
			t.Errorf("%s: %q %q %v", tc.url, e.Addr, path, err)
		}
	}
	for _, bad := range []string{"ftp://x/", "127.0.0.1:8181", "http://"} {
		if _, _, err := ParseURL(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// closingServer answers every request with a small 200 and closes the connection right after
// answering when closeAfter(connection number, answers on it) says so, never saying
// Connection: close, as servers with an idle timeout or a per-connection request limit do.
func closingServer(t testing.TB, closeAfter func(conn, answered int) bool) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for conn := 1; ; conn++ {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func(conn int) {
				defer c.Close()
				br := bufio.NewReader(c)
				for answered := 1; ; answered++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
					if closeAfter(conn, answered) {
						return
					}
				}
			}(conn)
		}
	}()
	return "http://" + l.Addr().String() + "/v1/data/x"
}

// A server that closes kept-alive connections when it likes costs reconnects, never errors:
// the close is seen before reuse, or the request that met it is resent once.
func TestServerClosesKeptAliveConnections(t *testing.T) {
	for _, tc := range []struct {
		name       string
		closeAfter func(conn, answered int) bool
		noPeek     bool          // find every close by the failed request, not by looking first
		pause      time.Duration // between requests, so the close has arrived before reuse
		dials      int64
	}{
		{"at most 5 requests a connection", func(_, n int) bool { return n == 5 }, false, 0, 80},
		{"at most 5 requests, close seen while idle", func(_, n int) bool { return n == 5 }, false, 3 * time.Millisecond, 80},
		{"at most 5 requests, found by the failed request", func(_, n int) bool { return n == 5 }, true, 0, 80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, path, err := ParseURL(closingServer(t, tc.closeAfter))
			if err != nil {
				t.Fatal(err)
			}
			e.Timeout = 5 * time.Second
			c := NewConn(e)
			c.noPeek = tc.noPeek
			c.lookAfter = time.Millisecond // the 3 ms pause makes every connection idle enough
			defer c.Close()
			req := EncodeRequest(e, "POST", path, nil, []byte(`{"input":{}}`))
			var failed []error
			reconnected := 0
			for range 400 {
				status, body, err := c.Do(context.Background(), req)
				if err != nil || status != 200 || string(body) != "{}" {
					failed = append(failed, fmt.Errorf("%d %q %v", status, body, err))
				}
				if c.Reconnected {
					reconnected++
				}
				time.Sleep(tc.pause)
			}
			if len(failed) > 0 {
				t.Fatalf("%d of 400 requests failed, first: %v", len(failed), failed[0])
			}
			if c.Dials != tc.dials {
				t.Errorf("dials %d, want %d", c.Dials, tc.dials)
			}
			if c.Dials < 2 || c.Reconnects != c.Dials-1 || int64(reconnected) != c.Reconnects {
				t.Errorf("dials %d, reconnects %d (%d requests said so); want one reconnect for every connection after the first",
					c.Dials, c.Reconnects, reconnected)
			}
			// An idle connection is looked at before reuse: a close that has arrived is seen
			// before a request is written into it. The server has had 3 ms to close it, which
			// on a loaded machine is not always enough, so nine in ten must be seen (a look
			// that does not work sees none; the resend counts the rest as reconnects all the
			// same, which the check above holds).
			if tc.pause > 0 && (c.closesSeen > c.Reconnects || 10*c.closesSeen < 9*c.Reconnects) {
				t.Errorf("%d of %d closes seen before sending, want at least nine in ten", c.closesSeen, c.Reconnects)
			}
			if tc.noPeek && c.closesSeen != 0 {
				t.Errorf("%d closes seen by a connection that does not look", c.closesSeen)
			}
		})
	}
}

// A server that is gone is asked again at a bounded pace, and the failure says why in the
// operating system's words.
func TestDeadServerIsRetriedWithBackoff(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	e, path, _ := ParseURL("http://" + addr + "/x")
	e.Timeout = time.Second
	c := NewConn(e)
	req := EncodeRequest(e, "GET", path, nil, nil)
	attempts := 0
	var last error
	for start := time.Now(); time.Since(start) < 2*time.Second; attempts++ {
		_, _, last = c.Do(context.Background(), req)
		if last == nil || errors.Is(last, ErrNotSent) || errors.Is(last, ErrTimeout) {
			t.Fatalf("attempt %d: err %v, want a refused connect", attempts, last)
		}
	}
	// 10 ms, doubling to 1 s: 8 attempts in 2 s (146,365 in 6 s without a backoff).
	if attempts > 20 {
		t.Errorf("%d connects in 2 s: no backoff", attempts)
	}
	if !strings.Contains(last.Error(), "connection refused") {
		t.Errorf("error %q does not say the connection was refused", last)
	}
}

// A timeout too short for anything to be sent is not a request the server failed.
func TestTimeoutBeforeAnythingIsSent(t *testing.T) {
	url := closingServer(t, func(int, int) bool { return false })
	e, path, _ := ParseURL(url)
	e.Timeout = time.Nanosecond
	c := NewConn(e)
	defer c.Close()
	_, _, err := c.Do(context.Background(), EncodeRequest(e, "GET", path, nil, nil))
	if !errors.Is(err, ErrNotSent) || errors.Is(err, ErrTimeout) {
		t.Fatalf("err %v, want ErrNotSent", err)
	}
}

// BenchmarkKeptAliveRequest is one request on a kept-alive connection to a loopback server,
// looking at the idle socket before reuse; look/nolook is its time over that of the same
// request on a second connection that does not look, taken in the same loop so that a busy
// machine slows both alike.
//
//	go test ./internal/httpload -run XXX -bench KeptAlive -benchmem -count 5
func BenchmarkKeptAliveRequest(b *testing.B) {
	e, path, _ := ParseURL(closingServer(b, func(int, int) bool { return false }))
	e.Timeout = 5 * time.Second
	look, noLook := NewConn(e), NewConn(e)
	noLook.noPeek = true
	defer look.Close()
	defer noLook.Close()
	req := EncodeRequest(e, "POST", path, nil, []byte(`{"input":{}}`))
	var looking, notLooking time.Duration
	base := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		start := time.Since(base)
		if _, _, err := look.Do(context.Background(), req); err != nil {
			b.Fatal(err)
		}
		mid := time.Since(base)
		if _, _, err := noLook.Do(context.Background(), req); err != nil {
			b.Fatal(err)
		}
		looking, notLooking = looking+mid-start, notLooking+time.Since(base)-mid
	}
	b.ReportMetric(float64(looking)/float64(notLooking), "look/nolook")
}

// BenchmarkIdleLook is the look at an idle kept-alive socket alone, the part of every request
// that BenchmarkKeptAliveRequest's look=true adds.
func BenchmarkIdleLook(b *testing.B) {
	e, path, _ := ParseURL(closingServer(b, func(int, int) bool { return false }))
	e.Timeout = 5 * time.Second
	c := NewConn(e)
	defer c.Close()
	if _, _, err := c.Do(context.Background(), EncodeRequest(e, "GET", path, nil, nil)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if c.closedByPeer() {
			b.Fatal("an open connection looked closed")
		}
	}
}

// BenchmarkRawPath is one request on a kept-alive connection by the raw path (rawio.go);
// raw/netconn is its time over that of the same request through net.Conn on a second
// connection, taken in the same loop so that a busy machine slows both alike. Time here is
// round-trip time, server included; the CPU the generator saves shows better in
// `authzbench calibrate`.
//
//	go test ./internal/httpload -run XXX -bench RawPath -benchmem -count 5
func BenchmarkRawPath(b *testing.B) {
	e, path, _ := ParseURL(closingServer(b, func(int, int) bool { return false }))
	e.Timeout = 5 * time.Second
	raw, viaNet := NewConn(e), NewConn(e)
	viaNet.noRawIO = true
	defer raw.Close()
	defer viaNet.Close()
	req := EncodeRequest(e, "POST", path, nil, []byte(`{"input":{}}`))
	var rawTime, netTime time.Duration
	base := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		start := time.Since(base)
		if _, _, err := raw.Do(context.Background(), req); err != nil {
			b.Fatal(err)
		}
		mid := time.Since(base)
		if _, _, err := viaNet.Do(context.Background(), req); err != nil {
			b.Fatal(err)
		}
		rawTime, netTime = rawTime+mid-start, netTime+time.Since(base)-mid
	}
	if !raw.rawIO && rawIOSupported {
		b.Fatal("the raw connection did not take the raw path")
	}
	b.ReportMetric(float64(rawTime)/float64(netTime), "raw/netconn")
}

// TestRawPathLargeRequest: a request larger than the socket takes at once (the raw path sends
// what fits, net.Conn the rest) arrives whole, on both paths, and the connection is kept.
func TestRawPathLargeRequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%d", len(b))
	}))
	defer srv.Close()
	e, path, err := ParseURL(srv.URL + "/big")
	if err != nil {
		t.Fatal(err)
	}
	e.Timeout = 10 * time.Second
	body := bytes.Repeat([]byte("x"), 16<<20)
	req := EncodeRequest(e, "POST", path, nil, body)
	for _, noRaw := range []bool{false, true} {
		c := NewConn(e)
		c.noRawIO = noRaw
		for i := range 3 {
			status, got, err := c.Do(context.Background(), req)
			if err != nil || status != 200 || string(got) != fmt.Sprint(len(body)) {
				t.Fatalf("noRawIO %v, request %d: %d %q %v", noRaw, i, status, got, err)
			}
		}
		if c.rawIO == noRaw && rawIOSupported {
			t.Errorf("noRawIO %v: rawIO %v", noRaw, c.rawIO)
		}
		if c.Dials != 1 {
			t.Errorf("noRawIO %v: %d dials, want 1", noRaw, c.Dials)
		}
		c.Close()
	}
}

// repeatReader hands out the same answer at every read, as a socket would for one request at a
// time.
type repeatReader struct{ answer []byte }

func (r repeatReader) Read(p []byte) (int, error) { return copy(p, r.answer), nil }

// BenchmarkReadResponse is the parse of an OPA answer already in the buffer: status line,
// headers and body, without the system calls.
//
//	go test ./internal/httpload -run XXX -bench ReadResponse -benchmem -count 5
func BenchmarkReadResponse(b *testing.B) {
	answer := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nVary: Accept-Encoding\r\n" +
		"Date: Mon, 23 Nov 2026 12:09:29 GMT\r\nContent-Length: 16\r\n\r\n{\"result\":true}\n")
	c := &Conn{br: bufio.NewReaderSize(repeatReader{answer}, 16<<10)}
	b.ReportAllocs()
	for b.Loop() {
		if status, _, err := c.readResponse(); err != nil || status != 200 || len(c.body) != 16 {
			b.Fatal(status, err)
		}
	}
}
