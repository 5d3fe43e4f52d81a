package opa

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/logging"
	"github.com/open-policy-agent/opa/v1/plugins"
	"github.com/open-policy-agent/opa/v1/sdk"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/util"
	"github.com/open-policy-agent/opa/v1/version"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	kinds.Register(kinds.Kind{Name: "opa/sdk", Engine: "opa", Placement: kinds.InProcess, LoadsPolicy: true, ChecksPrepared: true, Order: 12,
		NewConfig: func() kinds.Config { return &SDKConfig{} },
		New: func(common kinds.Common, c kinds.Config) kinds.Target {
			return &sdkTarget{common: common, cfg: c.(*SDKConfig)}
		}})
}

// SDKConfig is opa/sdk's settings: its decision logging.
type SDKConfig struct {
	DecisionLogConfig `yaml:",inline"`
}

// sdkTarget embeds OPA as Go services embed it: OPA's SDK (sdk.New), configured with the
// workload's policy and data as a bundle that authzbench serves on loopback (OPA's bundle
// plugin downloads and activates it, as from a bundle server), with decision logging when asked,
// and one sdk.Decision per request. Beside opa/inproc's prepared query it adds what the SDK
// does on every decision: the input converted to OPA's values, a storage transaction, the
// prepared query looked up in its cache, the decision ID, and the decision logged.
//
// Each input is decoded once before timing into the Go value a service would hand the SDK; no
// per-decision deadline is given (the SDK takes the caller's context, and a deadline would be a
// context and a timer a decision): the load driver charges an overrun as a timeout.
type sdkTarget struct {
	kinds.NoWatch
	common kinds.Common
	cfg    *SDKConfig
	opa    *sdk.OPA
	path   string
	inputs []any
	// bundles serves the workload's bundle to the SDK's bundle plugin.
	bundles *http.Server
	logging *decisionLogging
	// store is the SDK's store, the one it would make itself, kept to take the run's writes.
	store storage.Store
	// v0: the workload's Rego is v0, as a policy replacement's module is parsed.
	v0 bool
}

// sdkBundleService names the bundle server among the SDK's services.
const sdkBundleService = "authzbench_bundles"

func (t *sdkTarget) Start(ctx context.Context, w *workload.Workload) error {
	t.v0 = regoV0(w)
	dir, policies, data, err := workloadFiles(ctx, t.common, w)
	if err != nil {
		return err
	}
	t.path = strings.ReplaceAll(strings.TrimPrefix(w.Query, "data."), ".", "/")
	t.inputs = make([]any, len(w.Inputs))
	for i, in := range w.Inputs {
		if err := util.UnmarshalJSON(in.JSON, &t.inputs[i]); err != nil {
			return fmt.Errorf("workload %s input %d: %w", w.Name, i+1, err)
		}
	}
	tarballs, err := sdkBundles(policies, data, regoV0(w))
	if err != nil {
		return fmt.Errorf("workload %s as a bundle for OPA's SDK: %w", w.Name, err)
	}
	bundleURL, err := t.serveBundles(tarballs)
	if err != nil {
		return err
	}
	if t.logging, err = startDecisionLogging(&t.cfg.DecisionLogConfig); err != nil {
		return err
	}
	conf, err := t.config(bundleURL, len(tarballs))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "authzbench-sdk-config.json"), conf, 0o600); err != nil {
		return fmt.Errorf("write OPA's SDK configuration: %w", err)
	}
	// Console decision logs are encoded as OPA encodes them and then discarded: the cost of
	// logging to a console, without a terminal's.
	console := logging.New()
	console.SetOutput(io.Discard)
	startCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	t.store = inmem.New()
	t.opa, err = sdk.New(startCtx, sdk.Options{
		ID:            "authzbench",
		Store:         t.store,
		Config:        bytes.NewReader(conf),
		Logger:        logging.NewNoOpLogger(),
		ConsoleLogger: console,
		Plugins:       map[string]plugins.Factory{countPluginName: countFactory{}},
		V0Compatible:  regoV0(w),
	})
	if err != nil {
		return fmt.Errorf("start OPA's SDK with workload %s: %w", w.Name, err)
	}
	return nil
}

// config is the SDK's configuration: the bundles from authzbench's bundle server, polled
// seldom enough that the run never polls, and the decision logging.
func (t *sdkTarget) config(bundleURL string, n int) ([]byte, error) {
	conf := map[string]any{}
	if t.logging != nil {
		b, err := t.logging.opaConfig()
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &conf); err != nil {
			return nil, err
		}
	}
	services, _ := conf["services"].(map[string]any)
	if services == nil {
		services = map[string]any{}
	}
	services[sdkBundleService] = map[string]any{"url": bundleURL}
	conf["services"] = services
	bundles := map[string]any{}
	for i := range n {
		bundles[fmt.Sprintf("authzbench%d", i)] = map[string]any{"service": sdkBundleService, "resource": fmt.Sprintf("/bundles/%d.tar.gz", i),
			"polling": map[string]any{"min_delay_seconds": 3600, "max_delay_seconds": 7200}}
	}
	conf["bundles"] = bundles
	return json.Marshal(conf)
}

// sdkBundles are the workload's policy and data as bundle tarballs (workloadBundles).
func sdkBundles(policies, data []string, v0 bool) ([][]byte, error) {
	bundles, err := workloadBundles(policies, data, v0)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, b := range bundles {
		tb, err := writeBundle(b, v0)
		if err != nil {
			return nil, err
		}
		out = append(out, tb)
	}
	return out, nil
}

// workloadBundles are the workload's policy and data as bundles: each bundle directory as it
// is, and loose files as `opa run` reads them (data files merged at the root), in one.
func workloadBundles(policies, data []string, v0 bool) ([]*bundle.Bundle, error) {
	dirs, files := SplitBundles(policies)
	fl := loader.NewFileLoader()
	if v0 {
		fl = fl.WithRegoVersion(ast.RegoV0)
	}
	var out []*bundle.Bundle
	for _, dir := range dirs {
		b, err := fl.AsBundle(dir)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	if paths := append(files, data...); len(paths) > 0 {
		res, err := fl.All(paths)
		if err != nil {
			return nil, err
		}
		b := &bundle.Bundle{Data: res.Documents}
		if b.Data == nil {
			b.Data = map[string]any{}
		}
		for _, m := range res.Modules {
			b.Modules = append(b.Modules, bundle.ModuleFile{URL: m.Name, Path: m.Name, Raw: m.Raw, Parsed: m.Parsed})
		}
		// Roots over all of data, as a bundle without a manifest has (OPA's activation reads
		// them).
		b.Manifest.Init()
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, errors.New("no policy")
	}
	return out, nil
}

// writeBundle is b as a bundle tarball, its manifest saying v0 Rego where it is.
func writeBundle(b *bundle.Bundle, v0 bool) ([]byte, error) {
	if v0 {
		b.Manifest.SetRegoVersion(ast.RegoV0)
	}
	var buf bytes.Buffer
	if err := bundle.NewWriter(&buf).Write(*b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// serveBundles serves the tarballs to the SDK's bundle plugin.
func (t *sdkTarget) serveBundles(tarballs [][]byte) (string, error) {
	srv, url, err := serveBundles(tarballs)
	t.bundles = srv
	return url, err
}

func (t *sdkTarget) Worker() kinds.Decider { return &sdkWorker{t: t} }

type sdkWorker struct{ t *sdkTarget }

func (w *sdkWorker) Decide(ctx context.Context, i int) verify.Outcome {
	res, err := w.t.opa.Decision(ctx, sdk.DecisionOptions{Path: w.t.path, Input: w.t.inputs[i]})
	if err != nil {
		switch {
		case sdk.IsUndefinedErr(err):
			return verify.Outcome{Kind: verify.NoResult}
		case ctx.Err() != nil:
			return verify.Outcome{Kind: verify.TimedOut, Err: err}
		}
		return verify.Outcome{Kind: verify.EvalFailed, Err: err}
	}
	return kinds.DecisionOfValue(res.Result)
}

func (t *sdkTarget) Info() kinds.Info {
	return kinds.Info{Engine: "opa", Mode: "sdk", Version: version.Version, DecisionLogs: t.logging.info()}
}

// Stop stops OPA's SDK, which gives its decision logger the flush timeout to upload what it
// holds, then takes the decision log account.
func (t *sdkTarget) Stop(context.Context) error {
	if t.opa != nil {
		timeout := 2 * time.Second
		if t.logging != nil {
			timeout = time.Duration(t.cfg.flushTimeout()) * time.Second
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		t.opa.Stop(ctx)
		cancel()
		t.opa = nil
	}
	t.logging.finish()
	if t.bundles != nil {
		t.bundles.Close()
		t.bundles = nil
	}
	return nil
}
