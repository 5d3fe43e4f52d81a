package casbin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	casbinv3 "github.com/casbin/casbin/v3"

	"github.com/authzbench/authzbench/internal/workload"
)

// policyWrite is a policy replacement in Casbin's form: the policy file (one rule a line, p
// rules and g links, as a policy .csv holds them) that takes the place of the whole policy, as
// Casbin's LoadPolicy reloads it from its adapter when a watcher says the policy changed. In a
// changes file Policy names the file, relative to the changes file; Text is its text, read
// before any load (ResolveWrite), so that what is applied during the run reads no file. A
// pointer, because an empty policy (a model whose matcher reads none) is a policy too.
type policyWrite struct {
	Policy string  `json:"policy"`
	Text   *string `json:"text,omitempty"`
}

// isPolicyWrite reports whether a write replaces the policy ({"policy": ...}) rather than
// setting users' role links ({"roles": ...}).
func isPolicyWrite(form []byte) bool {
	var keys map[string]json.RawMessage
	if json.Unmarshal(form, &keys) != nil {
		return false
	}
	_, ok := keys["policy"]
	return ok
}

// readPolicyWrite reads a policy replacement strictly; resolved says it must hold its text.
func readPolicyWrite(form []byte, resolved bool) (policyWrite, error) {
	var p policyWrite
	dec := json.NewDecoder(bytes.NewReader(form))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf(`a policy replacement: %v; want {"policy": "policy-v2.csv"}, the file that replaces the whole policy`, err)
	}
	if p.Policy == "" {
		return p, errors.New(`a policy replacement without "policy": name the .csv file (relative to the changes file) that replaces the whole policy`)
	}
	if resolved && p.Text == nil {
		return p, fmt.Errorf(`"policy" %q: the file was not read; a changes file's policy names its file, read before any load`, p.Policy)
	}
	return p, nil
}

// ResolveWrite reads a changes file's policy replacement before any load (engine.WriteResolver):
// the file, relative to dir, loaded with the workload's model as Casbin loads a policy, so a
// line Casbin refuses (a rule of the wrong size, a type the model does not define) is refused
// here, naming the policy file and its line. The form returned holds the file's text. A change
// of role links comes back as it is.
func (registered) ResolveWrite(w *workload.Workload, form json.RawMessage, dir string) (json.RawMessage, error) {
	if !isPolicyWrite(form) {
		return form, nil
	}
	p, err := readPolicyWrite(form, false)
	if err != nil {
		return nil, err
	}
	if p.Text != nil {
		return nil, errors.New(`a policy replacement names its file ("policy"), not its text: leave out "text"`)
	}
	file := p.Policy
	if !filepath.IsAbs(file) {
		file = filepath.Join(dir, file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf(`"policy": %w`, err)
	}
	text := string(b)
	model, err := workloadModel(w)
	if err != nil {
		return nil, err
	}
	if _, err := NewEnforcer(Files{ModelName: model.ModelName, Model: model.Model, PolicyName: file, Policy: text}); err != nil {
		return nil, err
	}
	p.Text = &text
	return json.Marshal(p)
}

// workloadModel is the Casbin model of w: the user's model file, or the built-in's; Policy is
// left out.
func workloadModel(w *workload.Workload) (Files, error) {
	v := w.VersionFor(Name)
	if v == nil {
		return Files{}, noVersion(w)
	}
	if path := v.Files[FileModel]; path != "" {
		f, err := ReadFiles(path, "")
		return f, err
	}
	f, err := builtinFiles(w)
	if err != nil {
		return Files{}, fmt.Errorf("workload %s: %w", w.Name, err)
	}
	f.PolicyName, f.Policy = "", ""
	return f, nil
}

// enforcerWrites applies writes to an enforcer one at a time: a policy reload reads the model
// under the enforcer's read lock before it swaps the new one in under its write lock, so a
// change of role links between the two would be lost.
type enforcerWrites struct {
	mu sync.Mutex
	e  *casbinv3.SyncedEnforcer
}

func newEnforcerWrites(e *casbinv3.SyncedEnforcer) *enforcerWrites {
	// The policy is text read once: links change in memory, as a service whose adapter is
	// read-only keeps them, not in an adapter.
	e.EnableAutoSave(false)
	return &enforcerWrites{e: e}
}

// apply applies one write, a policy replacement or a change of role links.
func (w *enforcerWrites) apply(form []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if isPolicyWrite(form) {
		p, err := readPolicyWrite(form, true)
		if err != nil {
			return err
		}
		return replacePolicy(w.e, p)
	}
	links, err := readRoleLinks(form)
	if err != nil {
		return err
	}
	return applyRoleLinks(w.e, links)
}

// replacePolicy replaces the enforcer's whole policy as Casbin's watcher callback does, with
// LoadPolicy from an adapter holding the new text: the SyncedEnforcer reads the rules into a new
// model under its read lock (decisions go on), then, under its write lock (decisions wait),
// rebuilds the role links from it and puts it in place. A decision sees the old policy or the
// new one, never a mix. A line Casbin refuses leaves the old policy in place.
func replacePolicy(e *casbinv3.SyncedEnforcer, p policyWrite) error {
	e.SetAdapter(&linesAdapter{name: p.Policy, text: *p.Text})
	if err := e.LoadPolicy(); err != nil {
		return fmt.Errorf("replace the policy with %s: %w", p.Policy, err)
	}
	return nil
}

// policyWriteOf is a whole policy's text as a replacement's resolved form, named name.
func policyWriteOf(name, text string) (json.RawMessage, error) {
	return json.Marshal(policyWrite{Policy: name, Text: &text})
}

// WritePolicy is a built-in family's policy replacement in Casbin's form (engine.PolicyWriter):
// rbac's whole policy written again from the workload's data with the change's roles table (a
// grant withdrawn is a p rule gone), loaded with the model as Casbin loads it before any load,
// and applied as a policy reload.
func (registered) WritePolicy(w *workload.Workload, c workload.Change) (json.RawMessage, error) {
	p, ok := c.Policy.(*workload.RBACPolicy)
	if _, rbac := w.Model.(*workload.RBACData); !ok || !rbac {
		return nil, fmt.Errorf("workload %s: Casbin takes the built-in policy changes of rbac and rbac-data-N only", w.Name)
	}
	if v := w.VersionFor(Name); v == nil || v.Files[FileModel] != "" {
		return nil, fmt.Errorf("workload %s: its Casbin files are your own; the built-in policy stream rewrites rbac's own policy", w.Name)
	}
	var d rbacData
	if err := fromModel(w, &d); err != nil {
		return nil, fmt.Errorf("read the rbac data: %w", err)
	}
	d.Roles = p.Roles
	f, err := rbacFilesOf(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.What, err)
	}
	if _, err := NewEnforcer(f); err != nil {
		return nil, fmt.Errorf("%s: %w", c.What, err)
	}
	return policyWriteOf(f.PolicyName, f.Policy)
}
