package opa

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"

	"github.com/valyala/fastjson"

	"github.com/authzbench/authzbench/internal/engine/opa/opacli"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

func init() {
	kinds.Register(kinds.Kind{Name: "opa/cli", Engine: "opa", Placement: kinds.ProcessPerDecision, LoadsPolicy: true, ChecksPrepared: true, Order: 20,
		NewConfig: func() kinds.Config { return &CLIConfig{} },
		New: func(common kinds.Common, c kinds.Config) kinds.Target {
			return &cli{common: common, cfg: c.(*CLIConfig)}
		}})
}

// CLIConfig is opa/cli's settings.
type CLIConfig struct {
	// OPABin runs this opa binary instead of the OPA linked into authzbench.
	OPABin string `yaml:"opa_bin"`
}

func init() {
	kinds.DeclareOption(kinds.Option{Key: "opa_bin", Flag: "opa-bin", File: true, Launches: true, Help: "run this opa binary for {kinds} instead of the OPA linked in",
		// An opa that is not there, or does not answer `opa version`, is bad input.
		Check: func(name string, value any) error {
			if _, err := External(value.(string)); err != nil {
				return fmt.Errorf("%s %w", name, err)
			}
			return nil
		}})
}

func (*CLIConfig) Check() error { return nil }

// cli runs one `opa eval` process per decision, with the policy and data files and the input
// on stdin, as a script or a CI step would. What it measures is the cold-start tax: process
// start, policy parse and compile, data load, then one evaluation.
//
// The input goes in with --stdin-input: piping it without that flag makes OPA evaluate with no
// input at all and still exit 0, the mistake that invalidated a published CLI figure.
type cli struct {
	kinds.NoWatch
	common  kinds.Common
	cfg     *CLIConfig
	opa     Program
	args    []string
	in      [][]byte
	version string
}

func (t *cli) Start(ctx context.Context, w *workload.Workload) error {
	_, policies, data, err := workloadFiles(ctx, t.common, w)
	if err != nil {
		return err
	}
	if t.opa, err = cliOPACommand(t.cfg.OPABin); err != nil {
		return err
	}
	if t.version, err = opaVersion(ctx, t.opa); err != nil {
		return err
	}
	args := []string{"eval", "--format", "json", "--stdin-input"}
	if regoV0(w) {
		args = append(args, "--v0-compatible")
	}
	// A bundle (a policy directory with a .manifest) is read as opa eval --bundle reads it.
	bundles, files := SplitBundles(policies)
	for _, p := range bundles {
		args = append(args, "--bundle", p)
	}
	for _, p := range append(files, data...) {
		args = append(args, "--data", p)
	}
	t.args = t.opa.Args(append(args, w.Query)...)
	t.in = make([][]byte, len(w.Inputs))
	for i, in := range w.Inputs {
		t.in[i] = in.JSON
	}
	return nil
}

// cliOPACommand is the OPA that opa/cli runs once per decision: the one the user named, else
// authzbench-opa beside authzbench, else authzbench itself as OPA, whose start-up (every
// engine's package inits) each decision then pays (Warnings says so).
func cliOPACommand(bin string) (Program, error) {
	if bin == "" {
		if o, ok := Beside(); ok {
			return o, nil
		}
	}
	return opaCommand(bin)
}

// Warnings (Warned) says when each decision pays authzbench's own start-up: the process that
// ran is authzbench itself as OPA.
func (t *cli) Warnings() []string {
	if len(t.opa.Prefix) == 0 {
		return nil
	}
	return []string{"opa/cli ran authzbench itself as opa, so each decision pays authzbench's start-up (the package inits of every engine it links): an `opa eval` took 36-38 ms where the opa binary's took 11-15 ms on a 2-core machine (docs/benchmarks.md); build " +
		opacli.Command + " beside authzbench (go build -o DIR ./cmd/authzbench ./cmd/authzbench-opa) or give --opa-bin"}
}

func (t *cli) Worker() kinds.Decider { return &cliWorker{t: t} }

type cliWorker struct {
	t      *cli
	stdout bytes.Buffer
	parser fastjson.Parser
}

func (w *cliWorker) Decide(ctx context.Context, i int) verify.Outcome {
	ctx, cancel := context.WithTimeout(ctx, w.t.common.RequestTimeout())
	defer cancel()
	cmd := exec.CommandContext(ctx, w.t.opa.Path, w.t.args...)
	cmd.Stdin = bytes.NewReader(w.t.in[i])
	w.stdout.Reset()
	cmd.Stdout = &w.stdout
	err := cmd.Run()
	if ctx.Err() != nil {
		return verify.Outcome{Kind: verify.TimedOut, Err: fmt.Errorf("opa eval gave no answer within %s", w.t.common.RequestTimeout())}
	}
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			// With --format json, opa eval prints its errors on stdout.
			return verify.Outcome{Kind: verify.ExitStatus, Status: exit.ExitCode(),
				Err: kinds.BodyError("opa eval exited "+strconv.Itoa(exit.ExitCode()), w.stdout.Bytes())}
		}
		return verify.Outcome{Kind: verify.TransportFailure, Err: err}
	}
	return cliDecision(&w.parser, w.stdout.Bytes())
}

// cliDecision reads `opa eval --format json` output:
// {"result":[{"expressions":[{"value":true,...}]}]}, or {} when the query is undefined.
func cliDecision(p *fastjson.Parser, out []byte) verify.Outcome {
	v, err := p.ParseBytes(out)
	if err != nil {
		return kinds.Malformed("opa eval printed no JSON", out)
	}
	if v.Type() != fastjson.TypeObject {
		return kinds.Malformed("opa eval printed JSON that is not an object", out)
	}
	results := v.GetArray("result")
	if len(results) == 0 {
		return verify.Outcome{Kind: verify.NoResult}
	}
	exprs := results[0].GetArray("expressions")
	if len(exprs) == 0 {
		return verify.Outcome{Kind: verify.NoResult}
	}
	return kinds.DecisionOf(exprs[0].Get("value"))
}

func (t *cli) Info() kinds.Info {
	return kinds.Info{Engine: "opa", Mode: "cli", Version: t.version, Command: append([]string{t.opa.Path}, t.args...)}
}

func (t *cli) Stop(context.Context) error { return nil }
