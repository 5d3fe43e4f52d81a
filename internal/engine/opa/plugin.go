package opa

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/plugins"
	"github.com/open-policy-agent/opa/v1/plugins/logs"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/runtime"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/util"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/authzbench/authzbench/internal/extauthz"
)

// OPA's ext_authz plugin: authzbench's own counterpart of OPA-Envoy's envoy_ext_authz_grpc, which
// the opa/extauthz kind configures on the OPA it starts. It is OPA's engine's, registered here so
// that every process linking this package (authzbench, its tests' OPA processes) has it, and
// authzbench-opa, which links opacli alone, does not.

// PluginName is the OPA plugin's name, under which `opa run` is configured, as OPA-Envoy's
// envoy_ext_authz_grpc is:
//
//	--set plugins.authzbench_ext_authz_grpc.addr=127.0.0.1:9191
//	--set plugins.authzbench_ext_authz_grpc.path=envoy/authz/allow
const PluginName = "authzbench_ext_authz_grpc"

// pluginConfig is the plugin's settings.
type pluginConfig struct {
	// Addr is where the gRPC server listens; :9191 by default, as OPA-Envoy's.
	Addr string `json:"addr"`
	// Path is the decision asked for, slash-separated under data; envoy/authz/allow by default.
	Path string `json:"path"`
	// TLSFiles serve the gRPC port over TLS (tls_cert_file, tls_private_key_file), requiring
	// a client certificate signed by tls_ca_cert_file when that is set; in clear without them.
	// They are the plugin's own: OPA's --tls-cert-file and its kin secure OPA's REST API only.
	extauthz.TLSFiles
	query string
	tls   *tls.Config
}

// The plugin is registered wherever this package is linked (authzbench, and its tests' OPA
// processes), before any OPA reads its configuration: a plugin configured but not registered
// is an error to OPA.
func init() { runtime.RegisterPlugin(PluginName, pluginFactory{}) }

// pluginFactory makes the plugin for OPA's runtime (runtime.RegisterPlugin).
type pluginFactory struct{}

// Validate reads the plugin's settings and fills in the defaults.
func (pluginFactory) Validate(_ *plugins.Manager, config []byte) (any, error) {
	c := pluginConfig{Addr: ":9191", Path: "envoy/authz/allow"}
	if err := util.Unmarshal(config, &c); err != nil {
		return nil, fmt.Errorf("plugin %s: %w", PluginName, err)
	}
	q, err := queryOf(c.Path)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: path %q: %w", PluginName, c.Path, err)
	}
	c.query = q
	// The files are read here, so that a missing or wrong one stops OPA from starting, with
	// the setting named, rather than failing the plugin later.
	if c.tls, err = c.TLSFiles.Config(func(key string) string { return "plugins." + PluginName + "." + key }); err != nil {
		return nil, fmt.Errorf("plugin %s: %w", PluginName, err)
	}
	return &c, nil
}

// queryOf turns a decision path (envoy/authz/allow, or the query itself) into its query.
func queryOf(path string) (string, error) {
	q := strings.Trim(path, "/")
	if !strings.HasPrefix(q, "data.") && q != "data" {
		q = "data." + strings.ReplaceAll(q, "/", ".")
	}
	if _, err := ast.ParseRef(q); err != nil {
		return "", fmt.Errorf("not a decision path such as envoy/authz/allow: %w", err)
	}
	return q, nil
}

// New returns the plugin; it listens once OPA starts it.
func (pluginFactory) New(m *plugins.Manager, config any) plugins.Plugin {
	p := &opaPlugin{manager: m}
	p.cfg.Store(config.(*pluginConfig))
	// Policies or data that change (a bundle activated, a policy PUT) make the prepared query
	// stale; it is prepared again on the next check.
	m.RegisterCompilerTrigger(func(storage.Transaction) { p.prepared.Store(nil) })
	m.UpdatePluginStatus(PluginName, &plugins.Status{State: plugins.StateNotReady})
	return p
}

type opaPlugin struct {
	manager  *plugins.Manager
	cfg      atomic.Pointer[pluginConfig] // swapped whole by Reconfigure, read by every check
	prepared atomic.Pointer[rego.PreparedEvalQuery]
	prepare  sync.Mutex // one preparation at a time
	serving  sync.Mutex // guards started, server and listening
	started  bool       // between Start and Stop; server is nil then only after a failed restart
	server   *extauthz.Server
	// listening is the address and TLS files server serves with, which a new configuration
	// is compared against.
	listening listenSettings
}

// listenSettings are what a running gRPC server cannot change without being started again.
type listenSettings struct {
	Addr string
	extauthz.TLSFiles
}

// Start prepares the query against what OPA has loaded (the files on its command line are
// compiled before plugins start) and serves; the health service says SERVING from then on.
func (p *opaPlugin) Start(ctx context.Context) error {
	if _, err := p.query(ctx); err != nil {
		p.manager.UpdatePluginStatus(PluginName, &plugins.Status{State: plugins.StateErr, Message: err.Error()})
		return err
	}
	p.serving.Lock()
	defer p.serving.Unlock()
	c := p.cfg.Load()
	server, err := servePlugin(p, c)
	if err != nil {
		p.manager.UpdatePluginStatus(PluginName, &plugins.Status{State: plugins.StateErr, Message: err.Error()})
		return err
	}
	p.server, p.listening, p.started = server, listenSettings{c.Addr, c.TLSFiles}, true
	p.manager.UpdatePluginStatus(PluginName, &plugins.Status{State: plugins.StateOK})
	return nil
}

// servePlugin starts a gRPC server for e on c's address, over TLS when c says so, and says
// SERVING.
func servePlugin(e extauthz.Engine, c *pluginConfig) (*extauthz.Server, error) {
	l, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: listen on %s: %w", PluginName, c.Addr, err)
	}
	s := extauthz.NewServer(e, extauthz.ServerOptions(c.tls)...)
	go s.Serve(l) //nolint:errcheck // ends with Stop
	s.SetServing(true)
	return s, nil
}

func (p *opaPlugin) Stop(context.Context) {
	p.serving.Lock()
	defer p.serving.Unlock()
	if p.server != nil {
		p.server.Stop(2 * time.Second)
		p.server = nil
	}
	p.started = false
	p.manager.UpdatePluginStatus(PluginName, &plugins.Status{State: plugins.StateNotReady})
}

// Reconfigure takes a new decision path at once. A new address or new TLS files need a new
// listener. On a new address the new server is started first and the old one stopped after
// (its checks in flight finish), so Envoy pointed at either never finds nothing listening; if
// the new address cannot be listened on, the old server keeps serving and the plugin's status
// says why, as OPA reports a plugin in error. New TLS files on the same address can only be
// served by closing the old listener first: checks sent in between are refused.
func (p *opaPlugin) Reconfigure(_ context.Context, config any) {
	c := config.(*pluginConfig)
	p.prepare.Lock()
	p.cfg.Store(c)
	p.prepared.Store(nil)
	p.prepare.Unlock()

	p.serving.Lock()
	defer p.serving.Unlock()
	next := listenSettings{c.Addr, c.TLSFiles}
	if !p.started || p.server != nil && p.listening == next {
		return // not started yet (Start will use the new settings), or nothing to restart
	}
	if p.server != nil && next.Addr == p.listening.Addr {
		p.server.Stop(2 * time.Second)
		p.server = nil
	}
	server, err := servePlugin(p, c)
	if err != nil {
		msg := err.Error()
		if p.server != nil {
			msg += "; still serving on " + p.listening.Addr
		}
		p.manager.UpdatePluginStatus(PluginName, &plugins.Status{State: plugins.StateErr, Message: msg})
		return
	}
	if p.server != nil {
		p.server.Stop(2 * time.Second)
	}
	p.server, p.listening = server, next
	p.manager.UpdatePluginStatus(PluginName, &plugins.Status{State: plugins.StateOK})
}

// query is the prepared decision query, prepared again after the policies changed.
func (p *opaPlugin) query(ctx context.Context) (*rego.PreparedEvalQuery, error) {
	if pq := p.prepared.Load(); pq != nil {
		return pq, nil
	}
	p.prepare.Lock()
	defer p.prepare.Unlock()
	if pq := p.prepared.Load(); pq != nil {
		return pq, nil
	}
	query := p.cfg.Load().query
	pq, err := rego.New(rego.Query(query), rego.Compiler(p.manager.GetCompiler()),
		rego.Store(p.manager.Store), rego.Runtime(p.manager.Info)).PrepareForEval(ctx)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: prepare %s: %w", PluginName, query, err)
	}
	p.prepared.Store(&pq)
	return &pq, nil
}

// Decide evaluates the decision on the OPA-Envoy input. Only the evaluation is the eval timer:
// building the input is the handler's, as decoding the request body is OPA REST's.
func (p *opaPlugin) Decide(ctx context.Context, req *authv3.CheckRequest) (extauthz.Decision, int64, error) {
	pq, err := p.query(ctx)
	if err != nil {
		return extauthz.Decision{}, 0, status.Error(codes.Internal, err.Error())
	}
	input, err := envoyInput(req)
	if err != nil {
		return extauthz.Decision{}, 0, status.Error(codes.InvalidArgument, err.Error())
	}
	cfg := p.cfg.Load()
	query := cfg.query
	if lp := logs.Lookup(p.manager); lp != nil {
		return p.decideLogged(ctx, lp, pq, cfg, input)
	}
	start := time.Now()
	rs, err := pq.Eval(ctx, rego.EvalInput(input))
	evalNS := time.Since(start).Nanoseconds()
	d, err := decisionOf(query, rs, err)
	return d, evalNS, err
}

// decisionOf reads the decision of query from its evaluation.
func decisionOf(query string, rs rego.ResultSet, err error) (extauthz.Decision, error) {
	if err != nil {
		return extauthz.Decision{}, status.Errorf(codes.Internal, "evaluate %s: %v", query, err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return extauthz.Decision{}, status.Errorf(codes.FailedPrecondition, "decision %s is undefined", query)
	}
	d, err := readDecision(rs[0].Expressions[0].Value)
	if err != nil {
		return extauthz.Decision{}, status.Errorf(codes.FailedPrecondition, "decision %s: %v", query, err)
	}
	return d, nil
}

// readDecision reads a policy's decision as OPA-Envoy does: a boolean, or an object with a
// boolean "allow" and optional "headers" (name to a string or a list of strings),
// "http_status" and "body".
func readDecision(v any) (extauthz.Decision, error) {
	switch v := v.(type) {
	case bool:
		return extauthz.Decision{Allow: v}, nil
	case map[string]any:
		var d extauthz.Decision
		allow, ok := v["allow"].(bool)
		if !ok {
			return d, fmt.Errorf(`want a boolean or an object with a boolean "allow", got an object whose "allow" is %s`, jsonKind(v["allow"]))
		}
		d.Allow = allow
		if hs, ok := v["headers"]; ok {
			m, ok := hs.(map[string]any)
			if !ok {
				return d, fmt.Errorf(`"headers": want an object, got %s`, jsonKind(hs))
			}
			for name, value := range m {
				switch value := value.(type) {
				case string:
					d.Headers = append(d.Headers, extauthz.Header{Name: name, Value: value})
				case []any:
					for _, one := range value {
						s, ok := one.(string)
						if !ok {
							return d, fmt.Errorf(`"headers" %q: want strings, got %s`, name, jsonKind(one))
						}
						d.Headers = append(d.Headers, extauthz.Header{Name: name, Value: s})
					}
				default:
					return d, fmt.Errorf(`"headers" %q: want a string or a list of strings, got %s`, name, jsonKind(value))
				}
			}
		}
		if s, ok := v["http_status"]; ok {
			n, err := statusNumber(s)
			if err != nil {
				return d, err
			}
			d.HTTPStatus = n
		}
		if b, ok := v["body"]; ok {
			s, ok := b.(string)
			if !ok {
				return d, fmt.Errorf(`"body": want a string, got %s`, jsonKind(b))
			}
			d.Body = s
		}
		return d, nil
	}
	return extauthz.Decision{}, fmt.Errorf(`want a boolean or an object with a boolean "allow", got %s`, jsonKind(v))
}

func statusNumber(v any) (int, error) {
	var n int64
	switch v := v.(type) {
	case json.Number:
		i, err := v.Int64()
		if err != nil {
			return 0, fmt.Errorf(`"http_status" %s: want an integer`, v)
		}
		n = i
	case float64:
		n = int64(v)
	case int:
		n = int64(v)
	case int64:
		n = v
	default:
		return 0, fmt.Errorf(`"http_status": want a number, got %s`, jsonKind(v))
	}
	if n < 100 || n > 599 {
		return 0, fmt.Errorf(`"http_status" %d: want an HTTP status, 100 to 599`, n)
	}
	return int(n), nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null or absent"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number, float64, int, int64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
