package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/authzbench/authzbench/internal/outputs"
	"github.com/authzbench/authzbench/internal/scenario"
)

// outputRulesHelp is in the help of every command that writes files: what it will refuse to
// write, and how it writes.
const outputRulesHelp = `

Outputs: no file a command writes replaces a measurement or an input. Before any load it
refuses (exit 2) two outputs on one file (-o, --html, --prometheus, --cpuprofile, --out-a,
--out-b), an output that is one of the files it reads, and an output that already exists
unless --force is given (nor does it replace a file put there while it ran); a device or a
FIFO (/dev/null, /dev/stdout) is written into. Every
file is written whole or not at all (a temporary file beside it, renamed into place), and
every write that fails is named on a line of its own (exit 1).`

// forceUsage is the help of --force, alike for every command that writes.
const forceUsage = "replace output files that already exist (without it, an existing file is never overwritten)"

func addForceFlag(fl *pflag.FlagSet, force *bool) {
	fl.BoolVar(force, "force", false, forceUsage)
}

// checkOutputs checks a command's plan before any load: a problem is bad input.
func checkOutputs(p *outputs.Plan) error {
	if err := p.Check(); err != nil {
		return usageError(err)
	}
	return nil
}

// runInputs adds to p every file a run reads: the scenario, every user workload's files, the
// opa binary and the TLS material given as flags.
func runInputs(p *outputs.Plan, f runFlags, s *scenario.Scenario) {
	p.Input("-f", f.file)
	by := func(flag string) string {
		if f.file != "" {
			return "scenario " + f.file
		}
		return flag
	}
	for _, w := range s.Workloads {
		u := w.User
		if u == nil {
			continue
		}
		p.Input(by("--policy"), u.Policies...)
		p.Input(by("--data"), u.Data...)
		p.Input(by("--inputs"), u.Inputs)
		p.Input(by("--cedar-policies"), u.CedarPolicies...)
		p.Input(by("--entities"), u.Entities)
		p.Input(by("--schema"), u.Schema)
		p.Input(by("--cedar-requests"), u.Requests)
		p.Input(by("--template-links"), u.TemplateLinks)
		p.Input(by("--decision-log"), u.DecisionLog)
		p.Input(by("--expect-changes"), u.ExpectChanges)
	}
	p.Input("--opa-bin", f.opaBin)
	p.Input("--openfga-bin", f.openfgaBin)
	p.Input("--server-cert", f.serverCert)
	p.Input("--server-key", f.serverKey)
	p.Input("--cacert", f.caCert)
	p.Input("--cert", f.cert)
	p.Input("--key", f.key)
}

// writeLog reports every output that could not be written on a line of its own as it fails,
// so none is lost behind another, and sums them up for the exit status.
type writeLog struct {
	stderr io.Writer
	failed []string
}

// add records the outcome of writing the output flag named; nil is a success.
func (l *writeLog) add(flag, path string, err error) {
	if err == nil {
		return
	}
	fmt.Fprintf(l.stderr, "authzbench: %v\n", err)
	l.failed = append(l.failed, flag+" "+path)
}

// err is nil when every output was written, else names those that were not.
func (l *writeLog) err() error {
	if len(l.failed) == 0 {
		return nil
	}
	return errors.New("not written: " + strings.Join(l.failed, ", ") + " (the reason for each is above)")
}
