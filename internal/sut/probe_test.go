package sut

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The HTTP probe is ready on the status it waits for, and says what it got otherwise; with TLS
// it trusts what its configuration trusts.
func TestHTTPProbe(t *testing.T) {
	var status atomic.Int32
	status.Store(http.StatusServiceUnavailable)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/health" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(int(status.Load()))
	})
	srv := httptest.NewServer(handler)
	defer srv.Close()
	p := HTTPProbe{URL: srv.URL + "/health"}
	if err := p.Ready(context.Background()); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("a 503: %v, want not ready, saying the status", err)
	}
	status.Store(http.StatusOK)
	if err := p.Ready(context.Background()); err != nil {
		t.Errorf("a 200: %v", err)
	}
	if err := (HTTPProbe{URL: srv.URL + "/health", Status: http.StatusNoContent}).Ready(context.Background()); err == nil {
		t.Error("a 200 passed a probe waiting for 204")
	}
	if p.String() != "GET "+srv.URL+"/health" {
		t.Errorf("described as %q", p)
	}

	tlsSrv := httptest.NewTLSServer(handler)
	defer tlsSrv.Close()
	if err := (HTTPProbe{URL: tlsSrv.URL + "/health"}).Ready(context.Background()); err == nil {
		t.Error("a server whose certificate nobody trusts passed")
	}
	pool := x509.NewCertPool()
	pool.AddCert(tlsSrv.Certificate())
	if err := (HTTPProbe{URL: tlsSrv.URL + "/health", TLS: &tls.Config{RootCAs: pool}}).Ready(context.Background()); err != nil {
		t.Errorf("with the server's CA trusted: %v", err)
	}
}

// The TCP probe is ready once a connection opens, and with TLS once the handshake completes.
func TestTCPProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if err := (TCPProbe{Addr: l.Addr().String()}).Ready(context.Background()); err != nil {
		t.Errorf("a listening port: %v", err)
	}
	l.Close()
	if err := (TCPProbe{Addr: l.Addr().String()}).Ready(context.Background()); err == nil {
		t.Error("a closed port passed")
	}

	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	addr := tlsSrv.Listener.Addr().String()
	pool := x509.NewCertPool()
	pool.AddCert(tlsSrv.Certificate())
	p := TCPProbe{Addr: addr, TLS: &tls.Config{RootCAs: pool}}
	if err := p.Ready(context.Background()); err != nil {
		t.Errorf("TLS handshake with the CA trusted: %v", err)
	}
	if err := (TCPProbe{Addr: addr, TLS: &tls.Config{}}).Ready(context.Background()); err == nil {
		t.Error("a TLS handshake with an untrusted certificate passed")
	}
	if !strings.HasPrefix(p.String(), "TLS connect to ") {
		t.Errorf("described as %q", p)
	}
}

// A server that exits before it is ready fails at once with its own words, whatever the probe
// and however long the deadline: it does not wait the deadline out.
func TestEarlyExitEndsTheWaitAtOnce(t *testing.T) {
	for _, probe := range []Probe{HTTPProbe{URL: "http://127.0.0.1:1/health"}, TCPProbe{Addr: "127.0.0.1:1"}} {
		start := time.Now()
		_, err := StartServer(context.Background(), Launch{Name: "failing server", Probe: probe, ReadyWithin: time.Minute,
			Cmd: exec.Command("sh", "-c", "echo 'Error: listen tcp: address already in use' >&2; exit 3")})
		var se *StartError
		if !errors.As(err, &se) || !strings.Contains(se.FirstError, "address already in use") || !strings.Contains(err.Error(), "exit status 3") {
			t.Errorf("%s: err = %v, want a StartError with the server's first error line and status", probe, err)
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("%s: took %s to report an exit", probe, took)
		}
	}
}

// A server never ready is stopped, and the error says what was probed and the last answer.
func TestNeverReadyIsStopped(t *testing.T) {
	_, err := StartServer(context.Background(), Launch{Name: "silent server", Probe: TCPProbe{Addr: "127.0.0.1:1"},
		ReadyWithin: 300 * time.Millisecond, Cmd: exec.Command("sleep", "60")})
	if err == nil || !strings.Contains(err.Error(), "silent server not ready after 300ms (connect to 127.0.0.1:1") {
		t.Errorf("err = %v", err)
	}
}

// Once ready, a server is watched: an exit before Stop is delivered on Done with its last
// output; one after Stop is not an error.
func TestServerIsWatchedUntilStopped(t *testing.T) {
	start := func(script string) *Server {
		t.Helper()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		s, err := StartServer(context.Background(), Launch{Name: "watched server", Probe: TCPProbe{Addr: l.Addr().String()},
			Cmd: exec.Command("sh", "-c", script)})
		if err != nil {
			t.Fatal(err)
		}
		if s.PID() == 0 || s.Command()[0] != "sh" {
			t.Errorf("pid %d, command %v", s.PID(), s.Command())
		}
		return s
	}
	s := start("sleep 0.2; echo 'panic: out of memory' >&2; exit 2")
	select {
	case err := <-s.Done():
		if err == nil || !strings.Contains(err.Error(), "out of memory") {
			t.Errorf("died: %v, want its last words", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the exit was not delivered")
	}
	s = start("sleep 60")
	if err := s.Stop(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err, ok := <-s.Done(); ok {
		t.Errorf("a stopped server delivered %v", err)
	}
}
