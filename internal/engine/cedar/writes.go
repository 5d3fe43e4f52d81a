package cedar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/engine/cedar/cedarengine"
	"github.com/authzbench/authzbench/internal/engine/cedar/cedarserver"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// Write is a built-in family's change in Cedar's write form (engine.Writer): the entities it
// changes, rebuilt from the family's model with the change's JSON Patch of the data applied,
// as cedarengine.Update reads them. rbac's changes replace a user's roles, which are the User
// entity's parents; the user's other attributes no change of the stream touches, so each change
// is read against the model as the workload built it and needs no state of the stream before it.
func (cedar) Write(w *workload.Workload, c workload.Change) (json.RawMessage, error) {
	d, ok := w.Model.(*workload.RBACData)
	if !ok {
		return nil, fmt.Errorf("workload %s: Cedar takes the built-in changes of rbac and rbac-data-N only", w.Name)
	}
	var ops []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(c.Patch, &ops); err != nil {
		return nil, fmt.Errorf("%s: %w", c.What, err)
	}
	users := map[string]workload.RBACUser{}
	var order []string
	for _, op := range ops {
		name, err := rbacRolesPath(op.Path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.What, err)
		}
		u, ok := users[name]
		if !ok {
			if u, ok = d.Users[name]; !ok {
				return nil, fmt.Errorf("%s: %s: no user %q in the workload's data", c.What, op.Path, name)
			}
			order = append(order, name)
		}
		switch op.Op {
		case "add", "replace":
			var roles []string
			if err := json.Unmarshal(op.Value, &roles); err != nil {
				return nil, fmt.Errorf("%s: %s: want the user's roles, an array of names: %w", c.What, op.Path, err)
			}
			u.Roles = roles
		case "remove":
			u.Roles = nil
		default:
			return nil, fmt.Errorf("%s: op %q: Cedar's writes read add, replace and remove of a user's roles", c.What, op.Op)
		}
		users[name] = u
	}
	up := cedarengine.Update{}
	es := make([]entity, 0, len(order))
	for _, name := range order {
		es = append(es, rbacUser(name, users[name]))
	}
	up.Entities = mustJSON(es)
	return json.Marshal(up)
}

// WritePolicy is a built-in family's policy replacement in Cedar's form (engine.PolicyWriter):
// an update whose "policies" are rbac's two policy files again, the roles' permits written from
// the change's roles table (a grant withdrawn is an action gone from a permit, or the permit
// gone), parsed as an update's policies are, before any load. The entities are left as they are.
func (cedar) WritePolicy(w *workload.Workload, c workload.Change) (json.RawMessage, error) {
	p, ok := c.Policy.(*workload.RBACPolicy)
	if _, rbac := w.Model.(*workload.RBACData); !ok || !rbac {
		return nil, fmt.Errorf("workload %s: Cedar takes the built-in policy changes of rbac and rbac-data-N only", w.Name)
	}
	if v := w.VersionFor(Name); v == nil || len(v.Files) > 0 {
		return nil, fmt.Errorf("workload %s: its Cedar files are your own; the built-in policy stream rewrites rbac's own policies", w.Name)
	}
	up := cedarengine.Update{Policies: []string{string(rbacPolicy), rbacGrants(p.Roles)}}
	if err := cedarengine.CheckPolicies(c.What, up.Policies); err != nil {
		return nil, err
	}
	return json.Marshal(up)
}

// rbacRolesPath is the user whose roles a JSON Pointer into rbac's data names
// (/rbac/users/NAME/roles); an error for any other path.
func rbacRolesPath(p string) (string, error) {
	toks := strings.Split(p, "/")
	if len(toks) != 5 || toks[0] != "" || toks[1] != "rbac" || toks[2] != "users" || toks[4] != "roles" {
		return "", fmt.Errorf("path %q: Cedar's writes read changes of a user's roles (/rbac/users/NAME/roles)", p)
	}
	name := strings.ReplaceAll(strings.ReplaceAll(toks[3], "~1", "/"), "~0", "~")
	if name == "" {
		return "", errors.New("path " + p + ": no user")
	}
	return name, nil
}

// CheckWrite reads a changes file's write as the Cedar targets take it: an update,
// {"entities": [...], "delete": [...], "policies": [...]} (engine.WriteChecker), the policies
// parsed. The entities and policies are validated by the schema only when applied: one the
// schema refuses stops the run there.
func (cedar) CheckWrite(form json.RawMessage) error {
	u, err := cedarengine.ReadUpdate(form)
	if err != nil {
		return err
	}
	if u.Policies != nil {
		if err := cedarengine.CheckPolicies("the change's", u.Policies); err != nil {
			return err
		}
	}
	if len(u.Entities) > 0 {
		var es []map[string]json.RawMessage
		if err := json.Unmarshal(u.Entities, &es); err != nil {
			return fmt.Errorf(`"entities": want an array of entities, as an entities file holds: %v`, err)
		}
		for i, e := range es {
			if _, ok := e["uid"]; !ok {
				return fmt.Errorf(`"entities": entity %d has no "uid"`, i+1)
			}
		}
	}
	return nil
}

// Writer applies each change by building a new engine with it and swapping it in
// (kinds.Writable), as services built on cedar-go do. Asked for before the first worker, it
// moves the target's decisions onto the swapped engine: a run without changes never asks.
func (t *inproc) Writer() (change.Applier, error) {
	if t.engine == nil {
		return nil, errors.New("cedar/inproc is not started")
	}
	if t.live == nil {
		t.live = cedarengine.NewLive(t.engine)
	}
	return swapper{t.live}, nil
}

// swapper applies a change to a Live: acknowledged once the new engine is swapped in, so a
// decision started after it decides with it.
type swapper struct{ live *cedarengine.Live }

func (s swapper) Apply(_ context.Context, version int, c change.Change) change.Ack {
	u, err := cedarengine.ReadUpdate(c.Form)
	if err == nil {
		err = s.live.Update(fmt.Sprintf("change %d", version), u)
	}
	if err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	return change.Ack{}
}

// Writer sends each change to the server's update endpoint (kinds.Writable), which builds a
// new engine with it and swaps it in before it answers, 204. Replicas each hold their own
// engine, and a write reaches one: refused.
func (t *server) Writer() (change.Applier, error) {
	if err := t.RefusesWrites(); err != nil {
		return nil, err
	}
	if t.URL() == "" {
		return nil, errors.New("the Cedar server is not started")
	}
	return &updatePoster{client: t.WriteClient(), url: t.URL() + cedarserver.UpdatePath}, nil
}

// RefusesWrites refuses a server of several replicas before it starts (kinds.WritesRefuser).
func (t *server) RefusesWrites() error {
	if t.replicas > 1 {
		return fmt.Errorf("cedar/server with %d replicas: each holds its own entities and a write reaches one; run one", t.replicas)
	}
	return nil
}

type updatePoster struct {
	client *http.Client
	url    string
}

func (p *updatePoster) Apply(ctx context.Context, _ int, c change.Change) change.Ack {
	if len(c.Form) == 0 {
		return change.Ack{Class: "refused", Err: errors.New("the change has no update of Cedar's entities")}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(c.Form))
	if err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	return kinds.SendWrite(p.client, req)
}
