package kinds

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// TLSConfig is every TLS setting of a target seen together, with what decides which of them
// apply: the url of a server someone else runs ("" when authzbench starts one), the protocol it
// is reached over, and whether the kind can put an authorization policy in front of its server.
type TLSConfig struct {
	// Server is the TLS of a server authzbench starts; nil for a kind that starts none (http).
	Server *TLSServer
	// Client is what the client trusts and presents.
	Client *TLSClient
	URL    string
	// GRPC says the url is a gRPC address, where any client setting makes a grpc:// url speak
	// TLS; over HTTP they need an https url.
	GRPC bool
	// MTLSAuthzRefused says why the kind cannot serve mtls_authz; nil when it can.
	MTLSAuthzRefused func(name func(key string) string) string
}

// loopbackHost is the address a server authzbench starts listens on, and so the name the client
// checks the server's certificate against (sut.FreeAddr, listenAddr).
const loopbackHost = "127.0.0.1"

// Validate is the one check of a target's TLS settings, whoever gave them (a scenario's options
// or the command line's flags), made before anything starts: settings that cannot go together,
// and every PEM file read as the server and the client will read it. Each certificate must come
// with its key and match it, and be valid now; a CA file must hold a certificate; and with the
// user's own files for a server authzbench starts, the CA must sign the server's certificate for
// the loopback address the client dials (and, for mtls, the client's certificate), since a
// handshake that cannot succeed would otherwise fail every request of the run. Each problem is
// an OptionError naming the options by key, so that a flag that gave one is named as that flag.
func (c TLSConfig) Validate() error {
	var errs []error
	bad := func(key string, say func(n func(string) string) string) {
		errs = append(errs, optionError(key, say))
	}
	cl := c.Client
	if (cl.Cert == "") != (cl.Key == "") {
		bad(givenOf(map[string]string{"cert": cl.Cert, "key": cl.Key}, "cert", "key")[0], func(n func(string) string) string {
			return fmt.Sprintf("a client certificate needs both %s and %s", n("cert"), n("key"))
		})
	}
	if cl.Insecure && cl.CACert != "" {
		bad("insecure", func(n func(string) string) string {
			return fmt.Sprintf("%s accepts any server certificate, so %s would go unused: give one or the other", n("insecure"), n("cacert"))
		})
	}
	var clientKeys []string // the client's settings given, by key
	for _, k := range []struct {
		key string
		set bool
	}{{"cacert", cl.CACert != ""}, {"cert", cl.Cert != ""}, {"key", cl.Key != ""}, {"insecure", cl.Insecure}} {
		if k.set {
			clientKeys = append(clientKeys, k.key)
		}
	}
	s := c.Server
	if s == nil {
		s = &TLSServer{}
	}
	serverKeys := s.givenKeys()
	if c.URL != "" {
		if len(serverKeys) > 0 {
			bad(serverKeys[0], func(n func(string) string) string {
				hint := fmt.Sprintf("the url's https says TLS; %s, %s and %s set the client's side", n("cacert"), n("cert"), n("key"))
				if c.GRPC {
					hint = fmt.Sprintf("grpcs://, or %s, %s, %s or %s, make the client speak TLS", n("cacert"), n("cert"), n("key"), n("insecure"))
				}
				return fmt.Sprintf("%s %s a server authzbench starts; with %s it starts none (%s)", names(n, serverKeys), verb(serverKeys, "configures", "configure"), n("url"), hint)
			})
		}
		if len(clientKeys) > 0 && !c.GRPC && !strings.HasPrefix(c.URL, "https://") {
			bad(clientKeys[0], func(n func(string) string) string {
				return fmt.Sprintf("%s %s to an https %s, not %s", names(n, clientKeys), verb(clientKeys, "applies", "apply"), n("url"), c.URL)
			})
		}
	} else if c.Server != nil {
		errs = append(errs, c.checkStarted(clientKeys)...)
	}
	if (s.MTLSAuthz || len(s.MTLSAdmit) > 0) && c.MTLSAuthzRefused != nil {
		bad(givenOf(map[string]string{"mtls_authz": fmt.Sprint(s.MTLSAuthz), "mtls_admit": strings.Join(s.MTLSAdmit, ",")}, "mtls_authz", "mtls_admit")[0], c.MTLSAuthzRefused)
	}
	return errors.Join(append(errs, c.checkFiles()...)...)
}

// checkStarted finds settings of a server authzbench starts that cannot go together.
func (c TLSConfig) checkStarted(clientKeys []string) []error {
	var errs []error
	bad := func(key string, say func(n func(string) string) string) {
		errs = append(errs, optionError(key, say))
	}
	s, cl := c.Server, c.Client
	if (s.ServerCert == "") != (s.ServerKey == "") {
		bad(givenOf(map[string]string{"server_cert": s.ServerCert, "server_key": s.ServerKey}, "server_cert", "server_key")[0], func(n func(string) string) string {
			return fmt.Sprintf("a server certificate of your own needs both %s and %s", n("server_cert"), n("server_key"))
		})
	}
	if cl.Insecure {
		bad("insecure", func(n func(string) string) string {
			return fmt.Sprintf("%s applies to a server given by %s; the certificates of a server authzbench starts are checked", n("insecure"), n("url"))
		})
	}
	if own := withoutKey(clientKeys, "insecure"); s.ServerCert == "" && s.ServerKey == "" && len(own) > 0 {
		bad(own[0], func(n func(string) string) string {
			return fmt.Sprintf("%s %s with %s and %s (your own certificates); without them authzbench generates all of them", names(n, own), verb(own, "goes", "go"), n("server_cert"), n("server_key"))
		})
	}
	if s.ServerCert != "" && cl.CACert == "" {
		bad("server_cert", func(n func(string) string) string {
			return fmt.Sprintf("%s needs %s, the CA that signed it, for the client to trust it", n("server_cert"), n("cacert"))
		})
	}
	if s.ServerCert != "" && s.Mode() >= MutualTLS && cl.Cert == "" && cl.Key == "" {
		mode := "mtls"
		if s.MTLSAuthz {
			mode = "mtls_authz"
		}
		bad(mode, func(n func(string) string) string {
			return fmt.Sprintf("%s with your own %s needs %s and %s, the client's certificate, signed by %s", n(mode), n("server_cert"), n("cert"), n("key"), n("cacert"))
		})
	}
	if len(s.MTLSAdmit) > 0 && !s.MTLSAuthz {
		bad("mtls_admit", func(n func(string) string) string {
			return fmt.Sprintf("%s names the clients %s's policy admits; give %s with it", n("mtls_admit"), n("mtls_authz"), n("mtls_authz"))
		})
	}
	return errs
}

// checkFiles reads every PEM file given as the server and the client will, and checks that the
// user's own certificates for a server authzbench starts can complete a handshake.
func (c TLSConfig) checkFiles() []error {
	var errs []error
	bad := func(key string, say func(n func(string) string) string) {
		errs = append(errs, optionError(key, say))
	}
	cl := c.Client
	now := time.Now()
	var roots *x509.CertPool
	if cl.CACert != "" {
		pool, err := readCAFile(cl.CACert)
		if err != nil {
			bad("cacert", func(n func(string) string) string { return fmt.Sprintf("%s %s: %v", n("cacert"), cl.CACert, err) })
		}
		roots = pool
	}
	client := readPair(cl.Cert, cl.Key, "cert", "key", now, bad)
	s := c.Server
	if s == nil || c.URL != "" {
		return errs
	}
	server := readPair(s.ServerCert, s.ServerKey, "server_cert", "server_key", now, bad)
	if roots == nil {
		return errs
	}
	if server != nil {
		_, err := server.Verify(x509.VerifyOptions{Roots: roots, DNSName: loopbackHost, CurrentTime: now,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		if err != nil {
			bad("server_cert", func(n func(string) string) string {
				return fmt.Sprintf("%s %s will not be trusted by the client, which checks it against %s %s for %s, the address authzbench starts the server on: %v",
					n("server_cert"), s.ServerCert, n("cacert"), cl.CACert, loopbackHost, err)
			})
		}
	}
	if client != nil && s.Mode() >= MutualTLS {
		_, err := client.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		if err != nil {
			bad("cert", func(n func(string) string) string {
				return fmt.Sprintf("%s %s will not be accepted by the server, which checks client certificates against %s %s: %v", n("cert"), cl.Cert, n("cacert"), cl.CACert, err)
			})
		}
	}
	return errs
}

// readCAFile reads a CA file: at least one PEM certificate, as the client's pool takes them.
func readCAFile(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, errors.New("no PEM certificate in it")
	}
	return pool, nil
}

// readPair reads a certificate and its key as a TLS server or client loads them, and returns the
// certificate when they match and it is valid now; nil, with the problem reported, otherwise
// (and nil, unreported, when either file is not given: the pairing is checked apart).
func readPair(certFile, keyFile, certKey, keyKey string, now time.Time, bad func(string, func(func(string) string) string)) *x509.Certificate {
	if certFile == "" || keyFile == "" {
		return nil
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		bad(certKey, func(n func(string) string) string {
			return fmt.Sprintf("%s %s with %s %s: %v", n(certKey), certFile, n(keyKey), keyFile, err)
		})
		return nil
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			bad(certKey, func(n func(string) string) string { return fmt.Sprintf("%s %s: %v", n(certKey), certFile, err) })
			return nil
		}
	}
	switch {
	case now.After(leaf.NotAfter):
		bad(certKey, func(n func(string) string) string {
			return fmt.Sprintf("%s %s expired on %s", n(certKey), certFile, leaf.NotAfter.UTC().Format(time.RFC3339))
		})
		return nil
	case now.Before(leaf.NotBefore):
		bad(certKey, func(n func(string) string) string {
			return fmt.Sprintf("%s %s is not valid before %s", n(certKey), certFile, leaf.NotBefore.UTC().Format(time.RFC3339))
		})
		return nil
	}
	return leaf
}

// givenKeys are the server settings given, by key, in the order the options list them.
func (s *TLSServer) givenKeys() []string {
	var keys []string
	for _, k := range []struct {
		key string
		set bool
	}{{"tls", s.TLS}, {"mtls", s.MTLS}, {"mtls_authz", s.MTLSAuthz}, {"mtls_admit", len(s.MTLSAdmit) > 0},
		{"server_cert", s.ServerCert != ""}, {"server_key", s.ServerKey != ""}} {
		if k.set {
			keys = append(keys, k.key)
		}
	}
	return keys
}

// givenOf are the keys among keys whose value is set (not "", not "false"), or keys[0] alone
// when none is, so that an error is blamed on an option the user wrote.
func givenOf(values map[string]string, keys ...string) []string {
	var out []string
	for _, k := range keys {
		if v := values[k]; v != "" && v != "false" {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return keys[:1]
	}
	return out
}

func withoutKey(keys []string, drop string) []string {
	var out []string
	for _, k := range keys {
		if k != drop {
			out = append(out, k)
		}
	}
	return out
}

// names lists keys as n names them: "a", "a and b", "a, b and c".
func names(n func(string) string, keys []string) string {
	named := make([]string, len(keys))
	for i, k := range keys {
		named[i] = n(k)
	}
	if len(named) < 2 {
		return strings.Join(named, "")
	}
	return strings.Join(named[:len(named)-1], ", ") + " and " + named[len(named)-1]
}

func verb(keys []string, one, many string) string {
	if len(keys) == 1 {
		return one
	}
	return many
}
