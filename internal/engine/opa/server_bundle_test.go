package opa

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// Given the workload as a bundle from authzbench's bundle server, opa/server decides every
// input as the workload expects once its bundle plugin has activated it, and the result
// records the start's time and memory.
func TestBundleServerActivates(t *testing.T) {
	w := builtin(t, "rbac", 30)
	tg := startTarget(t, "opa/server", kinds.Common{Workers: 1}, &ServerConfig{BundleConfig: BundleConfig{BundleServer: true}}, w)
	classes, _ := decideAll(t, w, tg.Worker())
	if classes["ok"] != len(w.Inputs) {
		t.Errorf("classes %v, want all %d correct", classes, len(w.Inputs))
	}
	info := tg.Info()
	if !slices.Contains(info.Command, "bundles.authzbench.service=authzbench_bundles") || slices.ContainsFunc(info.Command, func(a string) bool { return strings.HasSuffix(a, ".rego") }) {
		t.Errorf("command %q: want OPA's bundle plugin pointed at authzbench's bundle server, and no policy file", info.Command)
	}
	if b := info.Bundle; b == nil || b.Optimize != 0 || b.Bytes <= 0 || b.FilesBytes <= b.Bytes || b.SizeLimitBytes != bundle.DefaultSizeLimitBytes {
		t.Errorf("bundle %+v: want the bundle served recorded, its sizes and OPA's default limit", b)
	}
	if s := info.Startup; s == nil || s.ReadySeconds <= 0 || s.PeakMB <= 0 || s.PeakMB < s.RSSMB {
		t.Errorf("startup %+v: want the time to ready and the peak memory of the server's start", s)
	}
}

// A bundle optimized with a rule that changes a decision is refused before any server starts,
// naming the first input it decides otherwise; the same optimization unchanged is served.
func TestOptimizedBundleThatChangesADecisionIsRefused(t *testing.T) {
	w := builtin(t, "api", 40)
	first := slices.IndexFunc(w.Inputs, func(in workload.Input) bool { return in.Expect == workload.ExpectDeny })
	if first < 0 {
		t.Fatal("no input of api is denied: the test needs one")
	}
	pkg := strings.TrimSuffix(strings.TrimPrefix(w.Query, "data."), ".allow")
	optimizedHook = func(b *bundle.Bundle) {
		raw := []byte("package " + pkg + "\n\nallow if true\n")
		m, err := ast.ParseModuleWithOpts("changed.rego", string(raw), ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatal(err)
		}
		b.Modules = append(b.Modules, bundle.ModuleFile{URL: "changed.rego", Path: "changed.rego", Raw: raw, Parsed: m})
	}
	cfg := &ServerConfig{BundleConfig: BundleConfig{Optimize: 1}}
	defer func() { optimizedHook = nil }()
	err := cfg.CheckWorkload(w)
	want := fmt.Sprintf("workload api input %d %s: the -O=1 bundle decides true, the unoptimized bundle false", first+1, w.Inputs[first].JSON)
	if err == nil || !strings.Contains(err.Error(), want) || !isOptionError(err) {
		t.Fatalf("check: %v; want an option error saying %q", err, want)
	}
	tg, err := kinds.New("opa/server", kinds.Common{Workers: 1}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Stop(context.Background())
	if err := tg.Start(context.Background(), w); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("start: %v; want the refusal again", err)
	}
	if pid := tg.Info().PID; pid != 0 {
		t.Errorf("a server was started (pid %d) for a refused bundle", pid)
	}

	optimizedHook = nil
	w = builtin(t, "api", 40) // a workload of its own: bundles are built once per workload
	tg = startTarget(t, "opa/server", kinds.Common{Workers: 1}, &ServerConfig{BundleConfig: BundleConfig{Optimize: 1}}, w)
	classes, _ := decideAll(t, w, tg.Worker())
	if classes["ok"] != len(w.Inputs) {
		t.Errorf("the -O=1 bundle unchanged: classes %v, want all %d correct", classes, len(w.Inputs))
	}
	if b := tg.Info().Bundle; b == nil || b.Optimize != 1 {
		t.Errorf("bundle %+v: want -O=1 recorded", b)
	}
}

// A bundle with a file larger than OPA's size limit is refused before any load, naming the
// file, its size, the limit and the setting.
func TestBundleOverSizeLimitIsRefused(t *testing.T) {
	w := builtin(t, "rbac", 10)
	cfg := &ServerConfig{BundleConfig: BundleConfig{BundleServer: true, BundleSizeLimit: 1000}}
	err := cfg.CheckWorkload(w)
	if err == nil || !isOptionError(err) {
		t.Fatalf("check: %v, want an option error", err)
	}
	for _, want := range []string{"workload rbac's bundle holds data.json of ", "over OPA's size limit of 1000 bytes a file", "bundle_size_limit"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("check: %v; want it to say %q", err, want)
		}
	}
	if err := (&ServerConfig{BundleConfig: BundleConfig{BundleServer: true, BundleSizeLimit: 1 << 20}}).CheckWorkload(w); err != nil {
		t.Errorf("a limit of 1 MiB: %v, want rbac's bundle taken", err)
	}
}

func TestBundleSettingsChecked(t *testing.T) {
	for _, tc := range []struct {
		cfg  ServerConfig
		want string
	}{
		{ServerConfig{BundleConfig: BundleConfig{Optimize: 3}}, "optimize 3: opa build's -O takes 0 (none), 1 or 2"},
		{ServerConfig{BundleConfig: BundleConfig{BundleSizeLimit: 10}}, "bundle_size_limit limits a bundle OPA downloads"},
		{ServerConfig{BundleConfig: BundleConfig{BundleServer: true}, ServerConfig: kinds.ServerConfig{URL: "http://127.0.0.1:1"}}, "with url it starts none"},
		{ServerConfig{BundleConfig: BundleConfig{Optimize: 2}, Replication: kinds.Replication{Replicas: 2}}, "drop replicas"},
	} {
		if err := tc.cfg.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg.BundleConfig, err, tc.want)
		}
	}
}

func isOptionError(err error) bool {
	var o *kinds.OptionError
	return errors.As(err, &o)
}
