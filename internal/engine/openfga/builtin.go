package openfga

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"

	"github.com/authzbench/authzbench/internal/workload"
)

// OpenFGA's versions of the built-in relationship families: a model written for each family
// (builtin/*.fga), the family's relationships as tuples, and each input's relationship check as
// a Check, all written from the world the family's reference model holds
// (workload.Workload.Relationships).
func init() {
	workload.RegisterBuiltinVersion(workload.BuiltinVersion{Engine: Name, Add: addBuiltin})
}

//go:embed builtin/*.fga
var builtinModels embed.FS

// builtinFamily is one relationship family as OpenFGA runs it.
type builtinFamily struct {
	model string // its model's file under builtin/
	// style names how a scaling series' point is written, for the series its runs belong to.
	style string
	// handed says what OpenFGA is handed ready-made that the Rego and Cedar versions compute,
	// for the ‡ rows of reports; "" when it does the same work.
	handed string
}

// builtinFamilies are the relationship families by name (workload.RelationshipWorld.Family).
var builtinFamilies = map[string]builtinFamily{
	"nop":      {model: "nop.fga"},
	"rbac":     {model: "rbac.fga", style: "tuples"},
	"docshare": {model: "docshare.fga"},
	"gdrive":   {model: "gdrive.fga", style: "openfga"},
	"github":   {model: "github.fga", style: "openfga"},
	"tinytodo": {model: "tinytodo.fga", style: "openfga",
		handed: "OpenFGA is handed who is an intern (job level below 2) as application#intern tuples, " +
			"since it compares no attributes; Rego and Cedar compare each user's job level at each decision"},
}

// builtin is OpenFGA's version of a built-in workload (workload.Version.Own): its model in the
// DSL and the tuples stored before the clock. Each input's Check is in its Input.Requests.
type builtin struct {
	modelFile string
	model     string
	tuples    []*openfgav1.TupleKey
}

// addBuiltin adds OpenFGA's version to the built-in w, where its family has one. A request
// carries its relationships as contextual tuples, up to OpenFGA's limit: the first, those the
// decision reads, must all fit; the ones beyond are stored before the clock, each once, in the
// order first met, after the world's own.
func addBuiltin(w *workload.Workload) error {
	rw := w.Relationships
	if rw == nil {
		return nil
	}
	fam, ok := builtinFamilies[rw.Family]
	if !ok {
		return nil
	}
	model, err := builtinModels.ReadFile("builtin/" + fam.model)
	if err != nil {
		return err
	}
	if len(rw.Checks) != len(w.Inputs) {
		return fmt.Errorf("%d relationship checks for %d inputs", len(rw.Checks), len(w.Inputs))
	}
	b := &builtin{modelFile: fam.model, model: string(model)}
	stored := map[workload.Relationship]bool{}
	for _, r := range rw.Relationships {
		b.tuples = append(b.tuples, tupleKey(r))
		stored[r] = true
	}
	overflowing, beyond := 0, 0
	for i, c := range rw.Checks {
		if c.Reads > MaxContextualTuples {
			return fmt.Errorf("input %d: %s %s %s: the decision reads %d tuples, more than OpenFGA's %d contextual tuples",
				i+1, c.Subject, c.Permission, c.Resource, c.Reads, MaxContextualTuples)
		}
		carried := c.Carried[:min(len(c.Carried), MaxContextualTuples)]
		if rest := c.Carried[len(carried):]; len(rest) > 0 {
			overflowing++
			for _, r := range rest {
				if !stored[r] {
					stored[r] = true
					beyond++
					b.tuples = append(b.tuples, tupleKey(r))
				}
			}
		}
		in := &w.Inputs[i]
		if in.Requests == nil {
			in.Requests = map[string]workload.EngineRequest{}
		}
		in.Requests[Name] = workload.EngineRequest{Body: checkBody(c, carried)}
	}
	differences := fam.handed
	if beyond > 0 {
		differences = fmt.Sprintf("OpenFGA takes at most %d contextual tuples per Check, and %d of the %d requests carry more: "+
			"their first %d (every tuple the decision reads, then the others) go in the Check, and the %d distinct tuples beyond "+
			"them, of entities that request's decision does not read, are written to the store before the clock; Rego and Cedar read every "+
			"entity from the request",
			MaxContextualTuples, overflowing, len(rw.Checks), MaxContextualTuples, beyond)
		if fam.handed != "" {
			differences = fam.handed + "; " + differences
		}
	}
	if w.Versions == nil {
		w.Versions = map[string]*workload.Version{}
	}
	w.Versions[Name] = &workload.Version{Own: b, Differences: differences}
	if w.Scale != nil && fam.style != "" {
		if w.Scale.Styles == nil {
			w.Scale.Styles = map[string]string{}
		}
		w.Scale.Styles[Name] = fam.style
	}
	return nil
}

// builtinOf is OpenFGA's version of the built-in w; nil for none.
func builtinOf(w *workload.Workload) *builtin {
	if v := w.Versions[Name]; v != nil {
		b, _ := v.Own.(*builtin)
		return b
	}
	return nil
}

// tupleKey is a relationship as an OpenFGA tuple: the subject is its user ("user:anne",
// "group:eng#member", "user:*"), the resource its object.
func tupleKey(r workload.Relationship) *openfgav1.TupleKey {
	return &openfgav1.TupleKey{User: r.Subject.String(), Relation: r.Relation, Object: r.Resource.String()}
}

// checkTuple is a tuple as a Check's contextual tuple, in JSON.
type checkTuple struct {
	Object   string `json:"object"`
	Relation string `json:"relation"`
	User     string `json:"user"`
}

// checkBody writes the check as an input's Check (see Registered.Request), with the tuples it
// carries.
func checkBody(c workload.RelationshipCheck, carried []workload.Relationship) []byte {
	body := struct {
		ContextualTuples []checkTuple `json:"contextual_tuples,omitempty"`
		Object           string       `json:"object"`
		Relation         string       `json:"relation"`
		User             string       `json:"user"`
	}{Object: c.Resource.String(), Relation: c.Permission, User: c.Subject.String()}
	for _, r := range carried {
		k := tupleKey(r)
		body.ContextualTuples = append(body.ContextualTuples, checkTuple{Object: k.Object, Relation: k.Relation, User: k.User})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		panic(err) // strings only: cannot fail
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// builtinFixture is the fixture of the built-in w's version b: its model, its tuples as the
// store's, and no assertions yet.
func builtinFixture(w *workload.Workload, b *builtin) (*Fixture, error) {
	origin := "workload " + w.Name + " model"
	f := &Fixture{Source: origin, ModelOrigin: origin, TupleSets: []TupleSet{{Name: "store"}}}
	var err error
	if f.Model, err = dslModel(origin, 1, b.model); err != nil {
		return nil, err
	}
	f.TupleSets[0].Tuples = make([]Tuple, len(b.tuples))
	for i, k := range b.tuples {
		f.TupleSets[0].Tuples[i] = Tuple{Key: k, Origin: fmt.Sprintf("workload %s tuples:%d", w.Name, i+1)}
	}
	return f, nil
}
