package extauthz

import (
	"context"
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
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/util"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// PluginName is the OPA plugin's name, under which `opa run` is configured, as OPA-Envoy's
// envoy_ext_authz_grpc is:
//
//	--set plugins.authzbench_ext_authz_grpc.addr=127.0.0.1:9191
//	--set plugins.authzbench_ext_authz_grpc.path=envoy/authz/allow
const PluginName = "authzbench_ext_authz_grpc"

// OPAConfig is the plugin's settings.
type OPAConfig struct {
	// Addr is where the gRPC server listens; :9191 by default, as OPA-Envoy's.
	Addr string `json:"addr"`
	// Path is the decision asked for, slash-separated under data; envoy/authz/allow by default.
	Path  string `json:"path"`
	query string
}

// OPAFactory makes the plugin for OPA's runtime (runtime.RegisterPlugin).
type OPAFactory struct{}

// Validate reads the plugin's settings and fills in the defaults.
func (OPAFactory) Validate(_ *plugins.Manager, config []byte) (any, error) {
	c := OPAConfig{Addr: ":9191", Path: "envoy/authz/allow"}
	if err := util.Unmarshal(config, &c); err != nil {
		return nil, fmt.Errorf("plugin %s: %w", PluginName, err)
	}
	q, err := queryOf(c.Path)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: path %q: %w", PluginName, c.Path, err)
	}
	c.query = q
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
func (OPAFactory) New(m *plugins.Manager, config any) plugins.Plugin {
	p := &opaPlugin{manager: m, cfg: config.(*OPAConfig)}
	// Policies or data that change (a bundle activated, a policy PUT) make the prepared query
	// stale; it is prepared again on the next check.
	m.RegisterCompilerTrigger(func(storage.Transaction) { p.prepared.Store(nil) })
	m.UpdatePluginStatus(PluginName, &plugins.Status{State: plugins.StateNotReady})
	return p
}

type opaPlugin struct {
	manager  *plugins.Manager
	cfg      *OPAConfig
	prepared atomic.Pointer[rego.PreparedEvalQuery]
	prepare  sync.Mutex
	server   *Server
}

// Start prepares the query against what OPA has loaded (the files on its command line are
// compiled before plugins start) and serves; the health service says SERVING from then on.
func (p *opaPlugin) Start(ctx context.Context) error {
	if _, err := p.query(ctx); err != nil {
		p.manager.UpdatePluginStatus(PluginName, &plugins.Status{State: plugins.StateErr, Message: err.Error()})
		return err
	}
	l, err := net.Listen("tcp", p.cfg.Addr)
	if err != nil {
		return fmt.Errorf("plugin %s: listen on %s: %w", PluginName, p.cfg.Addr, err)
	}
	p.server = NewServer(p)
	go p.server.Serve(l) //nolint:errcheck // ends with Stop
	p.server.SetServing(true)
	p.manager.UpdatePluginStatus(PluginName, &plugins.Status{State: plugins.StateOK})
	return nil
}

func (p *opaPlugin) Stop(context.Context) {
	if p.server != nil {
		p.server.Stop(2 * time.Second)
	}
	p.manager.UpdatePluginStatus(PluginName, &plugins.Status{State: plugins.StateNotReady})
}

// Reconfigure takes a new decision path; a new address would need a restart, which OPA does
// not do for a plugin, so it is kept.
func (p *opaPlugin) Reconfigure(_ context.Context, config any) {
	c := config.(*OPAConfig)
	p.prepare.Lock()
	p.cfg = &OPAConfig{Addr: p.cfg.Addr, Path: c.Path, query: c.query}
	p.prepared.Store(nil)
	p.prepare.Unlock()
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
	pq, err := rego.New(rego.Query(p.cfg.query), rego.Compiler(p.manager.GetCompiler()),
		rego.Store(p.manager.Store), rego.Runtime(p.manager.Info)).PrepareForEval(ctx)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: prepare %s: %w", PluginName, p.cfg.query, err)
	}
	p.prepared.Store(&pq)
	return &pq, nil
}

// Decide evaluates the decision on the OPA-Envoy input. Only the evaluation is the eval timer:
// building the input is the handler's, as decoding the request body is OPA REST's.
func (p *opaPlugin) Decide(ctx context.Context, req *authv3.CheckRequest) (Decision, int64, error) {
	pq, err := p.query(ctx)
	if err != nil {
		return Decision{}, 0, status.Error(codes.Internal, err.Error())
	}
	input, err := Input(req)
	if err != nil {
		return Decision{}, 0, status.Error(codes.InvalidArgument, err.Error())
	}
	start := time.Now()
	rs, err := pq.Eval(ctx, rego.EvalInput(input))
	evalNS := time.Since(start).Nanoseconds()
	if err != nil {
		return Decision{}, evalNS, status.Errorf(codes.Internal, "evaluate %s: %v", p.cfg.query, err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return Decision{}, evalNS, status.Errorf(codes.FailedPrecondition, "decision %s is undefined", p.cfg.query)
	}
	d, err := ReadDecision(rs[0].Expressions[0].Value)
	if err != nil {
		return Decision{}, evalNS, status.Errorf(codes.FailedPrecondition, "decision %s: %v", p.cfg.query, err)
	}
	return d, evalNS, nil
}

// ReadDecision reads a policy's decision as OPA-Envoy does: a boolean, or an object with a
// boolean "allow" and optional "headers" (name to a string or a list of strings),
// "http_status" and "body".
func ReadDecision(v any) (Decision, error) {
	switch v := v.(type) {
	case bool:
		return Decision{Allow: v}, nil
	case map[string]any:
		var d Decision
		allow, ok := v["allow"].(bool)
		if !ok {
			return d, fmt.Errorf(`want a boolean or an object with a boolean "allow", got an object whose "allow" is %s`, kindOf(v["allow"]))
		}
		d.Allow = allow
		if hs, ok := v["headers"]; ok {
			m, ok := hs.(map[string]any)
			if !ok {
				return d, fmt.Errorf(`"headers": want an object, got %s`, kindOf(hs))
			}
			for name, value := range m {
				switch value := value.(type) {
				case string:
					d.Headers = append(d.Headers, Header{name, value})
				case []any:
					for _, one := range value {
						s, ok := one.(string)
						if !ok {
							return d, fmt.Errorf(`"headers" %q: want strings, got %s`, name, kindOf(one))
						}
						d.Headers = append(d.Headers, Header{name, s})
					}
				default:
					return d, fmt.Errorf(`"headers" %q: want a string or a list of strings, got %s`, name, kindOf(value))
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
				return d, fmt.Errorf(`"body": want a string, got %s`, kindOf(b))
			}
			d.Body = s
		}
		return d, nil
	}
	return Decision{}, fmt.Errorf(`want a boolean or an object with a boolean "allow", got %s`, kindOf(v))
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
		return 0, fmt.Errorf(`"http_status": want a number, got %s`, kindOf(v))
	}
	if n < 100 || n > 599 {
		return 0, fmt.Errorf(`"http_status" %d: want an HTTP status, 100 to 599`, n)
	}
	return int(n), nil
}

func kindOf(v any) string {
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
