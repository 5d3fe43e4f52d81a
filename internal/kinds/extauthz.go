package kinds

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/authzbench/authzbench/internal/extauthz"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// ExtAuthzConfig is the settings of the ext_authz kinds: a running ext_authz server to
// measure, or how to start one, and how many HTTP/2 connections to spread the checks over.
type ExtAuthzConfig struct {
	// ServerConfig's url is the running server's gRPC address, grpc://host:port or host:port.
	ServerConfig `yaml:",inline"`
	// GRPCConnections is how many HTTP/2 connections the workers share, round robin; 1 by
	// default, as one Envoy worker thread keeps one connection to its authorization cluster.
	GRPCConnections int `yaml:"grpc_connections" count:"true"`
}

func init() {
	DeclareOption(Option{Key: "grpc_connections", Flag: "grpc-connections", Help: "{kinds}: HTTP/2 connections the workers share, round robin (default 1, as one Envoy worker keeps one)"})
}

// Check finds an address that is no gRPC address, and settings that cannot go together.
func (c *ExtAuthzConfig) Check() error {
	var errs []error
	if c.URL != "" {
		if _, _, err := grpcAddr(c.URL); err != nil {
			errs = append(errs, fmt.Errorf("url %q: %w", c.URL, err))
		}
	}
	errs = append(errs, c.checkLaunch()...)
	errs = append(errs, TLSConfig{Server: &c.TLSServer, Client: &c.TLSClient, URL: c.URL, GRPC: true, MTLSAuthzRefused: extAuthzRefusesMTLSAuthz}.Validate())
	if c.GRPCConnections < 0 {
		errs = append(errs, fmt.Errorf("grpc_connections %d: want 1 or more, or none for 1", c.GRPCConnections))
	}
	return errors.Join(errs...)
}

// extAuthzRefusesMTLSAuthz says why mtls_authz has no meaning for the ext_authz servers: OPA's
// authorization policy (--authorization=basic, data.system.authz) is consulted by OPA's REST
// API only, never by a plugin's gRPC port, and neither ext_authz server has a policy of its
// own deciding which clients may ask; the one check of the client there is, its certificate
// against the CA, is mtls.
func extAuthzRefusesMTLSAuthz(n func(string) string) string {
	return fmt.Sprintf("%s is not supported by the ext_authz targets: OPA's --authorization=basic guards OPA's REST API, not the ext_authz plugin's gRPC port, and neither ext_authz server has an authorization policy in front of Check; use %s, which requires and verifies the client's certificate", n("mtls_authz"), n("mtls"))
}

// grpcAddr is the host:port of grpc://host:port, grpcs://host:port or host:port, and whether
// the scheme asks for TLS (grpcs).
func grpcAddr(s string) (addr string, secure bool, err error) {
	addr = s
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "grpc" && u.Scheme != "grpcs") || (u.Path != "" && u.Path != "/") {
			return "", false, errors.New("want a gRPC address, grpc://host:port, grpcs://host:port (TLS) or host:port")
		}
		addr, secure = u.Host, u.Scheme == "grpcs"
	}
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		return "", false, errors.New("want a gRPC address, grpc://host:port, grpcs://host:port (TLS) or host:port")
	}
	return addr, secure, nil
}

// takesCheckRequests is the ext_authz kinds' Takes: a workload whose inputs are Envoy
// CheckRequests, or whose policy reads no input.
func takesCheckRequests(w *workload.Workload) string {
	if w.IgnoresInput {
		return ""
	}
	for _, in := range w.Inputs {
		if !hasAttributes(in.JSON) {
			return `its inputs are not Envoy CheckRequests ({"attributes": {"request": {"http": ...}}})`
		}
	}
	return ""
}

func hasAttributes(input []byte) bool {
	var doc map[string]json.RawMessage
	if json.Unmarshal(input, &doc) != nil {
		return false
	}
	_, ok := doc["attributes"]
	return ok
}

// extAuthzServed is what the ext_authz targets share, whatever the engine behind the server:
// the server started through sut's lifecycle (probed on its gRPC health service) or the one
// the url names, the connections, and every input as a CheckRequest in wire form.
type extAuthzServed struct {
	common Common
	cfg    *ExtAuthzConfig
	addr   string
	launched
	conns    []*grpc.ClientConn
	watches  []*extauthz.TLSWatch // each connection's TLS, when it speaks TLS
	next     atomic.Uint64
	requests []extauthz.Raw

	// The TLS of the server: the certificate files of one authzbench starts, and what the
	// client presents (also to a url over TLS); nil in clear.
	tlsFiles  *serverFiles
	clientTLS *tls.Config
}

// start builds the requests, launches the server (unless url names one) and connects.
func (s *extAuthzServed) start(ctx context.Context, w *workload.Workload, launch func(ctx context.Context, addr string) error) error {
	if s.common.NoReuse {
		return errors.New("the ext_authz targets keep their gRPC connections, as Envoy does; --no-reuse does not apply to them")
	}
	if reason := takesCheckRequests(w); reason != "" {
		return fmt.Errorf("workload %s: %s", w.Name, reason)
	}
	var err error
	if s.requests, err = checkRequests(w); err != nil {
		return err
	}
	if s.cfg.URL != "" {
		var secure bool
		if s.addr, secure, err = grpcAddr(s.cfg.URL); err != nil {
			return optionError("url", func(n func(string) string) string { return fmt.Sprintf("%s %q: %v", n("url"), s.cfg.URL, err) })
		}
		if secure || s.cfg.TLSClient.given() {
			if s.clientTLS, err = s.cfg.TLSClient.config(); err != nil {
				return err
			}
		}
	} else {
		if s.addr, err = s.cfg.listenAddr(); err != nil {
			return err
		}
		if mode := s.cfg.Mode(); mode != Plain {
			if s.tlsFiles, err = s.cfg.tlsFiles(s.common.TempDir); err != nil {
				return err
			}
			if s.clientTLS, err = s.tlsFiles.clientConfig(mode); err != nil {
				s.tlsFiles.remove()
				return err
			}
		}
		if err := launch(ctx, s.addr); err != nil {
			s.tlsFiles.remove()
			return err
		}
	}
	for range max(1, s.cfg.GRPCConnections) {
		conn, watch, err := s.dial(s.clientTLS)
		if err != nil {
			return fmt.Errorf("connect to ext_authz server %s: %w", s.addr, err)
		}
		s.conns, s.watches = append(s.conns, conn), append(s.watches, watch)
	}
	// Every connection is opened, and a running server asked once, before any clock runs: an
	// unreachable address fails here in the network's words, not as a run of errors.
	for _, conn := range s.conns {
		ctx, cancel := context.WithTimeout(ctx, max(s.common.timeout(), probeTimeout))
		// Fail-fast, as a measured call is: a refused connection is UNAVAILABLE at once.
		err := conn.Invoke(ctx, extauthz.CheckMethod, &s.requests[0], &extauthz.Raw{})
		cancel()
		if st, _ := status.FromError(err); err != nil && (st.Code() == codes.Unavailable || st.Code() == codes.DeadlineExceeded) {
			return optionError("url", func(n func(string) string) string {
				return fmt.Sprintf("cannot reach the ext_authz server at %s: %v", s.addr, err)
			})
		}
	}
	return nil
}

// dial is a client connection to the server, over TLS with cfg unless cfg is nil (h2c), and
// the watch of its TLS, nil in clear. The name checked against the server's certificate is the
// host dialled, as an https client checks it.
func (s *extAuthzServed) dial(cfg *tls.Config) (*grpc.ClientConn, *extauthz.TLSWatch, error) {
	creds := insecure.NewCredentials()
	var watch *extauthz.TLSWatch
	if cfg != nil {
		watch = extauthz.WatchTLS(cfg)
		creds = watch
	}
	conn, err := grpc.NewClient("passthrough:///"+s.addr, grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(extauthz.RawCodec{})))
	return conn, watch, err
}

// run starts cmd, a server about to serve ext_authz on addr, through sut's lifecycle: pinned,
// probed on its gRPC health service (over TLS, with the client's certificate, when it serves
// TLS) until SERVING, then watched.
func (s *extAuthzServed) run(ctx context.Context, name, addr string, cmd *exec.Cmd) error {
	within, err := s.cfg.ServerConfig.readyWithin()
	if err != nil {
		return err
	}
	return s.launch(ctx, name, cmd, s.common.PinCPUs, sut.GRPCProbe{Addr: addr, TLS: s.clientTLS}, within)
}

// checkRequests is every input as a CheckRequest in wire form: an input with "attributes" is
// the request's attributes in protojson's form (what OPA-Envoy's input holds; "parsed_path" and
// the other derived fields are the server's to make); an input of a workload that reads none
// becomes the request an HTTP call for it would make (see nopCheckRequest).
func checkRequests(w *workload.Workload) ([]extauthz.Raw, error) {
	out := make([]extauthz.Raw, len(w.Inputs))
	for i, in := range w.Inputs {
		where := in.Source
		if where == "" {
			where = fmt.Sprintf("workload %s input %d", w.Name, i+1)
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(in.JSON, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		req := &authv3.CheckRequest{}
		if attrs, ok := doc["attributes"]; ok {
			req.Attributes = &authv3.AttributeContext{}
			if err := protojson.Unmarshal(attrs, req.Attributes); err != nil {
				return nil, fmt.Errorf("%s: attributes are not Envoy's AttributeContext: %w", where, err)
			}
		} else {
			req = nopCheckRequest(doc)
		}
		b, err := proto.Marshal(req)
		if err != nil {
			return nil, fmt.Errorf("%s: encode CheckRequest: %w", where, err)
		}
		out[i] = extauthz.Raw{B: b}
	}
	return out, nil
}

// nopCheckRequest is the check Envoy would send for an input of the shape nop's are, {"user",
// "action", "resource": {"type", "id"}}: the user in Basic authorization, the action as the
// method (read GET, write PUT, delete DELETE), the resource as the path. Its policy reads none
// of it; the request is there to be the size of a real one.
func nopCheckRequest(doc map[string]json.RawMessage) *authv3.CheckRequest {
	var user, act string
	var res struct{ Type, ID string }
	json.Unmarshal(doc["user"], &user)    //nolint:errcheck // absent or another shape: empty
	json.Unmarshal(doc["action"], &act)   //nolint:errcheck
	json.Unmarshal(doc["resource"], &res) //nolint:errcheck
	method := map[string]string{"read": "GET", "write": "PUT", "delete": "DELETE"}[act]
	if method == "" {
		method = "GET"
	}
	path := "/" + res.Type + "s/" + res.ID
	const host = "app.example"
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":password"))
	return &authv3.CheckRequest{Attributes: &authv3.AttributeContext{Request: &authv3.AttributeContext_Request{
		Http: &authv3.AttributeContext_HttpRequest{Id: "req", Method: method, Path: path, Host: host, Protocol: "HTTP/1.1",
			Headers: map[string]string{":authority": host, ":method": method, ":path": path, "authorization": auth, "user-agent": "curl/8.5.0"}},
	}}}
}

// Worker gives each load worker one of the connections, round robin: several workers share
// one HTTP/2 connection, as an Envoy's requests do.
func (s *extAuthzServed) Worker() Decider {
	i := int(s.next.Add(1)-1) % len(s.conns)
	return &extAuthzWorker{conn: s.conns[i], tls: s.watches[i], requests: s.requests, timeout: s.common.timeout(), timedEvery: s.common.ServerMetricsEvery}
}

// info is the part of Info every ext_authz target fills alike.
func (s *extAuthzServed) info(engine, version string) Info {
	scheme := "grpc://"
	if s.clientTLS != nil {
		scheme = "grpcs://"
	}
	info := Info{Engine: engine, Mode: "ext_authz", URL: scheme + s.addr, External: s.cfg.URL != "", Connections: len(s.conns),
		TLS: tlsInfo(&s.cfg.ServerConfig, s.tlsFiles, s.clientTLS)}
	s.describe(&info, version)
	return info
}

func (s *extAuthzServed) Stop(context.Context) error {
	for _, c := range s.conns {
		c.Close()
	}
	s.conns, s.watches = nil, nil
	err := s.stop()
	// After the server, which reads them until it stops.
	return errors.Join(err, s.tlsFiles.remove())
}

// extAuthzWorker sends prepared CheckRequests as they are (extauthz.RawCodec), so the measured
// path is the call and the read of the response's status code, and no protobuf encoding.
type extAuthzWorker struct {
	conn       *grpc.ClientConn
	tls        *extauthz.TLSWatch // nil in clear
	requests   []extauthz.Raw
	response   extauthz.Raw
	timeout    time.Duration
	timedEvery int
	sends      int
}

func (w *extAuthzWorker) Decide(ctx context.Context, i int) verify.Outcome {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	var out verify.Outcome
	var err error
	timed := w.timedEvery > 0 && w.sends%w.timedEvery == 0
	w.sends++
	if timed {
		var trailer metadata.MD
		err = w.conn.Invoke(metadata.AppendToOutgoingContext(ctx, extauthz.TimersKey, "1"), extauthz.CheckMethod,
			&w.requests[i], &w.response, grpc.Trailer(&trailer))
		out.ServerEvalNS, out.ServerHandlerNS = extauthz.Timers(trailer)
	} else {
		err = w.conn.Invoke(ctx, extauthz.CheckMethod, &w.requests[i], &w.response)
	}
	if err != nil {
		return callFailed(ctx, err, w.tls)
	}
	code, err := extauthz.ResponseCode(w.response.B)
	switch {
	case err != nil:
		out.Kind, out.Err = verify.Malformed, fmt.Errorf("CheckResponse: %w", err)
	case codes.Code(code) == codes.OK:
		out.Kind, out.Allow = verify.Decided, true
	case codes.Code(code) == codes.PermissionDenied:
		out.Kind = verify.Decided
	default:
		// Envoy denies on any other code too, but it is no decision a policy made.
		out.Kind, out.Status, out.Err = verify.GRPCStatus, int(code), fmt.Errorf("CheckResponse status %s", codes.Code(code))
	}
	return out
}

// callFailed is a call that ended in a gRPC error: past its deadline a timeout; UNAVAILABLE
// because the connection's TLS failed (a certificate refused, by either side) a TLS refusal,
// class tls_handshake, as the HTTP targets count it; otherwise the status's code, which gives
// the error its class.
func callFailed(ctx context.Context, err error, watch *extauthz.TLSWatch) verify.Outcome {
	st, _ := status.FromError(err)
	if st.Code() == codes.DeadlineExceeded && ctx.Err() != nil {
		return verify.Outcome{Kind: verify.TimedOut, Err: err}
	}
	if st.Code() == codes.Unavailable && watch != nil {
		if refused := watch.Refused(); refused != nil {
			return verify.Outcome{Kind: verify.TLSRefused, Err: fmt.Errorf("%w (TLS: %v)", err, refused)}
		}
	}
	return verify.Outcome{Kind: verify.GRPCStatus, Status: int(st.Code()), Err: err}
}
