package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/authzbench/authzbench/internal/tlsgen"
)

// Replicas over TLS share the target's one certificate authority: every replica serves with a
// certificate the client trusts, so each serves its share and no handshake fails. Before, each
// replica generated its own CA and the client trusted only the last one started.
func TestTLSReplicasShareOneAuthority(t *testing.T) {
	dir := t.TempDir()
	// The user's own certificates: the same files for every replica, as generated ones are.
	own, err := tlsgen.Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, mode string
		args       []string
	}{
		{"tls", "tls", []string{"--tls"}},
		{"mtls", "mtls", []string{"--mtls"}},
		{"tls with the user's certificate", "tls", []string{"--tls", "--server-cert", own.ServerCert, "--server-key", own.ServerKey, "--cacert", own.CACert}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.mode+"-"+filepath.Base(t.Name())+".json")
			args := append([]string{"run", "--target", "cedar/server", "--workload", "nop", "--replicas", "3",
				"--workers", "6", "--duration", "300ms", "--warmup", "0s", "--no-progress"}, tc.args...)
			doc, _ := runOK(t, out, args...)
			if len(doc.Runs) != 1 {
				t.Fatalf("%d runs, want 1", len(doc.Runs))
			}
			r := doc.Runs[0]
			if r.Summary.Errors != 0 || r.Summary.OK == 0 {
				t.Errorf("%d ok, %d errors (%v); want every request served", r.Summary.OK, r.Summary.Errors, r.Summary.ErrorClasses)
			}
			if r.SUT.TLS == nil || r.SUT.TLS.Mode != tc.mode {
				t.Errorf("tls %+v, want mode %s", r.SUT.TLS, tc.mode)
			}
			reps := r.SUT.Replicas
			if len(reps) != 3 {
				t.Fatalf("replicas %+v, want 3", reps)
			}
			// With no error, what each replica was sent it served: two connections each,
			// round robin, so each has a share of the requests, and none took them all.
			for _, rep := range reps {
				if rep.Connections != 2 || rep.Requests == 0 {
					t.Errorf("replica %d: %d connections, %d requests; want 2 connections and a share of the requests (all: %+v)", rep.Index, rep.Connections, rep.Requests, reps)
				}
			}
			if _, err := os.Stat(out); err != nil {
				t.Error(err)
			}
		})
	}
}
