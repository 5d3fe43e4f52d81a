package opa

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/types"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// Every built-in workload with a Rego version decides every input in Wasm as the interpreter
// does, and as its reference model expects: compiling to Wasm changes how fast, never what.
func TestWasmDecidesAsInproc(t *testing.T) {
	ctx := context.Background()
	for _, name := range workload.Names() {
		w, err := workload.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		if !w.HasRego() {
			continue
		}
		t.Run(name, func(t *testing.T) {
			inproc, wasm := &inproc{}, &wasmTarget{}
			if err := inproc.Start(ctx, w); err != nil {
				t.Fatal(err)
			}
			if err := wasm.Start(ctx, w); err != nil {
				t.Fatalf("opa/wasm cannot run %s: %v", name, err)
			}
			ref, dw := inproc.Worker(), wasm.Worker()
			wrong := 0
			for i, in := range w.Inputs {
				want, got := ref.Decide(ctx, i), dw.Decide(ctx, i)
				if got.Err != nil || got.Kind != want.Kind || got.Allow != want.Allow ||
					(in.Expect != workload.Unverified && got.Allow != (in.Expect == workload.ExpectAllow)) {
					if wrong++; wrong <= 5 {
						t.Errorf("input %d: wasm %+v, inproc %+v, expected %s\n%s", i+1, got, want, in.Expect, in.JSON)
					}
				}
			}
			if wrong > 0 {
				t.Errorf("%d of %d inputs decided otherwise in Wasm", wrong, len(w.Inputs))
			}
		})
	}
}

// The api policy verifies its token with io.jwt.decode_verify, which OPA's Wasm modules do not
// implement: it runs as a host call, in Go, and the target says so; glob.match is native.
func TestWasmNamesItsHostBuiltins(t *testing.T) {
	w, err := workload.Builtin("api")
	if err != nil {
		t.Fatal(err)
	}
	tg := &wasmTarget{}
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	host := tg.Info().HostBuiltins
	if !slices.Contains(host, "io.jwt.decode_verify") || slices.Contains(host, "glob.match") || slices.Contains(host, "count") {
		t.Errorf("host built-ins %v: want io.jwt.decode_verify, and neither glob.match nor count (native in Wasm)", host)
	}
	nop, err := workload.Builtin("nop")
	if err != nil {
		t.Fatal(err)
	}
	tn := &wasmTarget{}
	if err := tn.Start(context.Background(), nop); err != nil {
		t.Fatal(err)
	}
	if h := tn.Info().HostBuiltins; len(h) != 0 {
		t.Errorf("nop calls no built-in, yet host built-ins %v", h)
	}
}

// A built-in function the interpreter's compiler knows but no Go code implements (as a policy
// written for another OPA build would call) cannot be linked into the Wasm module: the target
// refuses before any decision, naming the function, the workload and the line that calls it.
func TestWasmRefusesAnUnimplementedBuiltin(t *testing.T) {
	const name = "authzbench.test_only_builtin"
	if ast.BuiltinMap[name] == nil {
		ast.RegisterBuiltin(&ast.Builtin{Name: name, Decl: types.NewFunction(types.Args(types.S), types.B)})
	}
	dir := t.TempDir()
	policy := filepath.Join(dir, "custom.rego")
	if err := os.WriteFile(policy, []byte("package custom\n\nallow if {\n\t"+name+"(input.user)\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := &workload.Workload{Name: "custom", Query: "data.custom.allow", PolicyPaths: []string{policy},
		Inputs: []workload.Input{{JSON: []byte(`{"user":"ann"}`), Expect: workload.ExpectAllow}}}
	err := (&wasmTarget{}).Start(context.Background(), w)
	if err == nil {
		t.Fatal("a policy calling an unimplemented built-in started in Wasm")
	}
	for _, want := range []string{"workload custom", name, policy + ":4", "WebAssembly"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// Workers deciding at once each get their answers, not one another's: OPA's Wasm runtime reads
// a result after its module went back to the pool, so modules shared between workers gave
// wrong decisions on risk (236 of 1000 with two workers) before each worker had its own.
func TestWasmConcurrentWorkersDecideRight(t *testing.T) {
	w, err := workload.Builtin("risk")
	if err != nil {
		t.Fatal(err)
	}
	const workers = 4
	tg := &wasmTarget{common: kinds.Common{Workers: workers - 1}} // one worker past those compiled at Start
	if err := tg.Start(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wrong := make([]int, workers)
	for id := range workers {
		d := tg.Worker()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, in := range w.Inputs {
				if out := d.Decide(context.Background(), i); out.Err != nil || out.Allow != (in.Expect == workload.ExpectAllow) {
					wrong[id]++
				}
			}
		}()
	}
	wg.Wait()
	for id, n := range wrong {
		if n > 0 {
			t.Errorf("worker %d: %d of %d decisions wrong", id, n, len(w.Inputs))
		}
	}
	if len(tg.queries) != workers {
		t.Errorf("%d modules for %d workers", len(tg.queries), workers)
	}
}
