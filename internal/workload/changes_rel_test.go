package workload

import (
	"slices"
	"strings"
	"testing"
)

// The relationship families' streams: each change writes relationships the world lacks and
// deletes ones it holds (so an engine that refuses a duplicate or a missing tuple takes them),
// flips some input's decision, and every second change brings the world and every decision
// back to version 0's. Building the stream leaves the family's world as it was.
func TestRelationshipChanges(t *testing.T) {
	for _, name := range []string{"rbac", "rbac-data-10", "gdrive-50", "github-50", "tinytodo-50"} {
		t.Run(name, func(t *testing.T) {
			w, err := Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			before := slices.Clone(w.Relationships.Relationships)
			cs, err := BuiltinChanges(w, 60)
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != 60 {
				t.Fatalf("%d changes, want 60", len(cs))
			}
			if !slices.Equal(before, w.Relationships.Relationships) {
				t.Fatal("the workload's relationships changed")
			}
			if got := w.Model; got != nil {
				if rels, ok := got.(interface{ Relationships() []Relationship }); ok && !slices.Equal(rels.Relationships(), before) {
					t.Fatal("building the stream left the world mutated")
				}
			}
			world := map[Relationship]bool{}
			for _, r := range before {
				world[r] = true
			}
			now := make([]bool, len(w.Inputs))
			for i, in := range w.Inputs {
				now[i] = in.Expect == ExpectAllow
			}
			whats := map[string]bool{}
			backs := 0
			for k, c := range cs {
				if len(c.Writes)+len(c.Deletes) == 0 {
					t.Fatalf("change %d (%s) writes and deletes nothing", k+1, c.What)
				}
				for _, r := range c.Deletes {
					if !world[r] {
						t.Fatalf("change %d (%s) deletes %s, which the world does not hold", k+1, c.What, r)
					}
					delete(world, r)
				}
				for _, r := range c.Writes {
					if world[r] {
						t.Fatalf("change %d (%s) writes %s, which the world holds", k+1, c.What, r)
					}
					world[r] = true
				}
				flipped := 0
				for i, allow := range c.Sets {
					if allow != now[i] {
						flipped++
						now[i] = allow
					}
				}
				// rbac's stream (changes.go) revokes roles some of whose grants no input needs;
				// the toggle families keep only mutations that flip something.
				if flipped == 0 && !strings.HasPrefix(name, "rbac") {
					t.Errorf("change %d (%s) flips no decision", k+1, c.What)
				}
				whats[c.What] = true
				// Whenever the world is version 0's again, so is every decision.
				if len(world) == len(before) && holdsAll(world, before) {
					backs++
					for i, in := range w.Inputs {
						if in.Expect != Unverified && now[i] != (in.Expect == ExpectAllow) {
							t.Fatalf("after change %d (%s), input %d is %v, not its first decision", k+1, c.What, i+1, now[i])
						}
					}
				}
			}
			if backs == 0 {
				t.Error("the world never came back to version 0's")
			}
			if len(whats) < 10 {
				t.Errorf("%d distinct changes over 60: the stream should reach many users and objects", len(whats))
			}
		})
	}
}

func holdsAll(world map[Relationship]bool, rs []Relationship) bool {
	for _, r := range rs {
		if !world[r] {
			return false
		}
	}
	return true
}
