package extauthz

import (
	"crypto/tls"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/authzbench/authzbench/internal/tlsgen"
)

// TLSFiles are the PEM files of an ext_authz server that serves over TLS, named as OPA's own
// flags name them (--tls-cert-file, --tls-private-key-file, --tls-ca-cert-file). All empty: in
// clear (h2c), as Envoy's ext_authz cluster is most often configured on a loopback sidecar.
type TLSFiles struct {
	CertFile string `json:"tls_cert_file"`
	KeyFile  string `json:"tls_private_key_file"`
	// CAFile, when set, makes the server require a client certificate signed by this CA and
	// verify it (mutual TLS), as Envoy presents one in its cluster's transport socket.
	CAFile string `json:"tls_ca_cert_file"`
}

// Given says whether the server is to serve over TLS.
func (f TLSFiles) Given() bool { return f.CertFile != "" || f.KeyFile != "" || f.CAFile != "" }

// Config reads the files into the server's TLS configuration: nil when none is given (serve in
// clear). Errors name the setting at fault in the names of the caller, which may be flags
// (--grpc-tls-cert-file) or configuration keys (tls_cert_file): name maps a json key to it.
func (f TLSFiles) Config(name func(key string) string) (*tls.Config, error) {
	if !f.Given() {
		return nil, nil
	}
	if f.CertFile == "" || f.KeyFile == "" {
		return nil, fmt.Errorf("TLS needs both %s and %s", name("tls_cert_file"), name("tls_private_key_file"))
	}
	pair, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("%s %s with %s %s: %w", name("tls_cert_file"), f.CertFile, name("tls_private_key_file"), f.KeyFile, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if f.CAFile != "" {
		pool, err := tlsgen.LoadPool(f.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name("tls_ca_cert_file"), err)
		}
		// Require and verify: a client without a certificate, or with one from another CA, is
		// refused in the handshake, before any Check reaches the engine.
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// Mode names what the files make the server do: plain, tls or mtls.
func (f TLSFiles) Mode() string {
	switch {
	case f.CAFile != "":
		return "mtls"
	case f.Given():
		return "tls"
	}
	return "plain"
}

// ServerOptions are the gRPC server options serving with cfg: TLS credentials, or none (h2c)
// when cfg is nil.
func ServerOptions(cfg *tls.Config) []grpc.ServerOption {
	if cfg == nil {
		return nil
	}
	return []grpc.ServerOption{grpc.Creds(credentials.NewTLS(cfg))}
}
