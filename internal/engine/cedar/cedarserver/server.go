// Package cedarserver serves a Cedar policy set over HTTP. Cedar ships no server, so to measure
// Cedar deployed behind a network hop, as OPA's REST server is, authzbench serves it itself: a
// separate process (`authzbench cedar-server`), started and stopped by the cedar/server target.
//
// The API is deliberately small (docs/cedar-server.md):
//
//	POST /v1/is_authorized  {"principal": {"type": "User", "id": "alice"}, "action": {...},
//	                         "resource": {...}, "context": {...}, "entities": [...]}
//	→ 200 {"decision": "allow"|"deny", "reasons": ["policy id", ...], "errors": [...]}
//	GET  /health            → 200 {}
//	POST /v1/update         {"entities": [...], "delete": [...]} → 204 once swapped in
//
// It is built like OPA's REST server (net/http, one JSON document in and one out per request) so
// that comparing the two compares the engines and not the plumbing.
package cedarserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/decisionserver"
	"github.com/authzbench/authzbench/internal/engine/cedar/cedarengine"
	"github.com/authzbench/authzbench/internal/extauthz"
	"github.com/authzbench/authzbench/internal/tlsgen"
)

// Arg is the first argument that turns an authzbench (or test) process into the Cedar server.
const Arg = "cedar-server"

// Path is where decisions are asked for.
const Path = "/v1/is_authorized"

// UpdatePath is where the entity store is changed (cedarengine.Update): a new engine is built
// with the change and swapped in before the answer, so a decision asked after it sees it.
const UpdatePath = "/v1/update"

// maxBody bounds a request body; a request with its own entities is rarely more than a few KB.
const maxBody = 8 << 20

// Main parses the server's flags, loads the policy set and serves until SIGINT or SIGTERM.
func Main(args []string, stderr io.Writer) int {
	// pflag, as cobra uses for every other command: the same --flag spelling in help and errors.
	fs := pflag.NewFlagSet("authzbench "+Arg, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var paths cedarengine.Paths
	addr := fs.String("addr", "127.0.0.1:8181", "listen on this address")
	grpcAddr := fs.String("grpc-addr", "", "also serve Envoy's ext_authz gRPC API (envoy.service.auth.v3.Authorization/Check) and gRPC health on this address")
	fs.StringArrayVar(&paths.Policies, "policies", nil, "Cedar policy `file` (repeat for several)")
	fs.StringVar(&paths.Entities, "entities", "", "JSON `file` with the entity store (an array of entities)")
	fs.StringVar(&paths.Schema, "schema", "", "Cedar schema `file` (.cedarschema, or .json); policies, entities and every request are validated against it")
	fs.StringVar(&paths.TemplateLinks, "template-links", "", "JSON `file` linking the policies' templates, as the Cedar CLI's --template-linked: [{\"template_id\": ..., \"link_id\": ..., \"args\": {\"?principal\": \"User::\\\"alice\\\"\"}}]")
	var secure tlsFlags
	fs.StringVar(&secure.certFile, "tls-cert-file", "", "serve over TLS with this PEM certificate `file` (and --tls-private-key-file)")
	fs.StringVar(&secure.keyFile, "tls-private-key-file", "", "the PEM private key `file` of --tls-cert-file")
	fs.StringVar(&secure.caFile, "tls-ca-cert-file", "", "require a client certificate signed by the CA in this PEM `file` (mTLS), as OPA's --authentication=tls with --tls-ca-cert-file")
	var grpcTLS extauthz.TLSFiles
	fs.StringVar(&grpcTLS.CertFile, "grpc-tls-cert-file", "", "serve --grpc-addr over TLS with this PEM certificate `file` (and --grpc-tls-private-key-file); the HTTP API's TLS is --tls-cert-file's")
	fs.StringVar(&grpcTLS.KeyFile, "grpc-tls-private-key-file", "", "the PEM private key `file` of --grpc-tls-cert-file")
	fs.StringVar(&grpcTLS.CAFile, "grpc-tls-ca-cert-file", "", "on --grpc-addr, require a client certificate signed by the CA in this PEM `file` (mTLS)")
	h2c := fs.Bool("h2c", false, "serve HTTP/2 in clear (h2c) beside HTTP/1.1, as OPA's --h2c; over TLS, HTTP/2 is offered by ALPN anyway")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: authzbench %s --policies FILE [--policies FILE ...] [--entities FILE] [--schema FILE] [--template-links FILE] [--addr HOST:PORT] [--grpc-addr HOST:PORT]
       [--tls-cert-file FILE --tls-private-key-file FILE [--tls-ca-cert-file FILE]] [--h2c]
       [--grpc-tls-cert-file FILE --grpc-tls-private-key-file FILE [--grpc-tls-ca-cert-file FILE]]

Serves a Cedar policy set (cedar-go) over HTTP:
  POST %s  {"principal": {"type": "User", "id": "alice"}, "action": {"type": "Action", "id": "view"},
                           "resource": {"type": "Photo", "id": "p1"}, "context": {}, "entities": []}
    -> {"decision": "allow"|"deny", "reasons": [policy ids], "errors": [evaluation errors]}
  POST %s  {"entities": [entities put whole], "delete": [uids]} -> 204 once a new engine
    with the change is swapped in (400 naming what the schema or the store refuses)
  GET  /health -> 200
With --grpc-addr, Envoy's ext_authz Check over gRPC too: the Basic Authorization user is the
principal (User), the method the action, the host the resource (Service), path and host the
context; gRPC metadata x-authzbench-timers asks for the timers in the trailers. The gRPC port
has TLS settings of its own (--grpc-tls-*), apart from the HTTP API's.
Add ?metrics=true to a decision request for the server's own timers (evaluation, handler) in ns.

Flags:
`, Arg, Path, UpdatePath)
		fs.PrintDefaults()
	}
	if code, ok := decisionserver.ParseFlags(fs, args, stderr, Arg); !ok {
		return code
	}
	tlsConfig, err := secure.config()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", Arg, err)
		return 2
	}
	grpcTLSConfig, err := grpcTLS.Config(func(key string) string { return "--grpc-" + strings.ReplaceAll(key, "_", "-") })
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", Arg, err)
		return 2
	}
	if grpcTLS.Given() && *grpcAddr == "" {
		fmt.Fprintf(stderr, "%s: --grpc-tls-cert-file, --grpc-tls-private-key-file and --grpc-tls-ca-cert-file secure --grpc-addr: give it too\n", Arg)
		return 2
	}
	engine, err := cedarengine.Load(paths)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", Arg, err)
		return 2
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", Arg, err)
		return 1
	}
	var grpcListener net.Listener
	if *grpcAddr != "" {
		if grpcListener, err = net.Listen("tcp", *grpcAddr); err != nil {
			l.Close()
			fmt.Fprintf(stderr, "%s: --grpc-addr: %v\n", Arg, err)
			return 1
		}
	}
	// Printed once listening, so that a failure to start stays the first line a starter reads.
	for _, w := range engine.Warnings() {
		fmt.Fprintf(stderr, "%s: warning: %s\n", Arg, w)
	}
	live := cedarengine.NewLive(engine)
	srv := &http.Server{Handler: LiveHandler(live), ReadHeaderTimeout: 10 * time.Second, TLSConfig: tlsConfig}
	if *h2c {
		srv.Protocols = new(http.Protocols)
		srv.Protocols.SetHTTP1(true)
		srv.Protocols.SetHTTP2(true)
		srv.Protocols.SetUnencryptedHTTP2(true)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if grpcListener != nil {
		grpcServer := extauthz.NewServer(ExtAuthz{Engine: engine, Live: live}, extauthz.ServerOptions(grpcTLSConfig)...)
		grpcServer.SetServing(true)
		go func() {
			if err := grpcServer.Serve(grpcListener); err != nil {
				fmt.Fprintf(stderr, "%s: grpc: %v\n", Arg, err)
				stop()
			}
		}()
		go func() {
			<-ctx.Done()
			grpcServer.Stop(2 * time.Second)
		}()
	}
	if err := decisionserver.Serve(ctx, srv, l); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", Arg, err)
		return 1
	}
	return 0
}

// tlsFlags are the server's TLS files, named as OPA's flags name them.
type tlsFlags struct{ certFile, keyFile, caFile string }

// config is the server's TLS configuration; nil to serve in clear. Errors name the flag.
func (f tlsFlags) config() (*tls.Config, error) {
	if f.certFile == "" && f.keyFile == "" {
		if f.caFile != "" {
			return nil, errors.New("--tls-ca-cert-file requires client certificates over TLS: give --tls-cert-file and --tls-private-key-file too")
		}
		return nil, nil
	}
	if f.certFile == "" || f.keyFile == "" {
		return nil, errors.New("TLS needs both --tls-cert-file and --tls-private-key-file")
	}
	pair, err := tls.LoadX509KeyPair(f.certFile, f.keyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert-file %s with --tls-private-key-file %s: %w", f.certFile, f.keyFile, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}}
	if f.caFile != "" {
		pool, err := tlsgen.LoadPool(f.caFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca-cert-file: %w", err)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// Handler answers decision and health requests for the engine, and takes updates of it.
func Handler(e *cedarengine.Engine) http.Handler { return LiveHandler(cedarengine.NewLive(e)) }

// LiveHandler answers decision and health requests with the engine current at each, and takes
// updates at UpdatePath, each swapping in a new engine.
func LiveHandler(l *cedarengine.Live) http.Handler {
	decisions := decisionserver.Handler(Path, maxBody, func(body []byte, answer *bytes.Buffer) (time.Duration, error) {
		e := l.Engine()
		req, err := e.ParseRequest(body)
		if err != nil {
			return 0, err
		}
		start := time.Now()
		decision, diag := e.Decide(&req)
		eval := time.Since(start)
		answer.WriteString(`"decision":"`)
		answer.WriteString(decision.String())
		answer.WriteString(`","reasons":[`)
		for i, reason := range diag.Reasons {
			if i > 0 {
				answer.WriteByte(',')
			}
			decisionserver.WriteJSONString(answer, string(reason.PolicyID))
		}
		answer.WriteString(`],"errors":[`)
		for i, e := range diag.Errors {
			if i > 0 {
				answer.WriteByte(',')
			}
			decisionserver.WriteJSONString(answer, string(e.PolicyID)+": "+e.Message)
		}
		answer.WriteByte(']')
		return eval, nil
	})
	return decisionserver.WithWrites(decisions, UpdatePath, maxBody, func(body []byte) error {
		u, err := cedarengine.ReadUpdate(body)
		if err != nil {
			return err
		}
		return l.Update("update", u)
	})
}
