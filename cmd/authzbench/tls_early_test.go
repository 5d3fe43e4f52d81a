package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/tlsgen"
)

// Every bad TLS setting is found before anything starts, whether flags or a scenario file gave
// it: one validation for both, exit 2, no result file, the message naming the flag (or the
// file, the line of the option and its key). Before, the flags' mistakes were found only when
// their target started: exit 1, a result file with an empty row, and a target before it
// measured in full first.
func TestBadTLSSettingsRefusedBeforeAnyLoad(t *testing.T) {
	dir := t.TempDir()
	own, err := tlsgen.Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	other, err := tlsgen.Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	expiredCert, expiredKey := selfSigned(t, dir, "expired", time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))
	futureCert, futureKey := selfSigned(t, dir, "future", time.Now().Add(24*time.Hour), time.Now().Add(48*time.Hour))
	ownServer := []opt{{"server_cert", own.ServerCert}, {"server_key", own.ServerKey}}

	for _, tc := range []struct {
		name    string
		targets []string // the first of several is one that would run before the one at fault
		options []opt
		blame   string // the option the error is placed at in a file
		want    string // {key} is the option as the user gave it: --flag, or key
	}{
		// The examples.
		{"server certificate without its key", []string{"opa/server"},
			[]opt{{"tls", true}, {"server_cert", own.ServerCert}, {"cacert", own.CACert}},
			"server_cert", "a server certificate of your own needs both {server_cert} and {server_key}"},
		{"key of another certificate", []string{"opa/server"},
			[]opt{{"server_cert", own.ServerCert}, {"server_key", other.ServerKey}, {"cacert", own.CACert}},
			"server_cert", "{server_cert} " + own.ServerCert + " with {server_key} " + other.ServerKey + ": tls: private key does not match public key"},
		{"CA file with no certificate", []string{"opa/server"},
			append(ownServer, opt{"cacert", junk}),
			"cacert", "{cacert} " + junk + ": no PEM certificate in it"},
		{"client certificate without its key", []string{"opa/server"},
			[]opt{{"url", "https://127.0.0.1:1"}, {"cert", own.ClientCert}},
			"cert", "a client certificate needs both {cert} and {key}"},
		{"mtls with a grpc url", []string{"opa/extauthz"},
			[]opt{{"url", "grpc://127.0.0.1:1"}, {"mtls", true}},
			"mtls", "{mtls} configures a server authzbench starts; with {url} it starts none"},
		{"mtls_authz on cedar/server", []string{"cedar/server"},
			[]opt{{"mtls_authz", true}},
			"mtls_authz", "{mtls_authz} is not supported by cedar/server"},
		{"mtls_admit alone", []string{"opa/server"},
			[]opt{{"mtls_admit", []string{"CN=someone"}}},
			"mtls_admit", "{mtls_admit} names the clients {mtls_authz}'s policy admits; give {mtls_authz} with it"},
		{"bad CA of the second target", []string{"opa/inproc", "opa/server"},
			append(ownServer, opt{"cacert", junk}),
			"cacert", "{cacert} " + junk + ": no PEM certificate in it"},
		// Beyond them.
		{"expired server certificate", []string{"opa/server"},
			[]opt{{"server_cert", expiredCert}, {"server_key", expiredKey}, {"cacert", expiredCert}},
			"server_cert", "{server_cert} " + expiredCert + " expired on"},
		{"server certificate not yet valid", []string{"cedar/server"},
			[]opt{{"server_cert", futureCert}, {"server_key", futureKey}, {"cacert", futureCert}},
			"server_cert", "{server_cert} " + futureCert + " is not valid before"},
		{"CA that did not sign the server certificate", []string{"opa/server"},
			append(ownServer, opt{"cacert", other.CACert}),
			"server_cert", "{server_cert} " + own.ServerCert + " will not be trusted by the client, which checks it against {cacert} " + other.CACert + " for 127.0.0.1"},
		{"client certificate of another CA for mtls", []string{"cedar/server"},
			append(ownServer, opt{"mtls", true}, opt{"cacert", own.CACert}, opt{"cert", other.ClientCert}, opt{"key", other.ClientKey}),
			"cert", "{cert} " + other.ClientCert + " will not be accepted by the server"},
		{"insecure with a CA", []string{"opa/server"},
			[]opt{{"url", "https://127.0.0.1:1"}, {"insecure", true}, {"cacert", own.CACert}},
			"insecure", "{insecure} accepts any server certificate, so {cacert} would go unused"},
		{"key without its certificate", []string{"opa/extauthz"},
			[]opt{{"url", "grpcs://127.0.0.1:1"}, {"key", own.ClientKey}},
			"key", "a client certificate needs both {cert} and {key}"},
		{"CA with a clear http url", []string{"opa/server"},
			[]opt{{"url", "http://127.0.0.1:1"}, {"cacert", own.CACert}},
			"cacert", "{cacert} applies to an https {url}, not http://127.0.0.1:1"},
		{"tls with a url", []string{"cedar/server"},
			[]opt{{"url", "https://127.0.0.1:1"}, {"tls", true}},
			"tls", "{tls} configures a server authzbench starts; with {url} it starts none"},
	} {
		t.Run(tc.name+"/flags", func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			args := []string{"run", "--target", strings.Join(tc.targets, ","), "--workload", "nop", "--duration", "1s", "--no-progress", "-o", out}
			for _, o := range tc.options {
				args = append(args, o.flags()...)
			}
			refusedBeforeLoad(t, out, args, strings.NewReplacer(namesAs(tc.options, tc.want, true)...).Replace(tc.want))
		})
		t.Run(tc.name+"/file", func(t *testing.T) {
			d := t.TempDir()
			out, path := filepath.Join(d, "r.json"), filepath.Join(d, "s.yaml")
			yaml, line := scenarioWith(tc.targets, tc.options, tc.blame)
			if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("%s:%d: target %s: options: ", path, line, tc.targets[len(tc.targets)-1]) +
				strings.NewReplacer(namesAs(tc.options, tc.want, false)...).Replace(tc.want)
			refusedBeforeLoad(t, out, []string{"run", "-f", path, "--no-progress", "-o", out}, want)
		})
	}
}

// refusedBeforeLoad runs args and wants them refused as a usage error saying want, before the
// run began (no scenario announced) and with no result file written.
func refusedBeforeLoad(t *testing.T, out string, args []string, want string) {
	t.Helper()
	code, stdout, stderr := run(t, args...)
	if code != exitUsage {
		t.Errorf("exit %d, want %d\nstdout %s\nstderr %s", code, exitUsage, stdout, stderr)
	}
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr %q\nwant it to say %q", stderr, want)
	}
	if strings.Contains(stderr, "repetition(s)") || stdout != "" {
		t.Errorf("the run began:\nstdout %s\nstderr %s", stdout, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("result file %s: %v; want none written", out, err)
	}
}

// opt is a target option as a scenario file and the flags give it.
type opt struct {
	key   string
	value any // true, a path, a list
}

func (o opt) flag() string { return "--" + strings.ReplaceAll(o.key, "_", "-") }

func (o opt) flags() []string {
	switch v := o.value.(type) {
	case bool:
		return []string{o.flag()}
	case []string:
		var out []string
		for _, s := range v {
			out = append(out, o.flag(), s)
		}
		return out
	}
	return []string{o.flag(), fmt.Sprint(o.value)}
}

// namesAs are the replacements of every {key} in want with the flag (asFlags) or the key.
func namesAs(options []opt, want string, asFlags bool) []string {
	var pairs []string
	for _, key := range strings.Split(want, "{")[1:] {
		key, _, _ = strings.Cut(key, "}")
		name := key
		if asFlags {
			name = opt{key: key}.flag()
		}
		pairs = append(pairs, "{"+key+"}", name)
	}
	return pairs
}

// scenarioWith is a scenario running nop through targets, the last with options, one per line;
// and the line the option blame is on.
func scenarioWith(targets []string, options []opt, blame string) (string, int) {
	lines := []string{"workloads: [nop]", "load: {duration: 1s}", "targets:"}
	for _, t := range targets[:len(targets)-1] {
		lines = append(lines, "  - "+t)
	}
	lines = append(lines, "  - target: "+targets[len(targets)-1], "    options:")
	at := 0
	for _, o := range options {
		if o.key == blame {
			at = len(lines) + 1
		}
		var v string
		switch x := o.value.(type) {
		case []string:
			v = fmt.Sprintf("[%q]", strings.Join(x, `", "`))
		case bool:
			v = fmt.Sprint(x)
		default:
			v = fmt.Sprintf("%q", x)
		}
		lines = append(lines, fmt.Sprintf("      %s: %s", o.key, v))
	}
	return strings.Join(lines, "\n") + "\n", at
}

// selfSigned writes a self-signed certificate for the loopback address valid from notBefore to
// notAfter, and its key.
func selfSigned(t *testing.T, dir, name string, notBefore, notAfter time.Time) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: notBefore, NotAfter: notAfter, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
