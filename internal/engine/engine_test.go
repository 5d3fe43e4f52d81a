package engine_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/engine"
	_ "github.com/authzbench/authzbench/internal/engine/all" // every engine the command links
	"github.com/authzbench/authzbench/internal/workload"
)

// Every registered engine says what the rest of authzbench asks of it, so nothing asks by name.
func TestEveryEngineDescribesItself(t *testing.T) {
	// OPA is the reference the others are checked against; beside it, the rest of what
	// package all links.
	if names := engine.Names(); len(names) < 2 || !slices.Contains(names, "opa") {
		t.Fatalf("engines %v: want OPA and every other engine package all links", names)
	}
	for _, e := range engine.All() {
		t.Run(e.Name(), func(t *testing.T) {
			if langs := e.Languages(); len(langs) == 0 || langs[0] == "" {
				t.Errorf("languages %q: want the one messages name first", langs)
			}
			if e.Version() == "" {
				t.Error("no version for the environment")
			}
			// Readiness on an HTTP path, or on gRPC health for a server that says so.
			if _, grpc := e.(engine.GRPCHealth); !grpc && !strings.HasPrefix(e.HealthPath(), "/") {
				t.Errorf("health path %q: want a path", e.HealthPath())
			}
			if a := e.Answer(); a.Field == "" {
				t.Errorf("answer %+v: want the member holding the decision", a)
			}
			if got, err := engine.Lookup(e.Name()); err != nil || got != e {
				t.Errorf("Lookup(%s): %v, %v", e.Name(), got, err)
			}
		})
	}
}

// Each engine reads a workload in its own language and asks each input its own request.
func TestEnginesReadTheirOwnVersion(t *testing.T) {
	w, err := workload.Builtin("rbac") // written in Rego, in Cedar and in OpenFGA
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range engine.All() {
		lang, ok := engine.WrittenFor(e.Name(), w)
		if lang != engine.Language(e) {
			t.Errorf("%s: WrittenFor names %q, want its language %s", e.Name(), lang, engine.Language(e))
		}
		if !ok {
			// rbac is the quickstart's: an engine with no version of it says why.
			if engine.WhyNot(e, w) == "" {
				t.Errorf("%s: rbac not written for it, and no word why", e.Name())
			}
			continue
		}
		// Every input carries its request, or none does: an engine that asks what its version
		// of the workload builds (a built-in its own package writes) has none per input.
		carried := 0
		for _, in := range w.Inputs {
			if e.Request(in) != nil {
				carried++
			}
		}
		if carried != 0 && carried != len(w.Inputs) || (carried == 0) == engine.RequestsFor(e.Name(), w) {
			t.Errorf("%s: %d of rbac's %d inputs carry a request for it (RequestsFor %v)", e.Name(), carried, len(w.Inputs), engine.RequestsFor(e.Name(), w))
		}
		// Those whose version of rbac writes a request per input (OPA's input, Cedar's request,
		// OpenFGA's Check) carry it.
		if writtenPerInput := slices.Contains([]string{"opa", "cedar", "openfga"}, e.Name()); writtenPerInput && carried == 0 {
			t.Errorf("%s: no rbac input carries a request for it", e.Name())
		}
	}
	regoOnly := &workload.Workload{Name: "x", Policies: []workload.File{{Name: "p.rego"}},
		Inputs: []workload.Input{{JSON: []byte(`{}`), Source: "in.jsonl:1"}}}
	written := 0
	for _, e := range engine.All() {
		if _, ok := engine.WrittenFor(e.Name(), regoOnly); ok {
			written++
			continue
		}
		if engine.RequestsFor(e.Name(), regoOnly) {
			t.Errorf("%s: a Rego-only workload carries its requests", e.Name())
		}
	}
	if written != 1 {
		t.Errorf("a Rego-only workload is written for %d engines, want 1", written)
	}
	// A kind that is no policy engine (http) reads the inputs alone.
	if lang, ok := engine.WrittenFor("http", regoOnly); !ok || lang != "" {
		t.Errorf("http: %q, %v; want every workload served", lang, ok)
	}
	if got := engine.SourceFor("http", regoOnly.Inputs[0]); got != "in.jsonl:1" {
		t.Errorf("http source %q", got)
	}
}

// A second engine of a registered name is a programming error, found at start-up.
func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "opa registered twice") {
			t.Errorf("second registration of opa: %v, want a panic naming it", r)
		}
	}()
	engine.Register(engine.For("opa"))
}

// An engine nobody registered is an error that lists the known ones.
func TestUnknownEngineNamesTheKnown(t *testing.T) {
	_, err := engine.Lookup("nosuch")
	want := `unknown engine "nosuch"; known: ` + strings.Join(engine.Names(), ", ")
	if err == nil || err.Error() != want {
		t.Errorf("Lookup(nosuch): %v, want %s", err, want)
	}
	if engine.For("nosuch") != nil {
		t.Error("For(nosuch) found an engine nobody registered")
	}
}

// The environment records each engine's version under the name its readers have always used:
// the library's where the engine says it has one (cedar-go), the engine's otherwise.
func TestVersionsAreKeyedAsReportsPrintThem(t *testing.T) {
	v := engine.Versions()
	for _, e := range engine.All() {
		key := e.Name()
		if p, ok := e.(engine.Packaged); ok {
			key = p.Package()
		}
		if v[key] != e.Version() {
			t.Errorf("versions %v: want %s's under %q", v, e.Name(), key)
		}
	}
	if _, ok := v["cedar-go"]; !ok {
		t.Errorf("versions %v: want cedar-go's, the label gobench and OpenMetrics readers know", v)
	}
}

// profile and a replay's impact ask the engine of the workload's language, found by what it
// implements (Profiler, Redecider); a workload no such engine reads is refused by language.
func TestProfilerAndRedeciderOfAWorkload(t *testing.T) {
	rego := &workload.Workload{Name: "p", Query: "data.p.allow",
		Policies: []workload.File{{Name: "p.rego", Content: []byte("package p\n\nallow := true\n")}}}
	if p, err := engine.ProfilerOf(rego); err != nil || p == nil {
		t.Errorf("a Rego workload: profiler %v, %v; want OPA's", p, err)
	}
	if engine.RedeciderOf(rego) == nil {
		t.Error("a Rego workload: no engine redecides its replayed events")
	}
	inputsOnly := &workload.Workload{Name: "log", Inputs: []workload.Input{{JSON: []byte(`{}`)}}}
	if p, err := engine.ProfilerOf(inputsOnly); p != nil || err == nil || err.Error() != "workload log has no Rego version to profile" {
		t.Errorf("a workload of inputs alone: profiler %v, %v; want the Rego version asked for", p, err)
	}
	if r := engine.RedeciderOf(inputsOnly); r != nil {
		t.Errorf("a workload of inputs alone: redecided by %v, want none (judged against the log alone)", r)
	}
}
