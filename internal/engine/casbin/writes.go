package casbin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	casbinv3 "github.com/casbin/casbin/v3"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// roleLinks is Casbin's write form of a change: for each user, the roles its g links are to
// hold afterwards. The applier adds the links missing (AddGroupingPolicies) and removes those
// beyond (RemoveGroupingPolicies), as a service keeps a user's roles with Casbin's API; the
// "active" link, which says the user is not suspended, is no role and is left alone.
type roleLinks struct {
	Roles map[string][]string `json:"roles"`
}

// Write is a built-in family's change in Casbin's form (engine.Writer): rbac's changes
// replace a user's roles, which are the user's g links.
func (registered) Write(w *workload.Workload, c workload.Change) (json.RawMessage, error) {
	if _, ok := w.Model.(*workload.RBACData); !ok {
		return nil, fmt.Errorf("workload %s: Casbin takes the built-in changes of rbac and rbac-data-N only", w.Name)
	}
	var ops []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(c.Patch, &ops); err != nil {
		return nil, fmt.Errorf("%s: %w", c.What, err)
	}
	out := roleLinks{Roles: map[string][]string{}}
	for _, op := range ops {
		toks := strings.Split(op.Path, "/")
		if len(toks) != 5 || toks[0] != "" || toks[1] != "rbac" || toks[2] != "users" || toks[4] != "roles" || toks[3] == "" {
			return nil, fmt.Errorf("%s: path %q: Casbin's writes read changes of a user's roles (/rbac/users/NAME/roles)", c.What, op.Path)
		}
		user := strings.ReplaceAll(strings.ReplaceAll(toks[3], "~1", "/"), "~0", "~")
		roles := []string{}
		switch op.Op {
		case "add", "replace":
			if err := json.Unmarshal(op.Value, &roles); err != nil {
				return nil, fmt.Errorf("%s: %s: want the user's roles, an array of names: %w", c.What, op.Path, err)
			}
		case "remove":
		default:
			return nil, fmt.Errorf("%s: op %q: Casbin's writes read add, replace and remove of a user's roles", c.What, op.Op)
		}
		if slices.Contains(roles, activeLink) {
			return nil, fmt.Errorf("%s: a role is called %q, which the Casbin version's role links reserve", c.What, activeLink)
		}
		out.Roles[user] = roles
	}
	return json.Marshal(out)
}

// CheckWrite reads a changes file's write as the Casbin targets take it (engine.WriteChecker):
// {"roles": {"user": ["role", ...]}}, the roles each user's g links hold afterwards, or a
// policy replacement, {"policy": "policy-v2.csv"}, read by ResolveWrite before.
func (registered) CheckWrite(form json.RawMessage) error {
	if isPolicyWrite(form) {
		_, err := readPolicyWrite(form, true)
		return err
	}
	_, err := readRoleLinks(form)
	return err
}

func readRoleLinks(form []byte) (roleLinks, error) {
	var links roleLinks
	dec := json.NewDecoder(bytes.NewReader(form))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&links); err != nil {
		return roleLinks{}, fmt.Errorf(`want {"roles": {"user": ["role", ...]}}, the roles each user holds afterwards: %v`, err)
	}
	if len(links.Roles) == 0 {
		return roleLinks{}, errors.New(`no "roles": want {"roles": {"user": ["role", ...]}}, the roles each user holds afterwards`)
	}
	for user, roles := range links.Roles {
		if slices.Contains(roles, activeLink) {
			return roleLinks{}, fmt.Errorf("user %s: a role is called %q, which the Casbin version's role links reserve", user, activeLink)
		}
	}
	return links, nil
}

// activeLink is the g link of a user who is not suspended (rbacFiles).
const activeLink = "active"

// Writer applies each change to an enforcer of the target's own, loaded from the same files,
// through Casbin's API (kinds.Writable): the run's shared enforcer stays as loaded for every
// other target. Asked for before the first worker, it moves the target's decisions onto it.
func (t *casbinInproc) Writer() (change.Applier, error) {
	if t.loaded == nil {
		return nil, errors.New("casbin/inproc is not started")
	}
	if !t.own {
		e, err := NewEnforcer(t.loaded.Files)
		if err != nil {
			return nil, err
		}
		own := *t.loaded
		own.Enforcer = e
		t.loaded, t.own, t.writes = &own, true, newEnforcerWrites(e)
	}
	return linkWriter{t.writes}, nil
}

type linkWriter struct{ w *enforcerWrites }

// Apply adds and removes the user's g links (applyRoleLinks), or replaces the policy
// (replacePolicy).
func (a linkWriter) Apply(_ context.Context, _ int, c change.Change) change.Ack {
	if err := a.w.apply(c.Form); err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	return change.Ack{}
}

// applyRoleLinks adds and removes each user's g links to hold the roles links gives. The
// SyncedEnforcer takes its write lock for each call, so decisions wait for it as they wait for
// OPA's commit. A change that both adds and removes links is two calls, and a decision between
// them sees the removal alone: rbac's changes each do one.
func applyRoleLinks(e *casbinv3.SyncedEnforcer, links roleLinks) error {
	users := make([]string, 0, len(links.Roles))
	for u := range links.Roles {
		users = append(users, u)
	}
	slices.Sort(users)
	for _, user := range users {
		want := links.Roles[user]
		held, err := e.GetFilteredGroupingPolicy(0, user)
		if err != nil {
			return err
		}
		var remove, add [][]string
		have := map[string]bool{}
		for _, rule := range held {
			if len(rule) < 2 || rule[1] == activeLink {
				continue
			}
			have[rule[1]] = true
			if !slices.Contains(want, rule[1]) {
				remove = append(remove, []string{user, rule[1]})
			}
		}
		for _, role := range want {
			if !have[role] {
				add = append(add, []string{user, role})
			}
		}
		if len(remove) > 0 {
			if _, err := e.RemoveGroupingPolicies(remove); err != nil {
				return fmt.Errorf("remove %s's roles %v: %w", user, remove, err)
			}
		}
		if len(add) > 0 {
			if _, err := e.AddGroupingPolicies(add); err != nil {
				return fmt.Errorf("add %s's roles %v: %w", user, add, err)
			}
		}
	}
	return nil
}

// Writer sends each change to the server's roles endpoint, or a policy replacement to its policy
// endpoint (kinds.Writable), which changes its enforcer as casbin/inproc does before it answers,
// 204.
func (t *casbinServer) Writer() (change.Applier, error) {
	if t.URL() == "" {
		return nil, errors.New("the Casbin server is not started")
	}
	return &rolesPoster{client: t.WriteClient(), url: t.URL() + RolesPath, policyURL: t.URL() + PolicyPath}, nil
}

type rolesPoster struct {
	client         *http.Client
	url, policyURL string
}

// Apply posts role links to the roles endpoint and a policy replacement to the policy endpoint.
func (p *rolesPoster) Apply(ctx context.Context, _ int, c change.Change) change.Ack {
	u := p.url
	if isPolicyWrite(c.Form) {
		u = p.policyURL
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(c.Form))
	if err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	return kinds.SendWrite(p.client, req)
}
