package casbin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/authzbench/authzbench/internal/workload"
)

// The built-in workloads in Casbin's terms: a model written for each family, its policy lines
// written from the workload's own data (the rbac directory, the api routes, the N rules), and
// each input's request from its input document. Nothing is decided here: every input's
// expected decision is the workload's reference model's, and the tests hold Casbin's answers
// to it.

func init() {
	workload.RegisterBuiltinVersion(workload.BuiltinVersion{Engine: Name, Add: addBuiltin})
}

// builtinFamily is one family of built-in workloads written in Casbin.
type builtinFamily struct {
	// style is how the version is written, for a scaling family's series (Scale.Styles).
	style string
	// handed says what Casbin is handed ready-made that Rego computes; "" when the same work.
	handed string
	// requests are the inputs' Casbin requests, each a JSON array of its values, in input
	// order, written from the inputs.
	requests func(w *workload.Workload) ([][]byte, error)
	// files writes the model and the policy.
	files func(w *workload.Workload) (Files, error)
}

// familyOf is the Casbin family of the built-in w, nil for one with no Casbin version.
func familyOf(w *workload.Workload) *builtinFamily {
	if w == nil || w.Replay != nil || len(w.PolicyPaths) > 0 {
		return nil
	}
	switch {
	case w.Name == "nop":
		return &nopFamily
	case w.Name == "rbac", w.Scale != nil && w.Scale.Family == "rbac-data":
		return &rbacFamily
	case w.Name == "api":
		return &apiFamily
	case w.Scale != nil && strings.HasPrefix(w.Scale.Family, "rules-"):
		if f := rulesFamilyOf(w); f != nil {
			return f
		}
	}
	return nil
}

// addBuiltin adds the Casbin version of the built-in w, where it has one: each input's request,
// and the version (what it is handed). The model and policy are written when a run loads them
// (builtinFiles), from the same workload, so that building every built-in for a listing costs
// no policy text.
func addBuiltin(w *workload.Workload) error {
	f := familyOf(w)
	if f == nil {
		return nil
	}
	reqs, err := f.requests(w)
	if err != nil {
		return err
	}
	for i := range w.Inputs {
		if w.Inputs[i].Requests == nil {
			w.Inputs[i].Requests = map[string]workload.EngineRequest{}
		}
		w.Inputs[i].Requests[Name] = workload.EngineRequest{Body: reqs[i]}
	}
	if w.Versions == nil {
		w.Versions = map[string]*workload.Version{}
	}
	w.Versions[Name] = &workload.Version{Differences: f.handed}
	if w.Scale != nil && f.style != "" {
		if w.Scale.Styles == nil {
			w.Scale.Styles = map[string]string{}
		}
		w.Scale.Styles[Name] = f.style
	}
	return nil
}

// builtinFiles are the model and policy of the built-in w's Casbin version.
func builtinFiles(w *workload.Workload) (Files, error) {
	f := familyOf(w)
	if f == nil {
		return Files{}, fmt.Errorf("its Casbin version names no files of the user's and is of no built-in family written in Casbin")
	}
	return f.files(w)
}

// policyWriter writes a policy's lines as Casbin's CSV reads them.
type policyWriter struct{ bytes.Buffer }

// line writes one rule: its type (p, g, g2, ...) and its values.
func (p *policyWriter) line(ptype string, values ...string) {
	p.WriteString(ptype)
	for _, v := range values {
		p.WriteString(", ")
		p.WriteString(quoteCSV(v))
	}
	p.WriteByte('\n')
}

// eachInput writes every input's request with request.
func eachInput(request func(in workload.Input) ([]byte, error)) func(w *workload.Workload) ([][]byte, error) {
	return func(w *workload.Workload) ([][]byte, error) {
		reqs := make([][]byte, len(w.Inputs))
		for i, in := range w.Inputs {
			var err error
			if reqs[i], err = request(in); err != nil {
				return nil, fmt.Errorf("input %d: %w", i+1, err)
			}
		}
		return reqs, nil
	}
}

// requestJSON writes a request's values as the JSON array ParseRequest reads.
func requestJSON(values ...any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(values); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// whyNot says why the workload w has no Casbin version; empty when it has one.
func whyNot(w *workload.Workload) string {
	if w.VersionFor(Name) != nil {
		return ""
	}
	if why := w.Inexpressible["Casbin"]; why != "" {
		return why
	}
	base, _, _ := strings.Cut(w.Name, "-opt")
	switch {
	case w.Replay != nil:
		return "it replays the Rego inputs of a decision log; a Casbin request is the values of a model's request definition, and no log names them"
	case len(w.PolicyPaths) > 0 || len(w.Inputs) > 0 && w.Inputs[0].Source != "":
		// A user's inputs name their file and line; a built-in's are generated.
		return "its files are the user's own, in another engine's language; Casbin runs your own model.conf, policy.csv and requests"
	case strings.HasSuffix(w.Name, "-opt"):
		return "it is " + base + " rewritten for OPA from its profile, Rego only; Casbin runs the workloads themselves"
	case w.Name == "risk":
		return "its rules sum, count and sort the applicant's debts and bureau scores; a Casbin matcher has arithmetic on a request's values but cannot walk a list, " +
			"so a version would be handed the sums, counts and the median ready-made, most of the policy"
	case w.Name == "envoy":
		return "its inputs are Envoy ext_authz requests whose basic-auth header is base64-decoded and split; a Casbin matcher has neither, and no version is written"
	case strings.HasPrefix(w.Name, "docshare-"):
		return "each request carries its own entities (users in nested groups, documents in nested folders); Casbin's role links are loaded with its policy before any request, " +
			"and no version is written"
	case w.Scale != nil && strings.HasPrefix(w.Scale.Family, "rules-") && strings.HasSuffix(w.Name, "-indexed"):
		return rulesIndexedWhyNot(w)
	case strings.HasPrefix(w.Name, "gdrive-") || strings.HasPrefix(w.Name, "github-") || strings.HasPrefix(w.Name, "tinytodo-"):
		return "its rules follow relationships (users in groups, objects within objects) that Casbin would hold as role links; none is written yet"
	}
	return "none is written for it"
}

// fromModel reads the built-in w's reference model (workload.RBACData, workload.APIData) into
// this package's view of it, through the JSON form the model's type gives it, so Casbin's
// version reads the family's own definition and no other engine's version of it.
func fromModel(w *workload.Workload, into any) error {
	if w.Model == nil {
		return fmt.Errorf("workload %s has no reference model", w.Name)
	}
	b, err := json.Marshal(w.Model)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}
