package cedarengine

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
)

// findParentCycle returns the entities on a cycle of the parents graph, first one again at the
// end, or nil when the graph has none. The Cedar CLI refuses such a graph ("input graph has a
// cycle"): an entity in its own ancestry has no meaning for `in`, and cedar-go, which does not
// look, would decide on it. Parents the store does not hold end their path (Cedar allows them).
//
// A depth-first search over every entity, each visited once and each parent edge followed once:
// linear in the size of the graph, without recursion, so a million-entity chain costs no stack.
// Entities are started from in the order given, so the cycle reported is the same every load.
func findParentCycle(store types.EntityGetter, order []types.EntityUID) []types.EntityUID {
	const (
		unseen = iota
		onPath // on the path from the entity the search started from
		done   // every ancestor searched, no cycle through it
	)
	state := make(map[types.EntityUID]uint8, len(order))
	type frame struct {
		uid     types.EntityUID
		parents []types.EntityUID
	}
	var path []frame
	push := func(uid types.EntityUID, e types.Entity) {
		state[uid] = onPath
		path = append(path, frame{uid: uid, parents: slices.Collect(e.Parents.All())})
	}
	for _, root := range order {
		if state[root] != unseen {
			continue
		}
		e, ok := store.Get(root)
		if !ok {
			continue
		}
		push(root, e)
		for len(path) > 0 {
			top := &path[len(path)-1]
			if len(top.parents) == 0 {
				state[top.uid] = done
				path = path[:len(path)-1]
				continue
			}
			p := top.parents[0]
			top.parents = top.parents[1:]
			e, ok := store.Get(p)
			if !ok {
				continue
			}
			switch state[p] {
			case onPath:
				i := slices.IndexFunc(path, func(f frame) bool { return f.uid == p })
				cycle := make([]types.EntityUID, 0, len(path)-i+1)
				for _, f := range path[i:] {
					cycle = append(cycle, f.uid)
				}
				return append(cycle, p)
			case unseen:
				push(p, e)
			}
		}
	}
	return nil
}

// cycleError names the file and the entities on the cycle, starting from the one the file
// gives first, as the user would look for them.
func cycleError(file string, cycle []types.EntityUID, placeOf map[types.EntityUID]entityPlace) error {
	ring := cycle[:len(cycle)-1]
	first := 0
	for i, uid := range ring {
		if placeOf[uid].line == 0 {
			continue
		}
		if placeOf[ring[first]].line == 0 || placeOf[uid].line < placeOf[ring[first]].line ||
			placeOf[uid].line == placeOf[ring[first]].line && placeOf[uid].column < placeOf[ring[first]].column {
			first = i
		}
	}
	names := make([]string, 0, len(cycle))
	for i := range ring {
		names = append(names, ring[(first+i)%len(ring)].String())
	}
	names = append(names, names[0])
	where := file
	if p := placeOf[ring[first]]; p.line > 0 {
		where = fmt.Sprintf("%s:%d:%d", file, p.line, p.column)
	}
	msg := fmt.Sprintf("parent cycle: %s (an entity cannot be its own ancestor; the Cedar CLI refuses this graph too)", strings.Join(names, " -> "))
	if where == "" {
		return errors.New(msg)
	}
	return fmt.Errorf("%s: %s", where, msg)
}

// sortedUIDs are the map's entities in the order of their names, for a search that finds the
// same cycle every time.
func sortedUIDs(m cedar.EntityMap) []types.EntityUID {
	uids := make([]types.EntityUID, 0, len(m))
	for uid := range m {
		uids = append(uids, uid)
	}
	slices.SortFunc(uids, func(a, b types.EntityUID) int { return strings.Compare(a.String(), b.String()) })
	return uids
}

// checkAcyclic refuses an entity store whose parents form a cycle, naming the file that gave
// it: the entities file, or the schema when its actions alone make the cycle.
func (e *Engine) checkAcyclic(entities, sch *Source, places []entityPlace) error {
	order := make([]types.EntityUID, 0, len(e.entities))
	placeOf := make(map[types.EntityUID]entityPlace, len(places))
	for _, p := range places {
		order = append(order, p.uid)
		placeOf[p.uid] = p
	}
	if e.schema != nil {
		actions := make([]types.EntityUID, 0, len(e.schema.Actions))
		for uid := range e.schema.Actions {
			if _, fromFile := placeOf[uid]; !fromFile {
				actions = append(actions, uid)
			}
		}
		slices.SortFunc(actions, func(a, b types.EntityUID) int { return strings.Compare(a.String(), b.String()) })
		order = append(order, actions...)
	}
	cycle := findParentCycle(e.entities, order)
	if cycle == nil {
		return nil
	}
	file := ""
	for _, uid := range cycle {
		if _, ok := placeOf[uid]; ok && entities != nil {
			file = entities.Name
		}
	}
	if file == "" && sch != nil {
		file = sch.Name
	}
	return cycleError(file, cycle, placeOf)
}
