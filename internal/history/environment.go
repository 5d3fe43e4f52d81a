package history

import (
	"slices"
	"strconv"
	"strings"

	"github.com/authzbench/authzbench/internal/result"
)

// Fact is one thing a document recorded of the machine or the build that measured it: "kernel"
// "6.18.44-fc-v669". A point's value is every value its documents recorded, joined by " / ".
type Fact struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// The facts, in the order they are shown. A testbed's name holds none of them for certain (a
// user's name holds none at all): each can change under one series, and a step in its figures
// at that commit is then the machine's or the toolchain's as much as the code's.
const (
	FactCPU     = "CPU"
	FactCores   = "cores"
	FactPinning = "pinning"
	FactKernel  = "kernel"
	FactCPUFreq = "CPU frequency policy"
	FactGo      = "Go"
	FactEngine  = "engine"
)

var factOrder = []string{FactCPU, FactCores, FactPinning, FactKernel, FactCPUFreq, FactGo, FactEngine}

// factsOf are the facts of one document's environment and of the run a series reads in it
// (engine: "opa 1.22.2"); those it did not record are left out.
func factsOf(env result.Env, engine string) map[string]string {
	f := map[string]string{
		FactCPU: env.CPUModel, FactPinning: env.Pinning, FactKernel: env.Kernel,
		FactCPUFreq: env.CPUFreq, FactGo: env.Go, FactEngine: engine,
	}
	if env.Cores > 0 {
		f[FactCores] = strconv.Itoa(env.Cores)
	}
	for k, v := range f {
		if strings.TrimSpace(v) == "" {
			delete(f, k)
		}
	}
	return f
}

// pointFacts joins the facts of a point's documents: each fact's distinct values, in the order
// first seen.
func pointFacts(docs []map[string]string) []Fact {
	var out []Fact
	for _, name := range factOrder {
		var values []string
		for _, d := range docs {
			if v, ok := d[name]; ok && !slices.Contains(values, v) {
				values = append(values, v)
			}
		}
		if len(values) > 0 {
			out = append(out, Fact{Name: name, Value: strings.Join(values, " / ")})
		}
	}
	return out
}

// EnvironmentChange is a fact that differs between two commits of a series.
type EnvironmentChange struct {
	Fact   string `json:"fact"`
	Before string `json:"before"`
	After  string `json:"after"`
}

func (c EnvironmentChange) String() string { return c.Fact + " " + c.Before + " → " + c.After }

// EnvironmentChanges are the facts that changed from one point to the next. A fact only one of
// them recorded (a result written before authzbench recorded it) is no change: what is not
// known did not change.
func EnvironmentChanges(before, after Point) []EnvironmentChange {
	was := map[string]string{}
	for _, f := range before.Environment {
		was[f.Name] = f.Value
	}
	var out []EnvironmentChange
	for _, f := range after.Environment {
		if v, ok := was[f.Name]; ok && v != f.Value {
			out = append(out, EnvironmentChange{Fact: f.Name, Before: v, After: f.Value})
		}
	}
	return out
}

// DescribeChanges says environment changes in one line: "kernel 6.1.1 → 6.1.2; Go go1.26.7 →
// go1.26.8".
func DescribeChanges(cs []EnvironmentChange) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, "; ")
}
