// Package tlsgen makes the certificates a TLS benchmark needs when the user brings none: a
// throwaway CA, a server certificate for the loopback addresses and a client certificate, written
// as PEM files into a private directory that Remove deletes.
//
// It is for measuring, not for securing anything: the keys live for one run, on this machine
// only. It is not a certificate manager (no renewal, no revocation, no other hosts).
package tlsgen

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// ClientCN is the common name of the client certificate; an authorization policy admitting the
// client names it.
const ClientCN = "authzbench-client"

// Set is the files of one generated set, and the directory that holds them.
type Set struct {
	Dir                   string
	CACert                string // the CA that signed both certificates: the trust root of each side
	ServerCert, ServerKey string // for 127.0.0.1, ::1 and localhost
	ClientCert, ClientKey string // CN ClientCN
}

// validity is long enough for any run and short enough that a leaked file is soon worthless.
const validity = 24 * time.Hour

// Generate writes a new set into a fresh private directory under parent (the system's temporary
// directory when empty): the directory 0700, the keys 0600.
func Generate(parent string) (*Set, error) {
	dir, err := os.MkdirTemp(parent, "authzbench-tls-")
	if err != nil {
		return nil, fmt.Errorf("make directory for TLS certificates: %w", err)
	}
	// MkdirTemp already makes it 0700; said again so a changed umask or platform cannot widen it.
	if err := os.Chmod(dir, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("make %s private: %w", dir, err)
	}
	s := &Set{Dir: dir,
		CACert:     filepath.Join(dir, "ca.crt"),
		ServerCert: filepath.Join(dir, "server.crt"), ServerKey: filepath.Join(dir, "server.key"),
		ClientCert: filepath.Join(dir, "client.crt"), ClientKey: filepath.Join(dir, "client.key")}
	if err := s.generate(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// Remove deletes the directory and every key in it.
func (s *Set) Remove() error {
	if s == nil || s.Dir == "" {
		return nil
	}
	return os.RemoveAll(s.Dir)
}

func (s *Set) generate() error {
	now := time.Now().Add(-time.Minute) // a clock a little behind on the other side still accepts it
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "authzbench test CA"},
		NotBefore: now, NotAfter: now.Add(validity),
		IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("sign CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	if err := writePEM(s.CACert, "CERTIFICATE", caDER, 0o644); err != nil {
		return err
	}
	server := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now, NotAfter: now.Add(validity),
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if err := s.issue(server, ca, caKey, s.ServerCert, s.ServerKey); err != nil {
		return err
	}
	client := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: ClientCN},
		NotBefore: now, NotAfter: now.Add(validity),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	return s.issue(client, ca, caKey, s.ClientCert, s.ClientKey)
}

// issue signs tmpl with the CA and writes the certificate and its new key.
func (s *Set) issue(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey, certPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate key for %s: %w", filepath.Base(certPath), err)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("sign %s: %w", filepath.Base(certPath), err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(keyPath, "PRIVATE KEY", keyDER, 0o600); err != nil {
		return err
	}
	return writePEM(certPath, "CERTIFICATE", der, 0o644)
}

func writePEM(path, kind string, der []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := pem.Encode(f, &pem.Block{Type: kind, Bytes: der}); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic("tlsgen: no randomness: " + err.Error()) // crypto/rand does not fail on supported systems
	}
	return n
}

// ClientConfig is what a client of a TLS server needs, read from files: caFile the CA to trust
// (empty: the system's roots), certFile and keyFile a client certificate (empty: none), insecure
// to accept any server certificate. Errors name the file at fault.
func ClientConfig(caFile, certFile, keyFile string, insecure bool) (*tls.Config, error) {
	cfg := &tls.Config{InsecureSkipVerify: insecure} //nolint:gosec // the user's explicit choice
	if caFile != "" {
		pool, err := LoadPool(caFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, fmt.Errorf("a client certificate needs both its certificate and its key file (got %q and %q)", certFile, keyFile)
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("client certificate %s with key %s: %w", certFile, keyFile, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// LoadPool reads the PEM certificates of file into a pool.
func LoadPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("CA certificate %s: no PEM certificate in it", file)
	}
	return pool, nil
}
