package httpload

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/tlsgen"
)

// tlsServer serves 200 {"result":true} over TLS with the generated server certificate; with
// clientAuth it requires a client certificate signed by the generated CA.
func tlsServer(t *testing.T, set *tlsgen.Set, clientAuth bool) string {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(set.ServerCert, set.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{"result":true}`)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	if clientAuth {
		pool, err := tlsgen.LoadPool(set.CACert)
		if err != nil {
			t.Fatal(err)
		}
		srv.TLS.ClientCAs, srv.TLS.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refusals it logs are the test's own
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL + "/v1/data/x"
}

func TestTLS(t *testing.T) {
	set, err := tlsgen.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer set.Remove()
	trusted, err := tlsgen.ClientConfig(set.CACert, "", "", false)
	if err != nil {
		t.Fatal(err)
	}
	withCert, err := tlsgen.ClientConfig(set.CACert, set.ClientCert, set.ClientKey, false)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		clientAuth bool
		cfg        *tls.Config
		keepAlive  bool
		wantErr    error // nil: every request answered 200
	}{
		{"trusted, kept alive", false, trusted, true, nil},
		{"trusted, a connection per request", false, trusted, false, nil},
		{"mtls with a client certificate", true, withCert, false, nil},
		{"untrusted server", false, &tls.Config{}, true, ErrTLSHandshake},
		{"mtls without a client certificate", true, trusted, true, ErrTLSHandshake},
	}
	const n = 4
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, path, err := ParseURL(tlsServer(t, set, tc.clientAuth))
			if err != nil {
				t.Fatal(err)
			}
			cfg := tc.cfg.Clone()
			cfg.ServerName = e.TLS.ServerName
			e.TLS, e.Timeout, e.KeepAlive = cfg, 2*time.Second, tc.keepAlive
			c := NewConn(e)
			defer c.Close()
			req := EncodeRequest(e, "POST", path, nil, []byte(`{"input":{}}`))
			handshakes := 0
			for i := range n {
				status, body, err := c.Do(context.Background(), req)
				if c.TLSTime > 0 {
					handshakes++
				}
				if tc.wantErr != nil {
					if !errors.Is(err, tc.wantErr) {
						t.Fatalf("request %d: err %v, want %v", i, err, tc.wantErr)
					}
					continue
				}
				if err != nil || status != 200 || string(body) != `{"result":true}` {
					t.Fatalf("request %d: %d %q %v", i, status, body, err)
				}
				if c.TLSTime > 0 && c.ConnectTime <= 0 {
					t.Errorf("request %d: a handshake of %s after a TCP connect of %s", i, c.TLSTime, c.ConnectTime)
				}
			}
			want := n // a handshake tried by each request: every one failed, or none was kept
			if tc.wantErr == nil && tc.keepAlive {
				want = 1
			}
			if handshakes != want {
				t.Errorf("%d requests timed %d handshakes, want %d", n, handshakes, want)
			}
		})
	}
}
