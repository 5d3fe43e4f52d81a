package extauthz

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/open-policy-agent/opa/v1/plugins"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/authzbench/authzbench/internal/tlsgen"
)

// pluginConfig is the plugin's configuration as OPA would hand it over.
func pluginConfig(t *testing.T, addr string, files TLSFiles) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{"addr": addr, "path": "test/decision",
		"tls_cert_file": files.CertFile, "tls_private_key_file": files.KeyFile, "tls_ca_cert_file": files.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkOver sends one allowed check to addr with the client TLS configuration given (nil: in
// clear) and returns the call's status code.
func checkOver(t *testing.T, addr string, cfg *tls.Config) (codes.Code, error) {
	t.Helper()
	creds := grpc.WithTransportCredentials(credentials.NewTLS(cfg))
	if cfg == nil {
		creds = grpc.WithTransportCredentials(insecure.NewCredentials())
	}
	conn, err := grpc.NewClient("passthrough:///"+addr, creds)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := authv3.NewAuthorizationClient(conn).Check(ctx, check("GET", "/people", nil, ""))
	if err == nil && codes.Code(resp.GetStatus().GetCode()) != codes.OK {
		t.Fatalf("allowed check answered %v", resp.GetStatus())
	}
	return status.Code(err), err
}

func clientTLS(t *testing.T, caFile, certFile, keyFile string) *tls.Config {
	t.Helper()
	cfg, err := tlsgen.ClientConfig(caFile, certFile, keyFile, false)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The plugin serves its gRPC port over TLS from its own settings, and with a client CA it
// requires and verifies a client certificate: a client without one, one from another CA, and
// one that does not trust the server are all refused (UNAVAILABLE, the handshake's failure),
// never answered.
func TestOPAPluginTLS(t *testing.T) {
	set, err := tlsgen.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other, err := tlsgen.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	server := TLSFiles{CertFile: set.ServerCert, KeyFile: set.ServerKey}
	mutual := TLSFiles{CertFile: set.ServerCert, KeyFile: set.ServerKey, CAFile: set.CACert}
	for _, tc := range []struct {
		name   string
		files  TLSFiles
		client *tls.Config
		want   codes.Code
	}{
		{"tls", server, clientTLS(t, set.CACert, "", ""), codes.OK},
		{"tls, server not trusted", server, clientTLS(t, other.CACert, "", ""), codes.Unavailable},
		{"tls, client in clear", server, nil, codes.Unavailable},
		{"mtls", mutual, clientTLS(t, set.CACert, set.ClientCert, set.ClientKey), codes.OK},
		{"mtls, no client certificate", mutual, clientTLS(t, set.CACert, "", ""), codes.Unavailable},
		{"mtls, client certificate of another CA", mutual, clientTLS(t, set.CACert, other.ClientCert, other.ClientKey), codes.Unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := freeAddr(t)
			startOPAPlugin(t, pluginConfig(t, addr, tc.files))
			got, err := checkOver(t, addr, tc.client)
			if got != tc.want {
				t.Errorf("status %s (%v), want %s", got, err, tc.want)
			}
		})
	}
}

// Wrong TLS settings stop the plugin before it starts, naming the setting.
func TestOPAPluginTLSSettings(t *testing.T) {
	set, err := tlsgen.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, err := plugins.New([]byte(`{}`), "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		files TLSFiles
		want  string
	}{
		{TLSFiles{CertFile: set.ServerCert}, "TLS needs both plugins.authzbench_ext_authz_grpc.tls_cert_file and plugins.authzbench_ext_authz_grpc.tls_private_key_file"},
		{TLSFiles{CAFile: set.CACert}, "TLS needs both"},
		{TLSFiles{CertFile: set.ServerCert, KeyFile: set.ClientKey}, "tls_cert_file " + set.ServerCert + " with plugins.authzbench_ext_authz_grpc.tls_private_key_file"},
		{TLSFiles{CertFile: set.ServerCert, KeyFile: set.ServerKey, CAFile: set.ServerKey}, "tls_ca_cert_file: CA certificate " + set.ServerKey + ": no PEM certificate"},
		{TLSFiles{CertFile: set.ServerCert, KeyFile: set.ServerKey, CAFile: "/nonexistent/ca.crt"}, "tls_ca_cert_file: CA certificate: open /nonexistent/ca.crt"},
	} {
		_, err := OPAFactory{}.Validate(m, []byte(pluginConfig(t, "127.0.0.1:0", tc.files)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.files, err, tc.want)
		}
	}
}

// A new address in a new configuration moves the gRPC server there (the old address refuses
// from then on); an address that cannot be listened on leaves the old server serving and puts
// the plugin in error; new TLS files on the same address are served at once.
func TestOPAPluginReconfigure(t *testing.T) {
	ctx := context.Background()
	first := freeAddr(t)
	m, p := startOPAPlugin(t, pluginConfig(t, first, TLSFiles{}))
	reconfigure := func(addr string, files TLSFiles) {
		t.Helper()
		cfg, err := OPAFactory{}.Validate(m, []byte(pluginConfig(t, addr, files)))
		if err != nil {
			t.Fatal(err)
		}
		p.Reconfigure(ctx, cfg)
	}
	state := func() plugins.State { return m.PluginStatus()[PluginName].State }

	second := freeAddr(t)
	reconfigure(second, TLSFiles{})
	if got, err := checkOver(t, second, nil); got != codes.OK {
		t.Fatalf("new address %s: %s (%v), want OK", second, got, err)
	}
	if got, _ := checkOver(t, first, nil); got != codes.Unavailable {
		t.Errorf("old address %s: %s, want UNAVAILABLE (nothing listening)", first, got)
	}
	if state() != plugins.StateOK {
		t.Errorf("plugin state %s after a move, want OK", state())
	}

	// An address taken by someone else: the plugin keeps serving where it was, in error.
	taken := startOther(t)
	reconfigure(taken, TLSFiles{})
	if got, err := checkOver(t, second, nil); got != codes.OK {
		t.Errorf("after a failed move, %s: %s (%v), want still OK", second, got, err)
	}
	if st := m.PluginStatus()[PluginName]; st.State != plugins.StateErr || !strings.Contains(st.Message, "still serving on "+second) {
		t.Errorf("plugin status %+v, want an error saying it still serves on %s", st, second)
	}

	// The same address, now over TLS.
	set, err := tlsgen.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reconfigure(second, TLSFiles{CertFile: set.ServerCert, KeyFile: set.ServerKey})
	if got, err := checkOver(t, second, clientTLS(t, set.CACert, "", "")); got != codes.OK {
		t.Errorf("over TLS after reconfiguring: %s (%v), want OK", got, err)
	}
	if got, _ := checkOver(t, second, nil); got != codes.Unavailable {
		t.Errorf("in clear after moving to TLS: %s, want UNAVAILABLE", got)
	}
	if state() != plugins.StateOK {
		t.Errorf("plugin state %s, want OK", state())
	}
}

// startOther occupies a loopback port with a listener of its own for the test's length.
func startOther(t *testing.T) string {
	t.Helper()
	s := NewServer(allowAll{})
	addr := freeAddr(t)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(l)
	t.Cleanup(func() { s.Stop(time.Second) })
	return addr
}
