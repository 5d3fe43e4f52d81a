// The file is not called kind_wasm.go: Go reads a _wasm suffix as "build only for GOARCH=wasm".

package opa

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	// Registers OPA's WebAssembly engine (wazero, pure Go) behind rego.Target("wasm").
	_ "github.com/open-policy-agent/opa/v1/features/wasm"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/version"

	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	kinds.Register(kinds.Kind{Name: "opa/wasm", Engine: "opa", Placement: kinds.InProcess, LoadsPolicy: true, Order: 15,
		NewConfig: func() kinds.Config { return &kinds.NoConfig{} },
		New:       func(common kinds.Common, _ kinds.Config) kinds.Target { return &wasmTarget{common: common} }})
}

// wasmTarget evaluates the workload's policy compiled to WebAssembly by OPA's own compiler, run
// inside authzbench by OPA's Wasm runtime (wazero, pure Go). It is opa/inproc with the
// evaluator swapped: the same query, data and inputs, so the two side by side show what
// compiling to Wasm changes.
//
// OPA's Wasm modules implement only part of Rego's built-in functions natively; the policy
// calls the others (io.jwt.*, time.*, ...) as host functions, which OPA's Go runtime answers
// with the same Go code opa/inproc runs, crossing the Wasm boundary with each call's
// arguments and result serialised. So every Rego workload runs, and a policy heavy in such
// built-ins pays that crossing (HostBuiltins lists them).
type wasmTarget struct {
	kinds.NoWatch
	common kinds.Common
	w      *workload.Workload
	// queries are the policy compiled once per worker, each used by one worker alone. OPA's
	// Wasm runtime hands back a result that still points into the module's memory after the
	// module went back to its pool, and reads it only then, so two evaluations sharing one
	// prepared query can read each other's answers (seen here as wrong decisions on risk with
	// two workers). One prepared query, and so one module, per worker never shares.
	queries []rego.PreparedEvalQuery
	mu      sync.Mutex // guards queries and handed
	handed  int
	// inputOpts hand each input to Eval as its JSON bytes, built once: the Wasm runtime copies
	// bytes into the module's memory as they are, where a parsed value would be printed back
	// to JSON on every decision (OPA's Wasm SDK does that for an ast.Value).
	inputOpts []rego.EvalOption
	host      []string
}

func (t *wasmTarget) Start(ctx context.Context, w *workload.Workload) error {
	pw, err := compileWasm(ctx, t.common.Prepared, w)
	if err != nil {
		return err
	}
	t.w, t.host = w, pw.host
	t.queries = []rego.PreparedEvalQuery{pw.query}
	// Compiled before the run, not as the workers start: a compile of the larger policies
	// takes a good part of a second.
	for len(t.queries) < t.common.Workers {
		q, err := prepareWasm(ctx, w)
		if err != nil {
			return err
		}
		t.queries = append(t.queries, q)
	}
	t.inputOpts = make([]rego.EvalOption, len(w.Inputs))
	for i, in := range w.Inputs {
		if !json.Valid(in.JSON) {
			return fmt.Errorf("workload %s input %d: not JSON", w.Name, i+1)
		}
		t.inputOpts[i] = rego.EvalInput(in.JSON)
	}
	return nil
}

// preparedWasm is a workload's policy compiled to Wasm once per run, shared by every caller
// like Compiled's query.
type preparedWasm struct {
	query rego.PreparedEvalQuery
	host  []string
}

func compileWasm(ctx context.Context, p *engine.Prepared, w *workload.Workload) (preparedWasm, error) {
	// The interpreter's compile first: it finds what is wrong with the policy itself (a
	// syntax error, an unknown function) and names its file and line as for opa/inproc.
	if _, err := Compiled(ctx, p, w); err != nil {
		return preparedWasm{}, err
	}
	v, err := p.Of("opa/wasm", w, func() (any, error) {
		pq, err := prepareWasm(ctx, w)
		if err != nil {
			return nil, err
		}
		used, err := builtinsUsed(w)
		if err != nil {
			return nil, err
		}
		return preparedWasm{query: pq, host: hostBuiltins(used)}, nil
	})
	if err != nil {
		return preparedWasm{}, err
	}
	return v.(preparedWasm), nil
}

// prepareWasm compiles the workload's policy to a Wasm module of its own, loaded with the data.
func prepareWasm(ctx context.Context, w *workload.Workload) (rego.PreparedEvalQuery, error) {
	dir, err := os.MkdirTemp("", "authzbench-wasm-")
	if err != nil {
		return rego.PreparedEvalQuery{}, fmt.Errorf("create directory for workload files: %w", err)
	}
	defer os.RemoveAll(dir)
	policies, data, err := w.Files(dir)
	if err != nil {
		return rego.PreparedEvalQuery{}, err
	}
	opts := append([]func(*rego.Rego){rego.Query(w.Query), rego.Target("wasm")}, LoadOptions(policies, data)...)
	if regoV0(w) {
		opts = append(opts, rego.SetRegoVersion(ast.RegoV0))
	}
	pq, err := rego.New(opts...).PrepareForEval(context.WithoutCancel(ctx))
	if err != nil {
		return pq, wasmError(w, err)
	}
	return pq, nil
}

// missingBuiltin is how OPA's Wasm runtime refuses a module that calls a built-in function it
// has no implementation of.
var missingBuiltin = regexp.MustCompile(`builtin '([^']+)' not found`)

// wasmError says why the policy cannot run as Wasm; when a built-in function is the reason, it
// names the function and where the policy calls it.
func wasmError(w *workload.Workload, err error) error {
	m := missingBuiltin.FindStringSubmatch(err.Error())
	if m == nil {
		return fmt.Errorf("workload %s: compile policy for %s to WebAssembly: %w", w.Name, w.Query, err)
	}
	where := ""
	if locs := builtinCalls(w, m[1]); len(locs) > 0 {
		where = " (called at " + strings.Join(locs, ", ") + ")"
	}
	return fmt.Errorf("workload %s: the built-in function %s%s cannot run in OPA's WebAssembly runtime: this OPA (%s) has no implementation of it to link into the module", w.Name, m[1], where, version.Version)
}

// builtinCalls lists file:line of every call of the built-in function name in the policies.
func builtinCalls(w *workload.Workload, name string) []string {
	var locs []string
	_ = forEachCall(w, func(call string, loc *ast.Location) {
		if call == name && loc != nil {
			locs = append(locs, fmt.Sprintf("%s:%d", loc.File, loc.Row))
		}
	})
	return locs
}

// builtinsUsed lists the built-in functions the policies call, sorted.
func builtinsUsed(w *workload.Workload) ([]string, error) {
	seen := map[string]bool{}
	err := forEachCall(w, func(call string, _ *ast.Location) {
		if _, ok := ast.BuiltinMap[call]; ok {
			seen[call] = true
		}
	})
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, err
}

// forEachCall calls f with every function call in the workload's policies and where it is.
func forEachCall(w *workload.Workload, f func(call string, loc *ast.Location)) error {
	opts := ast.ParserOptions{RegoVersion: ast.RegoV1}
	if regoV0(w) {
		opts.RegoVersion = ast.RegoV0
	}
	files := append([]workload.File{}, w.Policies...)
	bundles, loose := SplitBundles(w.PolicyPaths)
	for _, p := range loose {
		// A directory without a manifest is every .rego file under it, as OPA's loader reads it.
		res, err := loader.NewFileLoader().WithRegoVersion(opts.RegoVersion).Filtered([]string{p}, func(_ string, info os.FileInfo, _ int) bool {
			return !info.IsDir() && !strings.HasSuffix(info.Name(), ".rego")
		})
		if err != nil {
			return fmt.Errorf("read policy: %w", err)
		}
		for _, m := range res.Modules {
			files = append(files, workload.File{Name: m.Name, Content: m.Raw})
		}
	}
	for _, dir := range bundles {
		b, err := loader.NewFileLoader().WithRegoVersion(opts.RegoVersion).AsBundle(dir)
		if err != nil {
			return fmt.Errorf("read bundle %s: %w", dir, err)
		}
		for _, m := range b.Modules {
			name := m.URL // the file as read from disk
			if name == "" {
				name = filepath.Join(dir, m.Path)
			}
			files = append(files, workload.File{Name: name, Content: m.Raw})
		}
	}
	for _, file := range files {
		m, err := ast.ParseModuleWithOpts(file.Name, string(file.Content), opts)
		if err != nil {
			return fmt.Errorf("parse policy %s: %w", file.Name, err)
		}
		ast.WalkExprs(m, func(e *ast.Expr) bool {
			if e.IsCall() {
				f(e.Operator().String(), e.Location)
			}
			// Calls nested in a term (x := f(y)) are terms, not expressions.
			ast.WalkTerms(e, func(t *ast.Term) bool {
				if c, ok := t.Value.(ast.Call); ok && len(c) > 0 {
					f(c[0].String(), t.Location)
				}
				return false
			})
			return false
		})
	}
	return nil
}

// hostBuiltins lists which of the built-in functions used run as host calls from Wasm: those
// OPA's Wasm modules do not implement themselves. OPA's compiler keeps that list to itself; a
// function is native when a one-line policy calling it compiles to a module that imports no
// host function by its name.
func hostBuiltins(used []string) []string {
	var host []string
	for _, name := range used {
		if builtinIsHostCall(name) {
			host = append(host, name)
		}
	}
	return host
}

// builtinIsHostCall compiles a policy calling only name to Wasm and looks for name among the
// module's external function names, which OPA's compiler writes NUL-terminated into the
// module's data.
func builtinIsHostCall(name string) bool {
	bi := ast.BuiltinMap[name]
	if bi == nil || bi.Decl == nil || bi.Infix != "" {
		return false // operators (==, +, ...) are always native
	}
	args := make([]string, len(bi.Decl.FuncArgs().Args))
	for i := range args {
		args[i] = fmt.Sprintf("input.a%d", i)
	}
	mod := fmt.Sprintf("package probe\n\nx := %s(%s)\n", name, strings.Join(args, ", "))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cr, err := rego.New(rego.Query("data.probe.x"), rego.Module("probe.rego", mod), rego.Target("wasm")).Compile(ctx)
	if err != nil || cr == nil {
		return false
	}
	return strings.Contains(string(cr.Bytes), "\x00"+name+"\x00")
}

// Worker hands each worker a compiled module of its own (see queries); a worker beyond those
// Start compiled gets one compiled now.
func (t *wasmTarget) Worker() kinds.Decider {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.handed == len(t.queries) {
		q, err := prepareWasm(context.Background(), t.w)
		if err != nil {
			return kinds.FailedDecider(err)
		}
		t.queries = append(t.queries, q)
	}
	t.handed++
	return &wasmWorker{t: t, query: t.queries[t.handed-1]}
}

type wasmWorker struct {
	t     *wasmTarget
	query rego.PreparedEvalQuery
}

// Decide evaluates one input. The run's context stops a Wasm evaluation that outlives the run
// (OPA's runtime closes the module when it is done); a decision past --timeout is charged as a
// timeout by the load driver, which times every decision, as for opa/inproc's shortest ones.
func (w *wasmWorker) Decide(ctx context.Context, i int) verify.Outcome {
	rs, err := w.query.Eval(ctx, w.t.inputOpts[i])
	if err != nil {
		if ctx.Err() != nil {
			return verify.Outcome{Kind: verify.TimedOut, Err: err}
		}
		return verify.Outcome{Kind: verify.EvalFailed, Err: err}
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return verify.Outcome{Kind: verify.NoResult}
	}
	return kinds.DecisionOfValue(rs[0].Expressions[0].Value)
}

func (t *wasmTarget) Info() kinds.Info {
	return kinds.Info{Engine: "opa", Mode: "wasm", Version: version.Version, HostBuiltins: t.host}
}

// HostBuiltins lists the built-in functions of the started workload's policy that run as host
// calls out of Wasm, in Go.
func (t *wasmTarget) HostBuiltins() []string { return t.host }

func (t *wasmTarget) Stop(context.Context) error { return nil }
