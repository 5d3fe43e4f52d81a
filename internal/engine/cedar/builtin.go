package cedar

import (
	"fmt"

	"github.com/authzbench/authzbench/internal/workload"
)

// Cedar's versions of the built-in workloads, one file per family (builtin_*.go), each written
// from the family's reference model (workload.Workload.Model, workload.Input.Model): policies,
// schema and entities, and every input's request, deciding every input as the model does.
func init() {
	workload.RegisterBuiltinVersion(workload.BuiltinVersion{Engine: Name, Add: addBuiltin})
}

// builtin is Cedar's version of one built-in workload: its files, what it is handed that Cedar
// cannot compute (empty when nothing), and the request of each input's model.
type builtin struct {
	files       *Files
	differences string
	request     func(model any) ([]byte, error)
}

// builtinOf writes Cedar's version of w, by its family's model; ok is false for a workload
// Cedar has none of (an -opt one is Rego only, and has no model).
func builtinOf(w *workload.Workload) (b builtin, ok bool) {
	switch m := w.Model.(type) {
	case *workload.Nop:
		return nopVersion(), true
	case *workload.RBACData:
		style(w, "cedar")
		return rbacVersion(m), true
	case *workload.EnvoyData:
		return envoyVersion(m), true
	case *workload.APIData:
		return apiVersion(m), true
	case *workload.RiskData:
		return riskVersion(m), true
	case *workload.DocshareWorld:
		return docshareVersion(), true
	case *workload.GdriveWorld:
		style(w, "cedar")
		return appVersion("gdrive", "Document", gdriveEntities(m), gdriveDifferences, gdrivePolicy, gdriveSchema), true
	case *workload.GithubWorld:
		style(w, "cedar")
		return appVersion("github", "Repository", githubEntities(m), githubDifferences, githubPolicy, githubSchema), true
	case *workload.TinytodoWorld:
		style(w, "cedar")
		return appVersion("tinytodo", "List", tinytodoEntities(m), tinytodoDifferences, tinytodoPolicy, tinytodoSchema), true
	case *workload.Rules:
		if m.Indexed {
			return builtin{}, false // Cedar has no data to look the value up in
		}
		style(w, "cedar-policies")
		return rulesVersion(w.Name, m), true
	}
	return builtin{}, false
}

// style names how Cedar's version of a scaling series' point is written ("cedar-policies"),
// for the series its runs belong to; nothing for a workload of no series.
func style(w *workload.Workload, s string) {
	if w.Scale != nil {
		if w.Scale.Styles == nil {
			w.Scale.Styles = map[string]string{}
		}
		w.Scale.Styles[Name] = s
	}
}

// addBuiltin adds Cedar's version to the built-in w, where Cedar has one.
func addBuiltin(w *workload.Workload) error {
	b, ok := builtinOf(w)
	if !ok {
		return nil
	}
	for i := range w.Inputs {
		in := &w.Inputs[i]
		body, err := b.request(in.Model)
		if err != nil {
			return fmt.Errorf("input %d: %w", i+1, err)
		}
		if in.Requests == nil {
			in.Requests = map[string]workload.EngineRequest{}
		}
		in.Requests[Name] = workload.EngineRequest{Body: body}
	}
	if w.Versions == nil {
		w.Versions = map[string]*workload.Version{}
	}
	w.Versions[Name] = &workload.Version{Own: b.files, Differences: b.differences}
	return nil
}

// requestOf is a family's request writer for its input model type I; an input of another
// type is a programming error of the family's generator, reported with the workload.
func requestOf[I any](write func(I) []byte) func(any) ([]byte, error) {
	return func(model any) ([]byte, error) {
		in, ok := model.(I)
		if !ok {
			var want I
			return nil, fmt.Errorf("its model is %T, want %T", model, want)
		}
		return write(in), nil
	}
}
