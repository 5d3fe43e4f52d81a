package httpload

import (
	"bufio"
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
