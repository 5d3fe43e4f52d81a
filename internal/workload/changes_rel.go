package workload

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The relationship families' change streams: each change is relationships written and deleted
// (Change.Writes, Change.Deletes), as a relationship engine takes a write (OpenFGA's tuple
// writes and deletes, SpiceDB's relationship updates), made by mutating the family's world as
// its reference model holds it and diffing the world's relationships before and after. The
// model decides every input again in the mutated world, so the decisions a change sets are the
// model's, never guessed from the relationships.
//
// A stream makes toggles (an unshare, a share, a group membership removed, a document moved to
// another folder) one on top of the other, then undoes them last first, and again: each change
// flips the decisions it names, and the world is version 0's at the end of each cycle. Toggles
// are chosen from the inputs: only a mutation that flips some input's decision where it is made
// is kept, and kinds of mutation take turns.

// maxToggles bounds the distinct toggles a stream cycles through: enough that a stream reaches
// many users and objects, few enough that building it (the world's relationships once per
// candidate) stays short before the clock.
const maxToggles = 16

// maxCandidates bounds the mutations tried while choosing toggles.
const maxCandidates = 96

// relToggle is one mutation of a world that some input's decision may see, and its undoing.
type relToggle struct {
	kind string // unshare, share, membership, move, collaborator: kinds take turns
	what string // "unshare doc-00003 (viewer) from user-00012"
	undo string // what undoing it does, for messages
	do   func() (undo func())
}

// relFamily is what a relationship family's stream needs of its world.
type relFamily struct {
	// relationships writes the world, as it is now, as relationships.
	relationships func() []Relationship
	// decide is input i's decision in the world as it is now.
	decide func(i int) bool
	// candidates are the mutations that could flip input i's decision.
	candidates func(i int) []relToggle
}

// relationshipChanges is the stream of a family whose world is relationships and whose
// reference model decides over a world it can mutate: an error says when none is known.
func relationshipChanges(w *Workload, n int) ([]Change, bool, error) {
	var f relFamily
	var err error
	switch m := w.Model.(type) {
	case *GdriveWorld:
		f, err = gdriveToggles(m, w.Inputs)
	case *GithubWorld:
		f, err = githubToggles(m, w.Inputs)
	case *TinytodoWorld:
		f, err = tinytodoToggles(m, w.Inputs)
	default:
		return nil, false, nil
	}
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", w.Name, err)
	}
	cs, err := toggleStream(f, w.Inputs, n)
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", w.Name, err)
	}
	return cs, true, nil
}

// toggled is a toggle with what it does to the world's relationships and decisions, made on
// top of the toggles chosen before it.
type toggled struct {
	relToggle
	writes, deletes []Relationship
	sets, back      map[int]bool // the decisions it sets, and those its undoing sets back
}

// toggleStream chooses the toggles and writes the n changes that make them one on top of the
// other and then undo them, last first: change k of a cycle of 2K makes toggle k (k <= K) or
// undoes toggle 2K+1-k, so a toggle made early stays made for most of the cycle (long enough to
// be seen by an answer that misses it, stale) and the world is version 0's again at each
// cycle's end. Undoing last first makes each undoing flip exactly what its making flipped, so
// every change flips some decision.
func toggleStream(f relFamily, inputs []Input, n int) ([]Change, error) {
	base := f.relationships()
	held := make(map[Relationship]bool, len(base))
	for _, r := range base {
		held[r] = true
	}
	now := make([]bool, len(inputs))
	for i, in := range inputs {
		if in.Expect == Unverified {
			continue
		}
		now[i] = f.decide(i)
		// The model over the world must give the inputs' own expectations, or every version
		// after it would be judged against a different world.
		if now[i] != (in.Expect == ExpectAllow) {
			return nil, fmt.Errorf("input %d: the reference model decides %v over the world, the input expects %s", i+1, now[i], in.Expect)
		}
	}
	// Candidates by kind, in the order the inputs name them; each mutation once.
	byKind := map[string][]relToggle{}
	var kinds []string
	seen := map[string]bool{}
	tried := 0
	for i, in := range inputs {
		if in.Expect == Unverified || tried >= maxCandidates {
			continue
		}
		for _, t := range f.candidates(i) {
			if seen[t.what] || tried >= maxCandidates {
				continue
			}
			seen[t.what] = true
			tried++
			if byKind[t.kind] == nil {
				kinds = append(kinds, t.kind)
			}
			byKind[t.kind] = append(byKind[t.kind], t)
		}
	}
	// Each candidate tried on top of those chosen, kinds taking turns, until enough flip
	// something there; the world is put back, last first, once chosen.
	var chosen []toggled
	var undos []func()
	defer func() {
		for i := len(undos) - 1; i >= 0; i-- {
			undos[i]()
		}
	}()
	for round := 0; len(chosen) < maxToggles; round++ {
		left := false
		for _, k := range kinds {
			if round >= len(byKind[k]) || len(chosen) >= maxToggles {
				continue
			}
			left = true
			t := toggled{relToggle: byKind[k][round], sets: map[int]bool{}, back: map[int]bool{}}
			undo := t.do()
			after := f.relationships()
			inAfter := make(map[Relationship]bool, len(after))
			for _, r := range after {
				inAfter[r] = true
				if !held[r] {
					t.writes = append(t.writes, r)
				}
			}
			for r := range held {
				if !inAfter[r] {
					t.deletes = append(t.deletes, r)
				}
			}
			for i, in := range inputs {
				if in.Expect == Unverified {
					continue
				}
				if d := f.decide(i); d != now[i] {
					t.sets[i], t.back[i] = d, now[i]
				}
			}
			if touched := len(t.writes) + len(t.deletes); len(t.sets) == 0 || touched == 0 || touched > MaxRelationshipsPerChange {
				undo()
				continue
			}
			sortRelationships(t.deletes)
			chosen, undos, held = append(chosen, t), append(undos, undo), inAfter
			for i, d := range t.sets {
				now[i] = d
			}
		}
		if !left {
			break
		}
	}
	if len(chosen) == 0 {
		return nil, fmt.Errorf("no share, unshare, membership or move flips any input's decision: nothing to change")
	}
	out := make([]Change, 0, n)
	cycle := 2 * len(chosen)
	for k := range n {
		if p := k % cycle; p < len(chosen) {
			t := chosen[p]
			out = append(out, Change{Writes: t.writes, Deletes: t.deletes, Sets: t.sets, What: t.what})
		} else {
			t := chosen[cycle-1-p]
			out = append(out, Change{Writes: t.deletes, Deletes: t.writes, Sets: t.back, What: t.undo})
		}
	}
	return out, nil
}

// sortRelationships orders relationships by their notation, so that a change found by walking a
// map reads the same in every build of the stream.
func sortRelationships(rs []Relationship) {
	slices.SortFunc(rs, func(a, b Relationship) int { return strings.Compare(a.String(), b.String()) })
}

// MaxRelationshipsPerChange bounds the relationships one change writes and deletes together:
// OpenFGA's default limit on tuples in one Write (--max-tuples-per-write), the smaller of the
// two engines'.
const MaxRelationshipsPerChange = 100

// appQuery is an app input as indices into its world.
type appQuery struct {
	user, object int
	action       string
}

// appQueries parses the app inputs' users and objects into indices.
func appQueries(inputs []Input) ([]appQuery, error) {
	out := make([]appQuery, len(inputs))
	for i, in := range inputs {
		q, ok := in.Model.(AppRequest)
		if !ok {
			return nil, fmt.Errorf("input %d is no request of the app's model", i+1)
		}
		u, err1 := indexOf(q.User)
		o, err2 := indexOf(q.Resource)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("input %d: %s %s: ids the app does not write", i+1, q.User, q.Resource)
		}
		out[i] = appQuery{user: u, object: o, action: q.Action}
	}
	return out, nil
}

// indexOf is the index an app's id ends in: "user-00012" is 12.
func indexOf(id string) (int, error) {
	_, digits, ok := strings.Cut(id, "-")
	if !ok {
		return 0, fmt.Errorf("%q", id)
	}
	return strconv.Atoi(digits)
}

// removeFrom removes v from *list, a copy of it, and returns the undoing.
func removeFrom[T comparable](list *[]T, v T) func() {
	old := *list
	*list = slices.DeleteFunc(slices.Clone(old), func(x T) bool { return x == v })
	return func() { *list = old }
}

// addTo appends v to a copy of *list and returns the undoing.
func addTo[T comparable](list *[]T, v T) func() {
	old := *list
	*list = append(slices.Clone(old), v)
	return func() { *list = old }
}

// gdriveToggles: unshares (a user named on a document's or folder's list), memberships (a user
// leaves a group), moves (a document to the next folder) and shares (a denied reader named
// viewer of the document).
func gdriveToggles(w *GdriveWorld, inputs []Input) (relFamily, error) {
	qs, err := appQueries(inputs)
	if err != nil {
		return relFamily{}, err
	}
	f := relFamily{relationships: w.Relationships}
	f.decide = func(i int) bool { allow, _ := gdriveDecide(w, qs[i].user, qs[i].action, qs[i].object); return allow }
	f.candidates = func(i int) []relToggle {
		q := qs[i]
		u, d := q.user, q.object
		user := GdriveUser(u)
		var out []relToggle
		me := GdriveGrantee{Idx: u}
		nodes := []struct {
			name string
			node *GdriveNode
		}{{GdriveDoc(d), &w.Docs[d]}}
		for p := w.Docs[d].Parent; p >= 0; p = w.Folders[p].Parent {
			nodes = append(nodes, struct {
				name string
				node *GdriveNode
			}{GdriveFolder(p), &w.Folders[p]})
		}
		for _, n := range nodes {
			for _, l := range []struct {
				role string
				list *[]GdriveGrantee
			}{{"viewer", &n.node.Viewers}, {"editor", &n.node.Editors}} {
				if slices.Contains(*l.list, me) {
					out = append(out, relToggle{kind: "unshare", what: fmt.Sprintf("unshare %s (%s) from %s", n.name, l.role, user),
						undo: fmt.Sprintf("share %s (%s) with %s again", n.name, l.role, user), do: func() func() { return removeFrom(l.list, me) }})
				}
			}
		}
		for _, g := range w.UserGroups[u] {
			out = append(out, relToggle{kind: "membership", what: fmt.Sprintf("remove %s from %s", user, GdriveGroup(g)),
				undo: fmt.Sprintf("add %s to %s again", user, GdriveGroup(g)), do: func() func() {
					a, b := removeFrom(&w.UserGroups[u], g), removeFrom(&w.GroupUsers[g], u)
					return func() { a(); b() }
				}})
		}
		if from := w.Docs[d].Parent; len(w.Folders) > 1 {
			to := (from + 1) % len(w.Folders)
			out = append(out, relToggle{kind: "move", what: fmt.Sprintf("move %s from %s to %s", GdriveDoc(d), GdriveFolder(from), GdriveFolder(to)),
				undo: fmt.Sprintf("move %s back to %s", GdriveDoc(d), GdriveFolder(from)), do: func() func() {
					w.Docs[d].Parent = to
					return func() { w.Docs[d].Parent = from }
				}})
		}
		if inputs[i].Expect == ExpectDeny && !slices.Contains(w.Docs[d].Viewers, me) {
			out = append(out, relToggle{kind: "share", what: fmt.Sprintf("share %s (viewer) with %s", GdriveDoc(d), user),
				undo: fmt.Sprintf("unshare %s (viewer) from %s", GdriveDoc(d), user), do: func() func() { return addTo(&w.Docs[d].Viewers, me) }})
		}
		return out
	}
	return f, nil
}

// githubToggles: collaborators removed, team memberships removed, and denied users made
// collaborators with the role their action needs.
func githubToggles(w *GithubWorld, inputs []Input) (relFamily, error) {
	qs, err := appQueries(inputs)
	if err != nil {
		return relFamily{}, err
	}
	f := relFamily{relationships: w.Relationships}
	f.decide = func(i int) bool { allow, _ := githubDecide(w, qs[i].user, qs[i].action, qs[i].object); return allow }
	setCollaborator := func(r, u, level int) func() {
		m := w.Repos[r].Collaborators
		fresh := make(map[int]int, len(m)+1)
		for k, v := range m {
			fresh[k] = v
		}
		if level == 0 {
			delete(fresh, u)
		} else {
			fresh[u] = level
		}
		w.Repos[r].Collaborators = fresh
		return func() { w.Repos[r].Collaborators = m }
	}
	f.candidates = func(i int) []relToggle {
		q := qs[i]
		u, r := q.user, q.object
		user, repo := GithubUser(u), GithubRepoID(r)
		var out []relToggle
		if l, ok := w.Repos[r].Collaborators[u]; ok {
			out = append(out, relToggle{kind: "unshare", what: fmt.Sprintf("remove %s as %s of %s", user, ghRoles[l-1], repo),
				undo: fmt.Sprintf("make %s %s of %s again", user, ghRoles[l-1], repo), do: func() func() { return setCollaborator(r, u, 0) }})
		}
		for _, t := range w.UserTeams[u] {
			out = append(out, relToggle{kind: "membership", what: fmt.Sprintf("remove %s from %s", user, GithubTeamID(t)),
				undo: fmt.Sprintf("add %s to %s again", user, GithubTeamID(t)), do: func() func() {
					a, b := removeFrom(&w.UserTeams[u], t), removeFrom(&w.Teams[t].Members, u)
					return func() { a(); b() }
				}})
		}
		if need := slices.Index(ghActions, q.action) + 1; inputs[i].Expect == ExpectDeny && need > 0 {
			if _, ok := w.Repos[r].Collaborators[u]; !ok {
				out = append(out, relToggle{kind: "share", what: fmt.Sprintf("make %s %s of %s", user, ghRoles[need-1], repo),
					undo: fmt.Sprintf("remove %s as %s of %s", user, ghRoles[need-1], repo), do: func() func() { return setCollaborator(r, u, need) }})
			}
		}
		return out
	}
	return f, nil
}

// tinytodoToggles: readers and editors unshared, team memberships removed, and denied users
// made editors.
func tinytodoToggles(w *TinytodoWorld, inputs []Input) (relFamily, error) {
	qs, err := appQueries(inputs)
	if err != nil {
		return relFamily{}, err
	}
	f := relFamily{relationships: w.Relationships}
	f.decide = func(i int) bool { allow, _ := tinytodoDecide(w, qs[i].user, qs[i].action, qs[i].object); return allow }
	f.candidates = func(i int) []relToggle {
		q := qs[i]
		u, l := q.user, q.object
		user, list := TinytodoUser(u), TinytodoListID(l)
		me := TinytodoGrantee{Idx: u}
		var out []relToggle
		for _, g := range []struct {
			role string
			list *[]TinytodoGrantee
		}{{"reader", &w.Lists[l].Readers}, {"editor", &w.Lists[l].Editors}} {
			if slices.Contains(*g.list, me) {
				out = append(out, relToggle{kind: "unshare", what: fmt.Sprintf("unshare %s (%s) from %s", list, g.role, user),
					undo: fmt.Sprintf("share %s (%s) with %s again", list, g.role, user), do: func() func() { return removeFrom(g.list, me) }})
			}
		}
		for _, t := range w.UserTeams[u] {
			out = append(out, relToggle{kind: "membership", what: fmt.Sprintf("remove %s from %s", user, TinytodoTeam(t)),
				undo: fmt.Sprintf("add %s to %s again", user, TinytodoTeam(t)), do: func() func() {
					a, b := removeFrom(&w.UserTeams[u], t), removeFrom(&w.TeamUsers[t], u)
					return func() { a(); b() }
				}})
		}
		if inputs[i].Expect == ExpectDeny && !slices.Contains(w.Lists[l].Editors, me) {
			out = append(out, relToggle{kind: "share", what: fmt.Sprintf("share %s (editor) with %s", list, user),
				undo: fmt.Sprintf("unshare %s (editor) from %s", list, user), do: func() func() { return addTo(&w.Lists[l].Editors, me) }})
		}
		return out
	}
	return f, nil
}

// withRBACRelationships adds to rbac's stream (each change a JSON Patch replacing a user's
// roles) what each change is as relationships: the user's role:R#assignee@user:U written or
// deleted, as the rbac family's world holds roles (rbacRelationships).
func withRBACRelationships(base *RBACData, cs []Change, err error) ([]Change, error) {
	if err != nil {
		return nil, err
	}
	roles := map[string][]string{}
	for name, u := range base.Users {
		roles[name] = u.Roles
	}
	for k := range cs {
		var ops []struct {
			Op    string   `json:"op"`
			Path  string   `json:"path"`
			Value []string `json:"value"`
		}
		if err := json.Unmarshal(cs[k].Patch, &ops); err != nil {
			return nil, fmt.Errorf("change %d: %w", k+1, err)
		}
		for _, op := range ops {
			user, ok := strings.CutPrefix(op.Path, "/rbac/users/")
			user, ok2 := strings.CutSuffix(user, "/roles")
			if op.Op != "replace" || !ok || !ok2 {
				return nil, fmt.Errorf("change %d: %s %s is no change of a user's roles", k+1, op.Op, op.Path)
			}
			user = strings.ReplaceAll(strings.ReplaceAll(user, "~1", "/"), "~0", "~")
			assignee := func(role string) Relationship {
				return Relate(Obj("role", role), "assignee", Obj("user", user).Subject())
			}
			for _, r := range op.Value {
				if !slices.Contains(roles[user], r) {
					cs[k].Writes = append(cs[k].Writes, assignee(r))
				}
			}
			for _, r := range roles[user] {
				if !slices.Contains(op.Value, r) {
					cs[k].Deletes = append(cs[k].Deletes, assignee(r))
				}
			}
			roles[user] = op.Value
		}
	}
	return cs, nil
}
