package kinds

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"

	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/tlsgen"
)

// TLSClient is the client side of TLS against a server authzbench does not start (the http
// target, or a served kind's url over https): which CA to trust, which certificate to present,
// or no check of the server at all.
type TLSClient struct {
	// CACert is a PEM file of the CA that signed the server's certificate (default: the
	// system's roots).
	CACert string `yaml:"cacert"`
	// Cert and Key are a client certificate and its key, for a server that asks for one (mTLS).
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
	// Insecure accepts any server certificate, recorded in the result as such.
	Insecure bool `yaml:"insecure"`
}

func init() {
	for _, o := range []Option{
		{Key: "cacert", File: true, Flag: "cacert", Help: "https or grpcs --url (any of these makes a grpc:// url TLS): the CA (PEM) that signed the server's certificate (default: the system's roots)"},
		{Key: "cert", File: true, Flag: "cert", Help: "https or grpcs --url: a client certificate (PEM) to present, with --key (mTLS)"},
		{Key: "key", File: true, Flag: "key", Help: "the private key (PEM) of --cert"},
		{Key: "insecure", Flag: "insecure", Help: "https or grpcs --url: accept any server certificate (recorded in the result)"},
	} {
		o.Selective = true
		DeclareOption(o)
	}
}

func (c *TLSClient) given() bool { return c.CACert != "" || c.Cert != "" || c.Key != "" || c.Insecure }

// config reads the files into a client configuration; errors name the option at fault.
func (c *TLSClient) config() (*tls.Config, error) {
	cfg := &tls.Config{InsecureSkipVerify: c.Insecure} //nolint:gosec // the user asked for it, and the result says so
	if c.CACert != "" {
		pool, err := tlsgen.LoadPool(c.CACert)
		if err != nil {
			return nil, optionError("cacert", func(n func(string) string) string { return n("cacert") + ": " + err.Error() })
		}
		cfg.RootCAs = pool
	}
	if c.Cert != "" {
		pair, err := tls.LoadX509KeyPair(c.Cert, c.Key)
		if err != nil {
			return nil, optionError("cert", func(n func(string) string) string {
				return fmt.Sprintf("%s %s with %s %s: %v", n("cert"), c.Cert, n("key"), c.Key, err)
			})
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// TLSMode is how a server authzbench starts serves: in clear, over TLS, over TLS requiring a
// client certificate, or that and an authorization policy admitting the client.
type TLSMode uint8

const (
	Plain TLSMode = iota
	ServerTLS
	MutualTLS
	MutualTLSAuthz
)

func (m TLSMode) String() string {
	switch m {
	case ServerTLS:
		return "tls"
	case MutualTLS:
		return "mtls"
	case MutualTLSAuthz:
		return "mtls_authz"
	}
	return "plain"
}

// TLSServer is the TLS settings of a server authzbench starts. The three modes each imply the
// ones before; without files of the user's, a throwaway CA and certificates are generated for
// the run (tlsgen) and removed at its end.
type TLSServer struct {
	TLS       bool `yaml:"tls"`        // serve over TLS
	MTLS      bool `yaml:"mtls"`       // and require a client certificate signed by the CA
	MTLSAuthz bool `yaml:"mtls_authz"` // and admit the client by an authorization policy
	// MTLSAdmit are the client identities the authorization policy admits (OPA: the
	// certificate's subject, "CN=authzbench-client"); default: the client certificate's.
	MTLSAdmit []string `yaml:"mtls_admit"`
	// ServerCert and ServerKey are the user's own server certificate and key; with them,
	// cacert is the CA that signed them (and the client certificate), and cert and key the
	// client's certificate for mtls.
	ServerCert string `yaml:"server_cert"`
	ServerKey  string `yaml:"server_key"`
}

func init() {
	for _, o := range []Option{
		{Key: "tls", Flag: "tls", Help: "{kinds,}: serve over TLS, with a CA and certificates generated for the run (ECDSA P-256) unless --server-cert gives yours"},
		{Key: "mtls", Flag: "mtls", HelpKinds: "tls", Help: "{kinds,}: serve over TLS and require a client certificate (OPA: --authentication=tls)"},
		{Key: "mtls_authz", Flag: "mtls-authz", Help: "{kinds} only (the other servers have no authorization policy in front of their decisions): --mtls, and OPA's authorization policy (--authorization=basic, data.system.authz) admitting the client certificate's subject"},
		{Key: "mtls_admit", Flag: "mtls-admit", Help: "with --mtls-authz: a client identity the policy admits instead of the client certificate's subject (CN=name), repeatable"},
		{Key: "server_cert", File: true, Flag: "server-cert", HelpKinds: "tls", Help: "{kinds,}: your server certificate (PEM) for --tls, instead of generated ones; with --server-key and --cacert"},
		{Key: "server_key", File: true, Flag: "server-key", Help: "the private key (PEM) of --server-cert"},
	} {
		o.Selective = true
		DeclareOption(o)
	}
}

// Mode is the strongest mode asked for.
func (s *TLSServer) Mode() TLSMode {
	switch {
	case s.MTLSAuthz:
		return MutualTLSAuthz
	case s.MTLS:
		return MutualTLS
	case s.TLS || s.ServerCert != "":
		return ServerTLS
	}
	return Plain
}

// ModeKey is the option that asked for Mode, for a message refusing it: the user's --mtls named
// as --mtls, not as --tls; "" in clear.
func (s *TLSServer) ModeKey() string {
	if m := s.Mode(); m != ServerTLS || s.TLS {
		if m == Plain {
			return ""
		}
		return m.String()
	}
	return "server_cert"
}

// ModeKey is the option that made the client speak TLS (TLSClient's files or insecure), for a
// message refusing it; "" when none did.
func (c TLSClient) ModeKey() string {
	switch {
	case c.CACert != "":
		return "cacert"
	case c.Cert != "":
		return "cert"
	case c.Key != "":
		return "key"
	case c.Insecure:
		return "insecure"
	}
	return ""
}

// serverFiles are the certificate files of a TLS server authzbench starts, and the client's.
type serverFiles struct {
	CACert, ServerCert, ServerKey, ClientCert, ClientKey string
	generated                                            *tlsgen.Set // removed at Stop; nil for the user's files
}

// tlsFiles returns the files for mode: the user's own, or a set generated under tempDir.
func (c *ServerConfig) tlsFiles(tempDir string) (*serverFiles, error) {
	if c.ServerCert != "" {
		return &serverFiles{CACert: c.CACert, ServerCert: c.ServerCert, ServerKey: c.ServerKey,
			ClientCert: c.Cert, ClientKey: c.Key}, nil
	}
	set, err := tlsgen.Generate(tempDir)
	if err != nil {
		return nil, err
	}
	return &serverFiles{CACert: set.CACert, ServerCert: set.ServerCert, ServerKey: set.ServerKey,
		ClientCert: set.ClientCert, ClientKey: set.ClientKey, generated: set}, nil
}

// clientConfig is what the load's connections and the readiness probe present to the server:
// its CA trusted, and in the mutual modes the client certificate.
func (f *serverFiles) clientConfig(mode TLSMode) (*tls.Config, error) {
	client := TLSClient{CACert: f.CACert}
	if mode >= MutualTLS {
		client.Cert, client.Key = f.ClientCert, f.ClientKey
	}
	return client.config()
}

// identity is the client certificate's subject, as a server's authentication of its clients
// names the client (OPA's input.identity): the subject's RDN sequence, "CN=authzbench-client".
func (f *serverFiles) identity() (string, error) {
	b, err := os.ReadFile(f.ClientCert)
	if err != nil {
		return "", fmt.Errorf("client certificate: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return "", fmt.Errorf("client certificate %s: no PEM certificate in it", f.ClientCert)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("client certificate %s: %w", f.ClientCert, err)
	}
	return cert.Subject.ToRDNSequence().String(), nil
}

// remove deletes generated files; the user's are left alone.
func (f *serverFiles) remove() error {
	if f == nil {
		return nil
	}
	return f.generated.Remove()
}

// tlsInfo records the TLS a served run measured, whatever the protocol: the mode of a server
// authzbench started with files (generated, or the user's, named), or how the client met a
// server someone else runs (clientTLS set, no files); nil in clear. The identities a server's
// own authorization admits (mtls_authz) are its kind's to record.
func tlsInfo(cfg *ServerConfig, files *serverFiles, clientTLS *tls.Config) *result.TLS {
	if files != nil {
		t := &result.TLS{Mode: cfg.Mode().String(), Generated: files.generated != nil}
		if !t.Generated {
			t.CACert, t.ServerCert, t.ClientCert = files.CACert, files.ServerCert, files.ClientCert
		}
		return t
	}
	if clientTLS != nil {
		return clientTLSInfo(&cfg.TLSClient)
	}
	return nil
}
