package tlsgen

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"os"
	"strings"
	"testing"
)

// A generated set is private on disk, and a server and client built from it complete an mTLS
// handshake in which the server sees the client's CN, for each loopback name.
func TestGenerateHandshake(t *testing.T) {
	s, err := Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", fi.Mode().Perm())
	}
	for _, key := range []string{s.ServerKey, s.ClientKey} {
		if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", key, err, fi.Mode().Perm())
		}
	}
	pair, err := tls.LoadX509KeyPair(s.ServerCert, s.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := LoadPool(s.CACert)
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair},
		ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	peers := make(chan string, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			tc := c.(*tls.Conn)
			if tc.Handshake() == nil {
				peers <- tc.ConnectionState().PeerCertificates[0].Subject.CommonName
			} else {
				peers <- ""
			}
			io.WriteString(tc, "x")
			tc.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	cfg, err := ClientConfig(s.CACert, s.ClientCert, s.ClientKey, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		c := cfg.Clone()
		c.ServerName = host
		conn, err := tls.Dial("tcp", net.JoinHostPort("127.0.0.1", port), c)
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		conn.Read(make([]byte, 1))
		conn.Close()
		if cn := <-peers; cn != ClientCN {
			t.Errorf("%s: server saw client %q, want %q", host, cn, ClientCN)
		}
	}
	// The server certificate carries ::1 too.
	cert, _ := x509.ParseCertificate(pair.Certificate[0])
	if err := cert.VerifyHostname("::1"); err != nil {
		t.Error(err)
	}
	if err := s.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Errorf("after Remove, %s: %v", s.Dir, err)
	}
}

func TestClientConfigErrorsNameTheFile(t *testing.T) {
	if _, err := ClientConfig("/nonexistent/ca.pem", "", "", false); err == nil || !strings.Contains(err.Error(), "/nonexistent/ca.pem") {
		t.Errorf("missing CA: %v", err)
	}
	if _, err := ClientConfig("", "c.pem", "", false); err == nil {
		t.Error("a certificate without a key was accepted")
	}
}
