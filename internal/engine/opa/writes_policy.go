package opa

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/storage"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// policyWrite is a changes file's policy replacement: the module in file Policy (relative to the
// changes file) takes the place of the workload's module Replaces (its file name, or the end of
// its path; the workload's only module when not given). Module is the file's text, read before
// any load (ResolveWrite), so that what is applied during the run reads no file.
type policyWrite struct {
	Policy   string `json:"policy"`
	Replaces string `json:"replaces,omitempty"`
	Module   string `json:"module,omitempty"`
}

// isPolicyWrite reports whether a write is a policy replacement (a JSON object) rather than a
// JSON Patch of the data (an array).
func isPolicyWrite(form []byte) bool {
	t := bytes.TrimSpace(form)
	return len(t) > 0 && t[0] == '{'
}

// readPolicyWrite reads a policy replacement strictly; resolved says it must hold its module.
func readPolicyWrite(form []byte, resolved bool) (policyWrite, error) {
	var p policyWrite
	dec := json.NewDecoder(bytes.NewReader(form))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf(`a policy replacement: %v; want {"policy": "rbac-v2.rego", "replaces": "rbac.rego"}`, err)
	}
	if p.Policy == "" {
		return p, errors.New(`a policy replacement without "policy": name the .rego file (relative to the changes file) that replaces the module`)
	}
	if !strings.HasSuffix(p.Policy, ".rego") {
		return p, fmt.Errorf(`"policy" %q: want a .rego file`, p.Policy)
	}
	if resolved && p.Module == "" {
		return p, fmt.Errorf(`"policy" %q: the file was not read; a changes file's policy names its file, read before any load`, p.Policy)
	}
	return p, nil
}

// moduleID is the id among ids of the module that replaces names: the id itself, or the one id
// ending in /replaces; with replaces empty, the only id there is.
func moduleID(ids []string, replaces string) (string, error) {
	if replaces == "" {
		if len(ids) == 1 {
			return ids[0], nil
		}
		return "", fmt.Errorf(`the workload has %d policy modules (%s): say which one the file replaces ("replaces": "rbac.rego")`, len(ids), names(ids))
	}
	var found []string
	for _, id := range ids {
		if id == replaces || strings.HasSuffix(filepath.ToSlash(id), "/"+strings.TrimPrefix(filepath.ToSlash(replaces), "/")) {
			found = append(found, id)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf(`"replaces" %q: no module of the workload is called so; its modules: %s`, replaces, names(ids))
	default:
		return "", fmt.Errorf(`"replaces" %q names %d modules (%s): give more of its path`, replaces, len(found), names(found))
	}
}

// names are ids as a message shows them: their file names, sorted.
func names(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = filepath.Base(id)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// ResolveWrite reads a changes file's policy replacement before any load (engine.WriteResolver):
// the .rego file, relative to dir, parsed as OPA parses the workload's Rego, and compiled in
// place of the module it replaces beside the workload's others, as OPA's policy PUT compiles
// every module; a file that does not parse or a module OPA would refuse is refused here. The
// form returned holds the module's text. A JSON Patch of the data comes back as it is.
func (opa) ResolveWrite(w *workload.Workload, form json.RawMessage, dir string) (json.RawMessage, error) {
	if !isPolicyWrite(form) {
		return form, nil
	}
	p, err := readPolicyWrite(form, false)
	if err != nil {
		return nil, err
	}
	if p.Module != "" {
		return nil, errors.New(`a policy replacement names its file ("policy"), not its text: leave out "module"`)
	}
	file := p.Policy
	if !filepath.IsAbs(file) {
		file = filepath.Join(dir, file)
	}
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf(`"policy": %w`, err)
	}
	tmp, err := os.MkdirTemp("", "authzbench-policy-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	policies, _, err := w.Files(tmp)
	if err != nil {
		return nil, err
	}
	if bundles, _ := SplitBundles(policies); len(bundles) > 0 {
		return nil, errors.New("a policy replacement of a bundle's module: OPA refuses policy writes under a bundle's roots; give the workload's policy as files")
	}
	version := ast.RegoV1
	if regoV0(w) {
		version = ast.RegoV0
	}
	loaded, err := loader.NewFileLoader().WithRegoVersion(version).All(policies)
	if err != nil {
		return nil, fmt.Errorf("load the workload's policy: %w", err)
	}
	modules := loaded.ParsedModules()
	ids := make([]string, 0, len(modules))
	for id := range modules {
		ids = append(ids, id)
	}
	id, err := moduleID(ids, p.Replaces)
	if err != nil {
		return nil, err
	}
	parsed, err := ast.ParseModuleWithOpts(file, string(text), ast.ParserOptions{RegoVersion: version})
	if err != nil {
		return nil, fmt.Errorf(`"policy": %w`, err)
	}
	if parsed == nil {
		return nil, fmt.Errorf(`"policy" %s: no module in it`, p.Policy)
	}
	modules[id] = parsed
	c := ast.NewCompiler().WithUseTypeCheckAnnotations(true).WithDefaultRegoVersion(version)
	if c.Compile(modules); c.Failed() {
		return nil, fmt.Errorf(`"policy" %s in place of %s: OPA refuses it: %w`, p.Policy, filepath.Base(id), c.Errors)
	}
	p.Module = string(text)
	return json.Marshal(p)
}

// policyPutter applies a policy replacement to OPA's server as a policy PUT of the module's
// text to the id of the module it replaces (/v1/policies/<id>): OPA parses it, compiles every
// module under its store's write lock, and answers 200 once committed.
type policyPutter struct {
	client *http.Client
	base   string
	ids    []string // the server's policy ids, asked once
}

func (p *policyPutter) apply(ctx context.Context, c change.Change) change.Ack {
	pw, err := readPolicyWrite(c.Form, true)
	if err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	if p.ids == nil {
		if p.ids, err = p.list(ctx); err != nil {
			return change.Ack{Class: "error", Err: fmt.Errorf("list the server's policies: %w", err)}
		}
	}
	id, err := moduleID(p.ids, pw.Replaces)
	if err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	// An id is a path (the file OPA loaded), escaped whole: OPA's router takes {path...} from
	// the escaped path and unescapes it, so its slashes, a leading one too, come back as they were.
	u := p.base + "/v1/policies/" + url.PathEscape(id)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, strings.NewReader(pw.Module))
	if err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	req.Header.Set("Content-Type", "text/plain")
	return kinds.SendWrite(p.client, req)
}

// list is the ids of the policies OPA's server holds but authzbench's own (its authorization
// policy).
func (p *policyPutter) list(ctx context.Context) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/v1/policies", nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /v1/policies: %s", resp.Status)
	}
	var out struct {
		Result []struct {
			ID string `json:"id"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("GET /v1/policies: %w", err)
	}
	var ids []string
	for _, r := range out.Result {
		if !strings.HasPrefix(filepath.Base(r.ID), "authzbench-system-authz") && !strings.Contains(r.ID, "/authzbench-system-authz/") {
			ids = append(ids, r.ID)
		}
	}
	return ids, nil
}

// replacePolicy replaces a module of the live store's policy as OPA's server does a policy PUT:
// in one write transaction (other writes wait, decisions go on), the module parsed and every
// module compiled with it (the paths checked against the data), the module upserted into the
// store and the transaction committed. As on the server, whose plugin manager builds its compiler
// again from the store in a commit trigger, the commit compiles every module once more while it
// holds the store's lock exclusively (recompile), so decisions wait for that compilation: the
// pause a policy PUT causes. A decision begun after the acknowledgement prepares its query
// against the new compiler.
func (l *liveStore) replacePolicy(ctx context.Context, form []byte) change.Ack {
	pw, err := readPolicyWrite(form, true)
	if err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	old := l.compiler.Load()
	ids := make([]string, 0, len(old.Modules))
	for id := range old.Modules {
		ids = append(ids, id)
	}
	id, err := moduleID(ids, pw.Replaces)
	if err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	parsed, err := ast.ParseModuleWithOpts(id, pw.Module, ast.ParserOptions{RegoVersion: l.version()})
	if err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	if parsed == nil {
		return change.Ack{Class: "refused", Err: errors.New("empty module")}
	}
	txn, err := l.store.NewTransaction(ctx, storage.WriteParams)
	if err != nil {
		return ackOf(err)
	}
	modules := make(map[string]*ast.Module, len(old.Modules))
	for k, m := range old.Modules {
		modules[k] = m
	}
	modules[id] = parsed
	c := l.newCompiler().WithPathConflictsCheck(storage.NonEmpty(ctx, l.store, txn))
	if c.Compile(modules); c.Failed() {
		l.store.Abort(ctx, txn)
		return change.Ack{Class: "refused", Err: c.Errors}
	}
	if err := l.store.UpsertPolicy(ctx, txn, id, []byte(pw.Module)); err != nil {
		l.store.Abort(ctx, txn)
		return ackOf(err)
	}
	l.pending = &pendingPolicy{modules: modules, checked: c}
	defer func() { l.pending = nil }()
	if err := l.store.Commit(ctx, txn); err != nil {
		return ackOf(err)
	}
	return change.Ack{}
}

// pendingPolicy is a policy replacement being committed: its modules, and the compiler that
// checked them in the write transaction.
type pendingPolicy struct {
	modules map[string]*ast.Module
	checked *ast.Compiler
}

// recompile, run by the commit of a policy replacement under the store's lock, compiles the
// committed modules again and puts the compiler in place; should that fail (the modules were
// compiled once already), the one that checked them.
func (l *liveStore) recompile() {
	p := l.pending
	if p == nil {
		return
	}
	c := l.newCompiler()
	if c.Compile(p.modules); c.Failed() {
		c = p.checked
	}
	l.compiler.Store(c)
}

func (l *liveStore) version() ast.RegoVersion {
	if l.v0 {
		return ast.RegoV0
	}
	return ast.RegoV1
}

// newCompiler is a compiler as newLiveStore makes the first.
func (l *liveStore) newCompiler() *ast.Compiler {
	return ast.NewCompiler().WithUseTypeCheckAnnotations(true).WithDefaultRegoVersion(l.version())
}

// replaceStorePolicy replaces a module of the SDK's store as OPA's server does a policy PUT: in
// one write transaction, every module of the store parsed, compiled with the new one (the paths
// checked against the data), the module upserted and the transaction committed. The SDK's plugin
// manager compiles the modules again from the store in its commit trigger, under the store's
// lock, and the SDK prepares its queries again for the new compiler.
func replaceStorePolicy(ctx context.Context, store storage.Store, v0 bool, form []byte) change.Ack {
	pw, err := readPolicyWrite(form, true)
	if err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	version := ast.RegoV1
	if v0 {
		version = ast.RegoV0
	}
	txn, err := store.NewTransaction(ctx, storage.WriteParams)
	if err != nil {
		return ackOf(err)
	}
	refuse := func(class string, err error) change.Ack {
		store.Abort(ctx, txn)
		return change.Ack{Class: class, Err: err}
	}
	ids, err := store.ListPolicies(ctx, txn)
	if err != nil {
		return refuse("error", err)
	}
	id, err := moduleID(ids, pw.Replaces)
	if err != nil {
		return refuse("refused", err)
	}
	modules := make(map[string]*ast.Module, len(ids))
	for _, other := range ids {
		text, err := store.GetPolicy(ctx, txn, other)
		if err != nil {
			return refuse("error", err)
		}
		if modules[other], err = ast.ParseModuleWithOpts(other, string(text), ast.ParserOptions{RegoVersion: version}); err != nil {
			return refuse("error", err)
		}
	}
	if modules[id], err = ast.ParseModuleWithOpts(id, pw.Module, ast.ParserOptions{RegoVersion: version}); err != nil || modules[id] == nil {
		return refuse("refused", fmt.Errorf("parse the module: %v", err))
	}
	c := ast.NewCompiler().WithUseTypeCheckAnnotations(true).WithDefaultRegoVersion(version).
		WithPathConflictsCheck(storage.NonEmpty(ctx, store, txn))
	if c.Compile(modules); c.Failed() {
		return refuse("refused", c.Errors)
	}
	if err := store.UpsertPolicy(ctx, txn, id, []byte(pw.Module)); err != nil {
		return refuse("error", err)
	}
	if err := store.Commit(ctx, txn); err != nil {
		return ackOf(err)
	}
	return change.Ack{}
}

// rbacRolesRead is where rbac.rego reads the roles table from the data; a module of the built-in
// policy stream reads its own table there instead.
const rbacRolesRead = "data.rbac.roles[role][input.resource.type]"

// WritePolicy is a built-in family's policy replacement in OPA's form (engine.PolicyWriter): a
// policy PUT of rbac's module written again to hold the change's roles table itself (a grant
// withdrawn is an action gone from it) and to read it there rather than from the data, which
// the stream leaves as it was. The module is parsed and compiled before any load, as OPA
// compiles a policy PUT; it replaces the workload's rbac.rego.
func (opa) WritePolicy(w *workload.Workload, c workload.Change) (json.RawMessage, error) {
	p, ok := c.Policy.(*workload.RBACPolicy)
	if _, rbac := w.Model.(*workload.RBACData); !ok || !rbac {
		return nil, fmt.Errorf("workload %s: OPA takes the built-in policy changes of rbac and rbac-data-N only", w.Name)
	}
	if len(w.Policies) != 1 || w.Policies[0].Name != "rbac.rego" || !bytes.Equal(w.Policies[0].Content, rbacPolicy) {
		return nil, fmt.Errorf("workload %s: its Rego is not rbac.rego as authzbench writes it; the built-in policy stream rewrites that module", w.Name)
	}
	text, err := rbacModule(p.Roles)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.What, err)
	}
	parsed, err := ast.ParseModuleWithOpts("rbac.rego", text, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.What, err)
	}
	comp := ast.NewCompiler().WithUseTypeCheckAnnotations(true).WithDefaultRegoVersion(ast.RegoV1)
	if comp.Compile(map[string]*ast.Module{"rbac.rego": parsed}); comp.Failed() {
		return nil, fmt.Errorf("%s: OPA refuses the module written: %w", c.What, comp.Errors)
	}
	return json.Marshal(policyWrite{Policy: "rbac.rego", Replaces: "rbac.rego", Module: text})
}

// rbacModule is rbac.rego holding the roles table table and reading it from itself.
func rbacModule(table map[string]map[string][]string) (string, error) {
	src := string(rbacPolicy)
	if n := strings.Count(src, rbacRolesRead); n != 1 {
		return "", fmt.Errorf("rbac.rego reads the roles table %d times where %s was expected once", n, rbacRolesRead)
	}
	body, err := json.MarshalIndent(table, "", "\t")
	if err != nil {
		return "", err
	}
	return strings.Replace(src, rbacRolesRead, "roles[role][input.resource.type]", 1) +
		"\n# The roles table, held by the policy itself from this version on (authzbench's built-in\n" +
		"# policy stream): what each role may do to each kind of resource.\nroles := " + string(body) + "\n", nil
}
