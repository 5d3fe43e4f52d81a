package casbin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	casbinv3 "github.com/casbin/casbin/v3"
	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/decisionserver"
	"github.com/authzbench/authzbench/internal/engine"
)

// Casbin ships no server as a Go module (casbin-server, its gRPC service, is not on the module
// proxy), so to measure Casbin behind a network hop, as OPA's REST server and the Cedar server
// are measured, authzbench serves it itself: "authzbench casbin-server", a process of its own
// that casbin/server starts on a free loopback port, probes and stops by PID. It is the Cedar
// server's plumbing (internal/decisionserver), so that the modes compare engines:
//
//	POST /v1/enforce  ["alice", "data1", "read"]   (the request's values, as the model defines them)
//	→ 200 {"allow":true} | {"allow":false} | {"error": "..."} (an Enforce that failed)
//	GET  /health      → 200 {}

// ServerArg is the first argument that turns an authzbench (or test) process into the Casbin
// server.
const ServerArg = "casbin-server"

// ServerPath is where the server takes decisions.
const ServerPath = "/v1/enforce"

// RolesPath is where the server takes changes of users' role links: {"roles": {"user":
// ["role", ...]}}, the g links each user holds afterwards, applied before the answer, 204.
const RolesPath = "/v1/roles"

// PolicyPath is where the server takes policy replacements: {"policy": "name.csv", "text":
// "..."}, the whole policy's text (one rule a line), reloaded as Casbin's LoadPolicy reloads it,
// before the answer, 204.
const PolicyPath = "/v1/policy"

// maxWriteBody bounds a write's body: a whole policy may be many MB for a big directory.
const maxWriteBody = 256 << 20

// maxRequestBody bounds a request body: a request's values are rarely more than a few KB.
const maxRequestBody = 1 << 20

func init() {
	engine.RegisterCommand(engine.Command{
		Arg:   ServerArg,
		Use:   ServerArg + " --model FILE [--policy FILE] [--addr HOST:PORT]",
		Short: "Serve a Casbin model and policy over HTTP (Casbin ships no server module; the casbin/server target runs this)",
		Long: `Casbin ships no server as a Go module, so authzbench serves a Casbin SyncedEnforcer itself, in its
own process, over a small JSON API: POST ` + ServerPath + ` with the request's values as a JSON array,
in the order of the model's request definition, answered {"allow":true} or {"allow":false}
({"error": "..."} when Enforce fails); POST ` + RolesPath + ` {"roles": {"alice": ["admin"]}} sets
users' g links (role links), and POST ` + PolicyPath + ` {"policy": "v2.csv", "text": "p, admin, data1, read\n..."}
replaces the whole policy (as Casbin's LoadPolicy reloads it), each answered 204 once applied. The casbin/server target starts it; run
it yourself to put your own load tool in front of Casbin.`,
		Example: `  authzbench casbin-server --model model.conf --policy policy.csv
  curl -s localhost:8180` + ServerPath + ` -d '["alice", "data1", "read"]'`,
		Main: ServerMain,
	})
}

// ServerMain parses the server's flags, loads the model and policy and serves until SIGINT or
// SIGTERM. What Casbin refuses is its first line on stderr, and exit status 2.
func ServerMain(args []string, stderr io.Writer) int {
	fs := pflag.NewFlagSet("authzbench "+ServerArg, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	modelPath := fs.String("model", "", "Casbin model `file` (.conf)")
	policyPath := fs.String("policy", "", "Casbin policy `file` (.csv, one rule a line); none for a model whose matcher reads no policy")
	addr := fs.String("addr", "127.0.0.1:8180", "listen on this address")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: authzbench %s --model FILE [--policy FILE] [--addr HOST:PORT]

Serves a Casbin model and policy (a SyncedEnforcer) over HTTP:
  POST %s  ["alice", "data1", "read"]  (the request's values, as the model's request definition orders them)
    -> {"allow":true} | {"allow":false} | {"error": "..."}
  POST %s  {"roles": {"alice": ["admin"]}}  (the g links each user holds afterwards) -> 204
  POST %s  {"policy": "v2.csv", "text": "p, admin, data1, read\n"}  (the whole policy, reloaded) -> 204
  GET  /health -> 200
Add ?metrics=true to a decision request for the server's own timers (enforce, handler) in ns.

Flags:
`, ServerArg, ServerPath, RolesPath, PolicyPath)
		fs.PrintDefaults()
	}
	if code, ok := decisionserver.ParseFlags(fs, args, stderr, ServerArg); !ok {
		return code
	}
	if *modelPath == "" {
		fmt.Fprintf(stderr, "%s: give the model with --model FILE (see authzbench %s --help)\n", ServerArg, ServerArg)
		return 2
	}
	files, err := ReadFiles(*modelPath, *policyPath)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", ServerArg, err)
		return 2
	}
	e, err := NewEnforcer(files)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", ServerArg, err)
		return 2
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", ServerArg, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Handler: Handler(e), ReadHeaderTimeout: 10 * time.Second}
	if err := decisionserver.Serve(ctx, srv, l); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", ServerArg, err)
		return 1
	}
	return 0
}

// Handler answers decision and health requests with the enforcer e, shared by every request as
// a service shares one.
func Handler(e *casbinv3.SyncedEnforcer) http.Handler {
	decisions := decide(e)
	writes := newEnforcerWrites(e)
	roles := decisionserver.WithWrites(decisions, RolesPath, maxRequestBody, func(body []byte) error {
		if isPolicyWrite(body) {
			return fmt.Errorf("a policy replacement: post it to %s", PolicyPath)
		}
		return writes.apply(body)
	})
	return decisionserver.WithWrites(roles, PolicyPath, maxWriteBody, func(body []byte) error {
		if !isPolicyWrite(body) {
			return fmt.Errorf(`want {"policy": "name.csv", "text": "..."}, the whole policy; role links go to %s`, RolesPath)
		}
		return writes.apply(body)
	})
}

func decide(e *casbinv3.SyncedEnforcer) http.Handler {
	size := len(RequestTokens(e.GetModel()))
	return decisionserver.Handler(ServerPath, maxRequestBody, func(body []byte, answer *bytes.Buffer) (time.Duration, error) {
		vals, err := ParseRequest(body)
		if err != nil {
			return 0, err
		}
		if len(vals) != size {
			return 0, fmt.Errorf("%d request values, and the model's request definition has %d", len(vals), size)
		}
		start := time.Now()
		allowed, err := e.Enforce(vals...)
		eval := time.Since(start)
		switch {
		case err != nil:
			answer.WriteString(`"error":`)
			decisionserver.WriteJSONString(answer, err.Error())
		case allowed:
			answer.WriteString(allowBody[1 : len(allowBody)-1])
		default:
			answer.WriteString(denyBody[1 : len(denyBody)-1])
		}
		return eval, nil
	})
}
