package cedarserver

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/tlsgen"
)

// The gRPC port's TLS flags are checked before anything listens, each error naming its flag;
// they need --grpc-addr, which they secure.
func TestMainRefusesBadGRPCTLSFlags(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "p.cedar")
	os.WriteFile(pol, []byte(`permit (principal, action, resource);`), 0o644)
	set, err := tlsgen.Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"--policies", pol, "--addr", "127.0.0.1:0"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--grpc-addr", "127.0.0.1:0", "--grpc-tls-cert-file", set.ServerCert}, "TLS needs both --grpc-tls-cert-file and --grpc-tls-private-key-file"},
		{[]string{"--grpc-addr", "127.0.0.1:0", "--grpc-tls-cert-file", set.ServerCert, "--grpc-tls-private-key-file", set.ClientKey}, "--grpc-tls-cert-file " + set.ServerCert + " with --grpc-tls-private-key-file"},
		{[]string{"--grpc-addr", "127.0.0.1:0", "--grpc-tls-cert-file", set.ServerCert, "--grpc-tls-private-key-file", set.ServerKey, "--grpc-tls-ca-cert-file", set.ServerKey}, "--grpc-tls-ca-cert-file: CA certificate " + set.ServerKey + ": no PEM certificate"},
		{[]string{"--grpc-tls-cert-file", set.ServerCert, "--grpc-tls-private-key-file", set.ServerKey}, "secure --grpc-addr: give it too"},
	} {
		var stderr bytes.Buffer
		if code := Main(append(base, tc.args...), &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 saying %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
